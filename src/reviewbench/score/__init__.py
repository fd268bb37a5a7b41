"""Stage 4: judge every finding, compute metrics with intervals, decide (SPEC 8)."""

from ._api import ScoreOptions, eligible_cases, score_run
from .gates import Gates, decide, load_gates
from .match import match_run
from .registry import METRICS, RATE_METRICS
from .result import ScoreResult
from .verdicts import Evidence, FindingVerdict, VerdictOverride

__all__ = [
    "METRICS",
    "RATE_METRICS",
    "Evidence",
    "FindingVerdict",
    "Gates",
    "ScoreOptions",
    "ScoreResult",
    "VerdictOverride",
    "decide",
    "eligible_cases",
    "load_gates",
    "match_run",
    "score_run",
]
