"""The CI gate: a new run against its baseline, rule by rule, on paired intervals.

A rule tolerates a change of one metric (``max_drop`` on a metric where higher is better,
``max_rise`` where lower is). On the paired 95% interval of new minus baseline
(``compare.py``) it **fails** only when the whole interval lies beyond the tolerance,
**passes** only when the whole interval lies within it, and is **inconclusive** otherwise:
noise is never read as a regression, nor as its absence.

A pass must be earned on something. A rule is inconclusive, never passed, when either side
did not measure the metric, when fewer than ``min_cases`` case clusters are paired, when the
baseline was already at the metric's worst (0 recall cannot drop: "no worse" than nothing),
or when the condition is a calibration baseline or probe (silent, flag_all, probe), which is
left out of the gate unless named with ``--condition``. A change of model (requested or
returned) is always reported, and fails the gate with ``fail_on_model_change``.
"""

from __future__ import annotations

import hashlib
import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..config.gate_rules import DEFAULT_GATE_RULES, GateRule, GateRules
from ..errors import UsageError
from ..records import Stratum
from .compare import CompareOptions, compare_runs
from .comparison import Change, ConditionComparison, MetricDifference, PairedFigure, RunComparison
from .registry import MetricKind, check_metric_name, spec

__all__ = ["GateOutcome", "GateResult", "GateStatus", "ModelChange", "RuleOutcome", "gate_runs", "judge_rule",
           "load_gate_rules"]  # fmt: skip


