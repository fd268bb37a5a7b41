"""Stage 4: judge every finding, compute metrics with intervals, decide (SPEC 8).

Names load on first use: ``run`` and ``register`` read the gates file through
:mod:`.gates` without paying for scipy, which scoring itself needs.
"""

from .._lazy import lazy_exports as _lazy_exports

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

__getattr__, __dir__ = _lazy_exports(globals(), {
    "ScoreOptions": "._api", "eligible_cases": "._api", "score_run": "._api",
    "Gates": ".gates", "decide": ".gates", "load_gates": ".gates",
    "match_run": ".match",
    "METRICS": ".registry", "RATE_METRICS": ".registry",
    "ScoreResult": ".result",
    "Evidence": ".verdicts", "FindingVerdict": ".verdicts", "VerdictOverride": ".verdicts",
})  # fmt: skip
