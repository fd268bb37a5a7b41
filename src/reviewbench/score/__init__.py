"""Stage 4: match findings to gold, compute metrics with intervals, decide (SPEC 8)."""

from ._api import ScoreOptions, eligible_cases, score_run
from .gates import Gates, decide, load_gates
from .match import match_run

__all__ = ["Gates", "ScoreOptions", "decide", "eligible_cases", "load_gates", "match_run", "score_run"]
