"""Stage 4: judge every finding, compute metrics with intervals, decide; compare
two run directories and gate a new run on a baseline (``compare.py``, ``gate.py``).

Names load on first use: ``run`` and ``register`` read the gates file through
:mod:`.gates` without paying for scipy, which scoring itself needs.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:  # the type checker sees the names; the interpreter loads them on first use
    from ._api import eligible_cases, score, score_run, tally_runs
    from .compare import CompareOptions, compare_runs
    from .comparison import RunComparison
    from .gate import GateResult, gate_runs, load_gate_rules
    from .gates import Gates, decide, load_gates
    from .inputs import ScoreOptions, ScoringInputs, load_inputs
    from .match import match_run
    from .registry import METRICS, RATE_METRICS
    from .result import ScoreResult
    from .verdicts import Evidence, FindingVerdict, VerdictOverride

__all__ = [
    "METRICS",
    "RATE_METRICS",
    "CompareOptions",
    "Evidence",
    "FindingVerdict",
    "GateResult",
    "Gates",
    "RunComparison",
    "ScoreOptions",
    "ScoreResult",
    "ScoringInputs",
    "VerdictOverride",
    "compare_runs",
    "decide",
    "eligible_cases",
    "gate_runs",
    "load_gate_rules",
    "load_gates",
    "load_inputs",
    "match_run",
    "score",
    "score_run",
    "tally_runs",
]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "ScoreOptions": ".inputs", "ScoringInputs": ".inputs", "load_inputs": ".inputs", "score": "._api", "eligible_cases": "._api", "score_run": "._api", "tally_runs": "._api",
    "CompareOptions": ".compare", "compare_runs": ".compare", "RunComparison": ".comparison",
    "GateResult": ".gate", "gate_runs": ".gate", "load_gate_rules": ".gate",
    "Gates": ".gates", "decide": ".gates", "load_gates": ".gates",
    "match_run": ".match",
    "METRICS": ".registry", "RATE_METRICS": ".registry",
    "ScoreResult": ".result",
    "Evidence": ".verdicts", "FindingVerdict": ".verdicts", "VerdictOverride": ".verdicts",
})  # fmt: skip
