"""Stage 1: history → cases."""

from ._api import MineSummary, mine_corpus

__all__ = ["MineSummary", "mine_corpus"]
