"""Gates: turning scores into a bounded decision, fixed before the results are seen.

A gates file (TOML, ``default_gates.toml`` unless ``--gates``) lists tiers of authority
tried in order (the first whose every condition holds is granted), vetoes that override
them, and the evidence a verdict needs. The decision always lists what is *not*
permitted: the granted tier's own exclusions, every use that only a higher tier would
permit, and the uses never permitted at all.

Every metric a gates file names must be in the registry (``score/registry.py``); a gate on
a bounded metric (``defect_recall``, ``precision``) passes only if its identified value passes,
fails if its upper bound fails, and otherwise leaves the decision at **needs labels**. A
tier may require an evidence level (``min_evidence``); a tier whose evidence the condition
lacks is skipped, never granted. No gates file may grant approval, merge rights or security
sign-off. Comparative gates (``[[compare]]``) compare two conditions on the same cases.

A condition with ``bound = "interval"`` is judged on its 95% interval's far end (a ceiling on
the high end, a floor on the low end): a noise ceiling is not met by luck on a few clean
cases. People's figures (``actionability_rate``, ``triage_minutes``, ``triage_minutes_q3``)
come from the labels the caller passes; without labels such a check is ``not_scored`` and
never passes. Vetoes are decided first, before any check of the evidence: a veto only
takes authority away, and a reviewer that flags everything must read "vetoed" however few
its cases.

Two analysis rules are registered in the same file, so the table's hash fixes them before the
runs: ``[stability] k`` (``recall_k_of_n``: found in at least k of n repetitions) and
``[boilerplate] patterns`` (false positives that are summary text, left out of precision).
"""

from __future__ import annotations

import hashlib
import math
import operator
import re
import tomllib
from collections.abc import Collection, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..config.gates import Compare, Condition, Gates, Tier
from ..errors import UsageError
from .registry import DEPRECATED, MetricKind, check_metric_name, spec
from .result import LabelFigures
from .verdicts import Evidence

__all__ = ["Compare", "Gates", "decide", "evaluate_compare", "label_metrics", "load_gates", "parse_gates", "veto_outcome",
           "wilson"]

_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
#: Uses no measurement can justify: a gates file that permits them is refused.
_FORBIDDEN = re.compile(r"approv|merge|sign[- ]?off", re.IGNORECASE)
_Z95 = 1.959964  # the standard normal's 97.5th percentile: a two-sided 95% interval


def wilson(num: float, den: float) -> tuple[float, float]:
    """The Wilson score 95% interval of ``num / den`` (``den`` > 0): people's rates have no
    case resamples, and the Wilson interval stays inside [0, 1] and is not empty at 0 or 1."""
    p, z2 = num / den, _Z95 * _Z95
    centre = (p + z2 / (2 * den)) / (1 + z2 / den)
    half = _Z95 * math.sqrt(p * (1 - p) / den + z2 / (4 * den * den)) / (1 + z2 / den)
    return round(max(0.0, centre - half), 6), round(min(1.0, centre + half), 6)


def label_metrics(figures: LabelFigures | None) -> dict[str, dict[str, Any]]:
    """People's figures of one condition as the gates read them (``value``, ``num``, ``den``,
    ``lo``, ``hi``); empty without labels, so that every gate on them is not scored."""
    if figures is None:
        return {}
    rate, triage = figures.actionability_rate, figures.triage_minutes
    num, den = rate.numerator, rate.denominator
    lo, hi = wilson(num, den) if den else (None, None)
    runs = triage.runs
    return {
        "actionability_rate": {"value": rate.value if den else None, "num": num, "den": den, "lo": lo, "hi": hi},
        "triage_minutes": {"value": triage.median, "num": None, "den": runs, "lo": None, "hi": None},
        "triage_minutes_q3": {"value": triage.q3, "num": None, "den": runs, "lo": None, "hi": None},
    }


def veto_outcome(outcome: str) -> str:
    """How a check's ``pass``/``fail`` reads for a veto, a condition that must not hold:
    it ``triggers`` or stays ``clear`` (other outcomes unchanged)."""
    return {"pass": "triggers", "fail": "clear"}.get(outcome, outcome)


def _check_names(gates: Gates, where: str, strata: Collection[str] | None) -> None:
    for group in (gates.veto, gates.tier, [gates.fallback]):
        for tier in group:
            for c in tier.when:
                check_metric_name(c.metric, f"{where}: {tier.name}", strata)
            for use in tier.permitted:
                if _FORBIDDEN.search(use):
                    raise UsageError(f"{where}: {tier.name} permits {use!r}: approval, merge rights and security "
                                     "sign-off can never be granted by a benchmark")  # fmt: skip
            for c in tier.when:
                _check_bound(c, f"{where}: {tier.name}")
                if c.diff is not None:
                    _not_per_rule(c.metric, f"{where}: {tier.name}")
    for compare in gates.compare:
        check_metric_name(compare.metric, f"{where}: compare {compare.name}", strata)
        _not_per_rule(compare.metric, f"{where}: compare {compare.name}")


