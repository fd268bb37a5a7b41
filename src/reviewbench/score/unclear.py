"""Unclear claims: out of precision's denominator, and the sensitivity beside it.

A comment people (or a calibrated judge) labelled ``unclear`` is neither a true finding nor
a false positive, so ``precision`` leaves it out of its denominator (``metrics.py``) and the
score reports how many there were with two bounds: precision with every unclear claim
counted false, then with every one counted true. :func:`with_unclear` is that arithmetic,
the one copy shared by the score (per-cluster sums, resampled) and the report's labels
section (``evidence/figures.py``, over labelled comments only). The score re-runs the
condition's registered decision at each bound and flags it when the two differ
(``_api.py``; docs/SCORING.md, "Unclear claims").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..evidence.figures import with_unclear

__all__ = ["UNCLEAR_METRICS", "decision_summary", "variant_tables", "with_unclear"]

#: The rates an unclear claim is left out of (the identified bound and its located bound).
UNCLEAR_METRICS = ("precision", "located_precision")


def _cell(num: float, den: float) -> dict[str, Any]:
    value = round(num / den, 6) if den > 0 else None
    return {"value": value, "num": int(num) if float(num).is_integer() else num,
            "den": int(den) if float(den).is_integer() else den}  # fmt: skip


def variant_tables(metrics: Mapping[str, dict[str, Any]], breakdown: Mapping[str, dict[str, Any]], rows: Iterable[tuple[Any, ...]],
                   *, as_true: bool, interval: tuple[float | None, float | None]) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
    """One condition's gated metrics and breakdown with its unclear claims put back.

    Args:
        rows: ``ConditionTally.unclear``: (cluster, stratum, unclear, unclear credited).
        interval: the resampled interval of the precision variant (the gates read its width).
    """
    rows = list(rows)
    total = sum(r[2] for r in rows)
    out = dict(metrics)
    for name in UNCLEAR_METRICS:
        m = metrics[name]
        num, den = with_unclear(float(m["num"]), float(m["den"]), float(total), as_true=as_true)
        lo, hi = interval if name == "precision" else (m.get("lo"), m.get("hi"))
        out[name] = {**m, **_cell(num, den), "lo": lo, "hi": hi}
    by_stratum: dict[str, float] = {}
    for _cluster, stratum, n, _credited in rows:
        by_stratum[stratum] = by_stratum.get(stratum, 0.0) + n
    strata = {key: dict(cells) for key, cells in breakdown.get("stratum", {}).items()}
    for stratum, n in by_stratum.items():
        cells = strata.setdefault(stratum, {})
        for name in UNCLEAR_METRICS:
            cell = cells.get(name, {"num": 0, "den": 0})
            cells[name] = _cell(*with_unclear(float(cell["num"]), float(cell["den"]), n, as_true=as_true))
    return out, {**breakdown, "stratum": strata}


def decision_summary(decision: Mapping[str, Any]) -> dict[str, Any]:
    """What the sensitivity keeps of a re-run decision: enough to say whether it changed."""
    return {"authority": decision["authority"], "tier": decision["tier"], "status": decision["status"]}
