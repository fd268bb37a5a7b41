"""Stage 2: prove each case with the repository's own tests (SPEC section 4)."""

from ._api import ValidateSummary, resolve_config, validate_corpus

__all__ = ["ValidateSummary", "resolve_config", "validate_corpus"]