def _not_per_rule(metric: str, where: str) -> None:
    """Per-rule recall is a condition's own figure: its eligible pairs depend on the
    condition's guidance, so two conditions have no shared pairs to difference."""
    if "@rule:" in metric:
        raise UsageError(f"{where}: {metric} cannot be compared between conditions (each counts only the rule "
                         "defects its own guidance reaches, so there is no paired difference): gate it on each "
                         "condition instead, in a tier's when")  # fmt: skip


def _check_bound(c: Condition, where: str) -> None:
    """``bound = "interval"`` only where scoring gives the gated figure a 95% interval."""
    if c.bound != "interval":
        return
    why = None
    if c.diff is not None:
        why = "a comparative gate is always judged on its paired interval"
    elif spec(c.metric).upper is not None:
        why = f"{c.metric} is judged on its identified and located bounds"
    elif "@" in c.metric:
        why = "a stratum's figure has no interval"
    elif c.metric.startswith("triage_minutes"):
        why = "triage minutes are quantiles without an interval: gate triage_minutes_q3 for a cautious ceiling"
    if why:
        raise UsageError(f"{where}: {c.metric} with bound = \"interval\": {why}")


def load_gates(path: Path | None, strata: Collection[str] | None = None) -> tuple[Gates, str, str]:
    """The gates, their source text and its SHA-256 (the built-in table when ``path`` is None).

    Args:
        strata: the corpus's strata, when it is at hand: a gate on ``metric@stratum`` must
            name one of them or a built-in stratum (a typo is refused, not left to fail).

    Raises:
        UsageError: the file is missing, not TOML, not a gates table (field named), names
            an unknown metric (the registered names listed), or permits what never may be.
    """
    if path is None:
        text = resources.files("reviewbench.score").joinpath("default_gates.toml").read_text("utf-8")
        where = "built-in gates"
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"gates file {path} cannot be read: {exc}") from None
        where = str(path)
    return parse_gates(text, where, strata), text, hashlib.sha256(text.encode()).hexdigest()


