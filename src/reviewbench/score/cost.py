"""Cost per run and per identified defect, from a price table (``score --prices``).

A run's cost is its reported tokens at the price of the model that answered it (the model
it asked for when none was returned). Cost per run is Σcost / priced runs; cost per
identified defect is Σcost / identified (run, defect) pairs, every priced run of the
condition on the analysed cases paying (controls and mirrors included: they are the price
of the restraint the figures also measure). Both are ratios of per-cluster sums, resampled
by case cluster like every rate. Nothing is guessed: a condition with a run whose model the
table does not price gets no cost at all (the models are named); runs that reported no usage
(a timeout, a tool without tokens) are left out and counted, and the figures are then
marked ``complete: false``, a lower bound; no identified defect leaves cost per defect
undefined, never infinite or zero. Every figure is a list-price estimate (``basis``), and none
is made for a plan-funded condition or a forge bot (``refused``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from ..config.prices import PriceTable
from ..config.reviewers import capabilities_of
from ..errors import UsageError
from ..store.runs import RunRow
from .metrics import CaseInfo, ConditionTally
from .stats import percentile_interval, resample_ratios

__all__ = ["condition_cost", "load_prices", "refusal", "run_cost"]


def load_prices(path: Path) -> PriceTable:
    """The price table at ``path``.

    Raises:
        UsageError: unreadable, not TOML, or a field wrong (named).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"price table {path} cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        return PriceTable.model_validate(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: invalid TOML: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError(f"{path}: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None


def run_cost(run: RunRow, table: PriceTable) -> float | None:
    """The run's cost, or None when its model is not priced or it reported no usage."""
    model = run.model_returned or run.model_requested
    price = table.prices.get(model) if model else None
    if price is None or (run.tokens_in is None and run.tokens_out is None):
        return None
    return ((run.tokens_in or 0) * price.input_per_mtok + (run.tokens_out or 0) * price.output_per_mtok) / 1e6


def _figure(num: np.ndarray, den: np.ndarray, samples: np.ndarray, k: int) -> dict[str, Any]:
    total_n, total_d = float(num.sum()), float(den.sum())
    lo, hi = percentile_interval(samples[:, k : k + 1])
    scored = total_d > 0 and not np.isnan(lo[0])
    return {"value": round(total_n / total_d, 6) if total_d > 0 else None, "num": round(total_n, 6),
            "den": int(total_d), "lo": round(float(lo[0]), 6) if scored else None,
            "hi": round(float(hi[0]), 6) if scored else None}  # fmt: skip


def refusal(name: str, runs: Sequence[RunRow], table: PriceTable) -> str | None:
    """Why no cost may be estimated for condition ``name`` (None: it may): a plan pays for it,
    or it is a forge bot, whose cost is its plan's and whose tokens no one reports."""
    if name in table.plan_funded:
        return "plan-funded (the price table's plan_funded): a plan or seat pays for it, not its tokens"
    if any(capabilities_of(str(r.params.get("kind"))).opens_pull_requests for r in runs):
        return "a forge bot: its plan pays for it and it reports no tokens"
    return None


def condition_cost(name: str, runs: Sequence[RunRow], cases: Mapping[str, CaseInfo], tally: ConditionTally,
                   table: PriceTable, resamples: int, seed: int) -> dict[str, Any]:  # fmt: skip
    """``{currency, complete, total, per_run, per_identified_defect, unpriced_models,
    runs_without_usage, basis, refused}`` of condition ``name``'s runs on ``cases``: a
    list-price estimate; the figures None when a model is not priced, no run reported usage,
    or the estimate is refused (:func:`refusal`)."""
    on_cases = [r for r in runs if r.case_id in cases]
    counted = [r for r in on_cases if r.tokens_in is not None or r.tokens_out is not None]
    unpriced = sorted({str(m) for r in counted if (m := r.model_returned or r.model_requested) not in table.prices})
    no_usage = len(on_cases) - len(counted)
    refused = refusal(name, runs, table)
    out: dict[str, Any] = {"currency": table.currency, "complete": no_usage == 0, "unpriced_models": unpriced,
                 "runs_without_usage": no_usage, "total": None, "per_run": None, "per_identified_defect": None,
                 "basis": "list-price estimate"}  # fmt: skip
    if refused is not None:
        return {**out, "unpriced_models": [], "refused": refused}
    if unpriced or not counted:
        return out
    clusters = sorted({cases[r.case_id].cluster for r in counted})
    index = {c: i for i, c in enumerate(clusters)}
    cost, priced, identified = np.zeros(len(clusters)), np.zeros(len(clusters)), np.zeros(len(clusters))
    for run in counted:
        i = index[cases[run.case_id].cluster]
        cost[i] += run_cost(run, table) or 0.0
        priced[i] += 1
    for metric, cluster, num, _den, *_ in tally.rows:
        if metric == "defect_recall" and cluster in index:
            identified[index[cluster]] += num
    samples = resample_ratios(np.column_stack([cost, cost]), np.column_stack([priced, identified]), resamples, seed)
    out.update(total=round(float(cost.sum()), 6), per_run=_figure(cost, priced, samples, 0),
               per_identified_defect=_figure(cost, identified, samples, 1))
    return out