class GateStatus(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail, 3 inconclusive: CI chooses what inconclusive means."""
        return {"pass": 0, "fail": 1, "inconclusive": 3}[self.value]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RuleOutcome(_Record):
    condition: str = Field(description="The condition of the new run.")
    baseline_condition: str = Field(description="Its counterpart in the baseline.")
    metric: str
    tolerance: float = Field(description="The bound on new - baseline: -max_drop, or +max_rise.")
    rule: str = Field(description="The rule as written: 'max_drop 0.05' or 'max_rise 0.05'.")
    status: GateStatus
    reason: str = Field(description="Why, in one sentence.")
    baseline: PairedFigure | None = Field(description="The baseline's figure on the paired clusters.")
    new: PairedFigure | None = Field(description="The new run's figure on the paired clusters.")
    diff: float | None = Field(description="new - baseline.")
    lo: float | None = Field(description="Low end of the 95% paired bootstrap interval of the difference.")
    hi: float | None
    clusters: int = Field(description="Case clusters paired (0 when not measured).")


class ModelChange(_Record):
    condition: str
    requested: Change
    returned: Change


class GateOutcome(_Record):
    status: GateStatus = Field(description="fail if any rule fails (or a model changed with fail_on_model_change), "
                                           "else inconclusive if any rule is, else pass.")  # fmt: skip
    exit_code: int = Field(description="0 pass, 1 fail, 3 inconclusive.")
    passed: int
    failed: int
    inconclusive: int


class GateResult(_Record):
    """``reviewbench gate RUNDIR --baseline BASELINE --json``."""

    run: str = Field(description="The new run directory.")
    baseline: str = Field(description="The baseline run directory.")
    rules_file: str = Field(description="The rules file, or 'built-in'.")
    rules_sha256: str
    rules: list[RuleOutcome] = Field(description="One per rule and gated condition.")
    model_changes: list[ModelChange] = Field(description="Gated conditions whose model requested or returned "
                                             "differs between the runs (always reported).")  # fmt: skip
    fail_on_model_change: bool
    evidence_changes: list[str] = Field(description="Gated conditions whose figures rest on other evidence in each "
                                        "run (people's labels in one, automatic matching in the other): "
                                        "a difference may be the labels', not the reviewer's.")  # fmt: skip
    not_gated: dict[str, str] = Field(description="Conditions left out, with why.")
    missing: list[str] = Field(description="Reviewer conditions of the baseline the new run does not have: not "
                               "measured, so the gate is at best inconclusive.")  # fmt: skip
    outcome: GateOutcome
    comparison: RunComparison = Field(description="The comparison the rules were judged on (compare --json).")

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def _where(path: Path | None) -> str:
    return str(path) if path else "built-in gate rules"


def load_gate_rules(path: Path | None) -> tuple[GateRules, str]:
    """The rules (the built-in ones when ``path`` is None) and the SHA-256 of their text.

    Raises:
        UsageError: unreadable, not TOML, a field wrong (named), an unknown or summary
            metric, a label figure, or a tolerance in the wrong direction.
    """
    if path is None:
        rules, text = DEFAULT_GATE_RULES, DEFAULT_GATE_RULES.model_dump_json()
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"gate rules {path} cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
        try:
            rules = GateRules.model_validate(tomllib.loads(text), strict=True)
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"{path}: invalid TOML: {exc}") from None
        except ValidationError as exc:
            errors = exc.errors()  # a misspelt key first: it explains the "field required" after it
            first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
            field = ".".join(str(p) for p in first["loc"]) or "file"
            raise UsageError(f"{path}: {field}: {first['msg']}") from None
    for i, rule in enumerate(rules.rules):
        where = f"{_where(path)}: rules[{i}]"
        check_metric_name(rule.metric, where)
        if "@rule:" in rule.metric:
            raise UsageError(f"{where}: {rule.metric} cannot be gated between run directories (each run counts only "
                             "the rule defects its own guidance reaches, so there is no paired difference): gate it "
                             "in each run's gates file, in a tier's when")  # fmt: skip
        metric = spec(rule.metric)
        if metric.kind is MetricKind.LABEL:
            raise UsageError(f"{where}: {rule.metric} comes from people's labels, not from the runs: gate compares runs")
        if metric.higher_is_better and rule.max_rise is not None:
            raise UsageError(f"{where}: higher {metric.name} is better; tolerate a fall with max_drop")
        if not metric.higher_is_better and rule.max_drop is not None:
            raise UsageError(f"{where}: lower {metric.name} is better; tolerate a rise with max_rise")
    return rules, hashlib.sha256(text.encode()).hexdigest()


def _fraction(f: PairedFigure) -> str:
    return f"{f.num}/{f.den}"


def judge_rule(rule: GateRule, m: MetricDifference | None, min_cases: int,
               baseline_kind: str | None = None) -> tuple[GateStatus, str]:  # fmt: skip
    """Pass, fail or inconclusive for one rule on one paired difference, and why."""
    bound = rule.tolerance
    if m is None or m.diff is None or m.lo is None or m.hi is None:
        return GateStatus.INCONCLUSIVE, "not measured on both runs' shared cases"
    if m.clusters < min_cases:
        return GateStatus.INCONCLUSIVE, f"{m.clusters} paired case clusters (< min_cases {min_cases})"
    lo, hi = m.lo, m.hi
    if rule.max_drop is not None:
        beyond, within = hi < bound, lo >= bound
        worst = m.a.num == 0  # nothing to lose
    else:
        beyond, within = lo > bound, hi <= bound
        worst = spec(rule.metric).name != "fp_per_clean_case" and m.a.value is not None and m.a.value >= 1
    if beyond:
        return GateStatus.FAIL, f"the whole interval lies beyond the tolerated {bound:+g}"
    if baseline_kind:
        return GateStatus.INCONCLUSIVE, f"a calibration baseline ({baseline_kind}) never passes a gate"
    if worst:
        return GateStatus.INCONCLUSIVE, (f"the baseline was already at the worst ({_fraction(m.a)}): no worse than "
                                         "that is not a pass")  # fmt: skip
    if not within:
        return GateStatus.INCONCLUSIVE, f"the interval straddles the tolerated {bound:+g}: more cases would settle it"
    return GateStatus.PASS, f"the whole interval lies within the tolerated {bound:+g}"


def _figure(c: ConditionComparison, metric: str) -> MetricDifference | None:
    base, _, stratum = metric.partition("@")
    if stratum:
        part = c.strata.get(stratum)
        return part.metrics.get(base) if part else None
    return c.metrics.get(base)


def gate_runs(rundir: Path, baseline: Path, rules_path: Path | None = None,
              options: CompareOptions | None = None) -> GateResult:  # fmt: skip
    """Judge ``rundir`` against ``baseline`` (see ``docs/COMPARE.md``).

    Args:
        options: pairing, shared cases, resampling and labels, as for ``compare_runs``
            with the baseline first; its ``analysis`` is the rules file's.

    Raises:
        UsageError: bad rules, a rule naming an unknown condition or stratum, nothing to
            gate (every paired condition a calibration baseline), or as ``compare_runs``.
    """
    rules, sha = load_gate_rules(rules_path)
    options = options or CompareOptions()
    if rundir.resolve() == baseline.resolve():
        raise UsageError(f"{rundir} is its own baseline: gate a new run against an earlier one")
    explicit = {p[1] for p in options.pairs}
    comparison = compare_runs(baseline, rundir, CompareOptions(
        pairs=options.pairs, shared_cases=options.shared_cases, analysis=rules.analysis, bootstrap=options.bootstrap,
        seed=options.seed, overrides_a=options.overrides_a, overrides_b=options.overrides_b))  # fmt: skip
    strata = {s.value for s in Stratum} | {s for c in comparison.conditions for s in c.strata}
    names = {c.b for c in comparison.conditions}
    for i, rule in enumerate(rules.rules):
        check_metric_name(rule.metric, f"{_where(rules_path)}: rules[{i}]", strata)
        if rule.condition is not None and rule.condition not in names:
            raise UsageError(f"{_where(rules_path)}: rules[{i}]: no paired condition {rule.condition!r} "
                             f"(paired: {', '.join(sorted(names))})")  # fmt: skip
    not_gated = {c.b: f"a calibration baseline ({c.baseline}): gated only when named with --condition"
                 for c in comparison.conditions if c.baseline and c.b not in explicit}  # fmt: skip
    for name in comparison.unpaired["b"]:
        not_gated[name] = "not in the baseline (pair it with --condition BASELINE_NAME=NAME)"
    # A reviewer of the baseline that the new run did not run was not measured: never a pass.
    missing = [n for n in comparison.unpaired["a"] if n not in comparison.a.baselines]
    for name in missing:
        not_gated[name] = "in the baseline only: the new run has no such condition (inconclusive)"
    gated = [c for c in comparison.conditions if c.b not in not_gated]
    if not gated:
        raise UsageError(f"nothing to gate: every paired condition ({', '.join(sorted(names))}) is a calibration "
                         "baseline or probe; name a reviewer with --condition BASELINE_NAME=NAME")  # fmt: skip
    outcomes = []
    for c in gated:
        for rule in rules.rules:
            if rule.condition is not None and rule.condition != c.b:
                continue
            m = _figure(c, rule.metric)
            status, reason = judge_rule(rule, m, rules.min_cases, c.baseline)
            outcomes.append(RuleOutcome(
                condition=c.b, baseline_condition=c.a, metric=rule.metric, tolerance=rule.tolerance,
                rule=f"max_drop {rule.max_drop:g}" if rule.max_drop is not None else f"max_rise {rule.max_rise:g}",
                status=status, reason=reason, baseline=m.a if m else None, new=m.b if m else None,
                diff=m.diff if m else None, lo=m.lo if m else None, hi=m.hi if m else None,
                clusters=m.clusters if m else 0))  # fmt: skip
    changes = [ModelChange(condition=c.b, requested=c.changed["model_requested"], returned=c.changed["model_returned"])
               for c in gated if not (c.changed["model_requested"].same and c.changed["model_returned"].same)]  # fmt: skip
    counts = {s: sum(1 for o in outcomes if o.status is s) for s in GateStatus}
    if counts[GateStatus.FAIL] or (changes and rules.fail_on_model_change):
        status = GateStatus.FAIL
    elif counts[GateStatus.INCONCLUSIVE] or not outcomes or missing:
        status = GateStatus.INCONCLUSIVE
    else:
        status = GateStatus.PASS
    return GateResult(
        run=str(rundir), baseline=str(baseline), rules_file=str(rules_path) if rules_path else "built-in",
        rules_sha256=sha, rules=outcomes, model_changes=changes, fail_on_model_change=rules.fail_on_model_change,
        evidence_changes=[c.b for c in gated if not c.changed["evidence"].same], not_gated=not_gated, missing=missing,
        outcome=GateOutcome(status=status, exit_code=status.exit_code, passed=counts[GateStatus.PASS],
                            failed=counts[GateStatus.FAIL], inconclusive=counts[GateStatus.INCONCLUSIVE]),
        comparison=comparison,
    )  # fmt: skip