def parse_gates(text: str, where: str, strata: Collection[str] | None = None) -> Gates:
    """The gates of TOML ``text`` (``where`` names it in errors), checked as :func:`load_gates`
    checks a file: also a registration's own copy of its table.

    Raises:
        UsageError: as :func:`load_gates`.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{where}: invalid TOML: {exc}") from None
    try:
        gates = Gates.model_validate(data)
    except ValidationError as exc:
        from ..config.experiment import validation_line

        raise UsageError(f"{where}: {validation_line(exc, Gates, data)}") from None
    _check_names(gates, where, strata)
    return gates


def _lookup(metrics: dict[str, dict[str, Any]], breakdown: dict[str, Any], name: str) -> dict[str, Any]:
    base, _, stratum = name.partition("@")
    if stratum.startswith("rule:"):  # per-rule figures are metrics of their own (score/rules.py)
        return metrics.get(name, {})
    if stratum:
        base = DEPRECATED.get(base, base)  # strata are tallied under the new names only
        found: dict[str, Any] = breakdown.get("stratum", {}).get(stratum, {}).get(base, {})
        return found
    return metrics.get(base, {})


def _check(condition: Condition, metrics: dict[str, dict[str, Any]], breakdown: dict[str, Any],
           comparative: Mapping[Condition, dict[str, Any]], attainable: Mapping[str, float | None] | None = None,
           labels: Mapping[str, dict[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    """Three-valued: ``passed`` True/False, or None when only labels can settle it.

    ``labels``: people's figures (:func:`label_metrics`); a gate on one without labels is
    ``not_scored`` (``passed`` None). ``bound = "interval"``: ``status`` pass, fail or
    ``inconclusive`` (the interval straddles the threshold: not passed).

    ``attainable``: per bounded metric name, the highest value the comments still on
    automatic evidence could give it (``score/bounds.py``); it replaces the located bound
    when lower (labels already in can keep a located comment from ever identifying).

    A comparative condition passes only when its paired interval clears the threshold
    (``status`` pass); ``inconclusive`` (the interval straddles it) does not pass.
    """
    if condition.diff is not None:
        result = comparative[condition]
        return {"metric": condition.metric, "op": condition.op, "threshold": condition.value,
                "observed": result["observed"], "passed": result["status"] == "pass", "status": result["status"],
                "diff": list(condition.diff), "lo": result["lo"], "hi": result["hi"]}  # fmt: skip
    label = spec(condition.metric).kind is MetricKind.LABEL
    figure = (labels or {}).get(condition.metric, {}) if label else _lookup(metrics, breakdown, condition.metric)
    observed = figure.get("value")
    test = _OPS[condition.op]
    upper_name = spec(condition.metric).upper
    out = {"metric": condition.metric, "op": condition.op, "threshold": condition.value, "observed": observed}
    if label and observed is None:  # no labels: not scored, and only labels can settle it
        out.update(passed=None, status="not_scored")
        return out
    if condition.bound == "interval" and observed is not None:
        lo, hi = figure.get("lo"), figure.get("hi")
        lo, hi = (observed, observed) if lo is None or hi is None else (lo, hi)
        out.update(lo=lo, hi=hi)
        # The end that must clear the threshold, and the one whose failure fails the gate.
        must, may = (lo, hi) if condition.op in (">", ">=") else (hi, lo)
        status = "pass" if test(must, condition.value) else ("fail" if not test(may, condition.value) else "inconclusive")
        out.update(passed=status == "pass", status=status)  # inconclusive: more cases, not labels, would settle it
        return out
    if upper_name is None or observed is None:
        out["passed"] = observed is not None and test(observed, condition.value)
        return out
    suffix = condition.metric.partition("@")[1:]
    upper = _lookup(metrics, breakdown, upper_name + "".join(suffix)).get("value")
    reachable = (attainable or {}).get(condition.metric)
    if upper is not None and reachable is not None:
        upper = min(upper, reachable)
    out["upper"] = upper
    lower_passes = test(observed, condition.value)
    upper_passes = upper is not None and test(upper, condition.value)
    if condition.op in (">", ">="):
        out["passed"] = True if lower_passes else (False if not upper_passes else None)
    else:  # the upper bound is the harder one to keep below a threshold
        out["passed"] = True if upper_passes else (False if not lower_passes else None)
    return out


def _beyond_reach(c: Condition, check: dict[str, Any], metrics: dict[str, dict[str, Any]],
                  breakdown: dict[str, Any]) -> bool:  # fmt: skip
    """A failed check that more cases could not turn: the favourable end of the metric's
    interval (and of its located upper bound, which labels could reach) fails too."""
    if check.get("status") == "fail":
        return True
    if check.get("passed") is not False or c.diff is not None or spec(c.metric).kind is MetricKind.LABEL:
        return False
    upper = spec(c.metric).upper
    suffix = "".join(c.metric.partition("@")[1:])
    figures = [_lookup(metrics, breakdown, c.metric), *([_lookup(metrics, breakdown, upper + suffix)] if upper else [])]
    rising = c.op in (">", ">=")
    ends = [float(e) for f in figures if (e := f.get("hi" if rising else "lo")) is not None]
    if not ends:
        return False
    return not _OPS[c.op](max(ends) if rising else min(ends), c.value)


def _short_of_evidence(gates: Gates, used: set[str], metrics: dict[str, dict[str, Any]], breakdown: dict[str, Any],
                       valid_defect_cases: int, valid_controls: int | None) -> str | None:  # fmt: skip
    """Why the evidence is too thin to decide (too few cases or controls, an unmeasured
    metric, too wide an interval), or None."""
    if valid_defect_cases < gates.min_defect_cases:
        return f"{valid_defect_cases} valid defect cases (< {gates.min_defect_cases})"
    if valid_controls is not None and valid_controls < gates.min_controls:
        return f"no valid controls ({valid_controls} < {gates.min_controls} required)"
    for name in sorted(used):
        if spec(name).kind is MetricKind.LABEL:
            continue  # people's figures: a check "not_scored" without labels, never short evidence
        m = _lookup(metrics, breakdown, name)
        lo, hi = m.get("lo"), m.get("hi")
        if m.get("value") is None and spec(name).over_findings:
            continue  # no findings at all: the gate fails, on the reviewer's own silence
        if m.get("value") is None:
            return f"{name} could not be measured (denominator 0)"
        if lo is not None and hi is not None and hi - lo > gates.max_interval_width:
            return f"{name} interval [{lo:.2f}, {hi:.2f}] is wider than {gates.max_interval_width:g}"
    return None


def decide(gates: Gates, metrics: dict[str, dict[str, Any]], valid_defect_cases: int, *, breakdown: dict[str, Any] | None = None,
           valid_controls: int | None = None, evidence: Evidence = Evidence.AUTOMATIC,
           labels_needed: int = 0, comparative: Mapping[Condition, dict[str, Any]] | None = None,
           attainable: Mapping[str, float | None] | None = None, labels: LabelFigures | None = None) -> dict[str, Any]:  # fmt: skip
    """The decision for one condition's metrics (the JSON contract's ``decision``).

    ``status``: ``vetoed`` (decided first: a veto holds), ``insufficient`` (too few cases or
    controls, or too wide an interval), ``granted`` (a tier's gates pass), ``not_earned``
    (none do: the fallback) or ``needs_labels`` (a bounded gate straddles its threshold,
    ``labels_needed`` findings, located but not identified on automatic evidence, would
    settle it; or a gate on people's figures is not scored for want of labels).

    Args:
        labels: the condition's figures from people's labels, None without labels.
    """
    breakdown = breakdown or {}
    comparative = comparative or {}
    people = label_metrics(labels)
    used = {c.metric for t in (*gates.veto, *gates.tier) for c in t.when if c.diff is None}
    checks = {t.name: [_check(c, metrics, breakdown, comparative, attainable, people) for c in t.when]
              for t in (*gates.veto, *gates.tier)}  # fmt: skip
    # A veto or the fallback withholds every tier's uses; the fallback's own (its output read
    # as one more opinion) is no authority, so it is never listed as withheld.
    tier_permitted = [p for t in gates.tier for p in t.permitted]

    def verdict(tier: Tier, status: str, reason: str | None = None, labels: int = 0) -> dict[str, Any]:
        higher: list[str] = []
        for t in gates.tier:
            if t.name == tier.name:
                break
            higher.extend(t.permitted)
        not_permitted = [*tier.not_permitted, *higher, *gates.never_permitted]
        if tier.name not in {t.name for t in gates.tier}:  # a veto or the fallback
            not_permitted += [p for p in tier_permitted if p not in tier.permitted]
        return {
            "authority": tier.authority or tier.name,
            "tier": tier.name,
            "status": status,
            "labels_needed": labels,
            "evidence": evidence.value,
            "permitted": list(tier.permitted),
            "not_permitted": list(dict.fromkeys(not_permitted)),
            "gates": checks,
            "vetoes": [v.name for v in gates.veto],
            "reason": reason,
        }

    # A veto only takes authority away: decided before the evidence is weighed, so that a
    # condition flagging every file reads "vetoed" however few its cases or wide its intervals.
    for veto in gates.veto:
        if checks[veto.name] and all(c["passed"] is True for c in checks[veto.name]):
            return verdict(veto, "vetoed", f"veto {veto.name}")
    insufficient = _short_of_evidence(gates, used, metrics, breakdown, valid_defect_cases, valid_controls)
    enough_cases = valid_defect_cases >= gates.min_defect_cases and (valid_controls is None
                                                                     or valid_controls >= gates.min_controls)
    if insufficient and enough_cases and all(
            any(_beyond_reach(c, check, metrics, breakdown) for c, check in zip(t.when, checks[t.name], strict=True))
            for t in gates.tier):  # fmt: skip
        insufficient = None  # every tier fails at its interval's favourable end: more cases would not help
    if insufficient:
        result = verdict(gates.fallback, "insufficient", insufficient)
        result["authority"] = "insufficient evidence"
        return result
    skipped: list[str] = []
    for tier in gates.tier:
        results = [c["passed"] for c in checks[tier.name]]
        if any(r is False for r in results):
            continue
        if evidence.rank < tier.min_evidence.rank:
            skipped.append(f"{tier.name} needs {tier.min_evidence.value} evidence (have {evidence.value})")
            continue
        if any(r is None for r in results):
            unscored = [c["metric"] for c in checks[tier.name] if c.get("status") == "not_scored"]
            why = (f"{', '.join(unscored)} not scored (no labels)" if unscored
                   else "the located and identified bounds straddle a threshold")  # fmt: skip
            reason = "; ".join([*skipped, f"{tier.name}: {why}"])
            return verdict(gates.fallback, "needs_labels", reason, labels_needed)
        return verdict(tier, "granted", "; ".join(skipped) or None)
    return verdict(gates.fallback, "not_earned", "; ".join(skipped) or "no tier's gates pass")


def evaluate_compare(gate: Compare, diff: float | None, lo: float | None, hi: float | None) -> dict[str, Any]:
    """A comparative gate on a paired difference and its interval: pass, fail or inconclusive."""
    out = {"name": gate.name, "metric": gate.metric, "diff": list(gate.diff), "op": gate.op, "value": gate.value,
           "margin": gate.margin, "observed": diff, "lo": lo, "hi": hi}  # fmt: skip
    if lo is None or hi is None:
        out["status"] = "inconclusive"
        return out
    if gate.margin is not None:  # non-inferiority: a - b > -margin
        threshold, op = -gate.margin, ">"
    else:
        threshold, op = gate.value, gate.op
    test = _OPS[op]
    # The end of the interval that must clear the threshold, and the one that decides failure.
    must, may = (lo, hi) if op in (">", ">=") else (hi, lo)
    if test(must, threshold):
        out["status"] = "pass"
    elif not test(may, threshold):
        out["status"] = "fail"
    else:
        out["status"] = "inconclusive"
    return out
