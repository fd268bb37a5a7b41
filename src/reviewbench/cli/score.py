"""``reviewbench score``: the scoreboard, the intervals and the decision."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.table import Table

from .._text import counted
from ..errors import ReviewbenchError
from ._output import console, print_json, say

if TYPE_CHECKING:
    from ..report.headline import HeadlineRow
    from ..score.result import (
        ConditionScore,
        ContaminationBeside,
        CorpusSummary,
        CostFigure,
        CostScore,
        DecisionStatus,
        ExcludedBeside,
        IncidentalReport,
        LabelFigures,
        MetricValue,
        PairedComparison,
        PrecisionClaims,
        ScoredRuns,
        ScoreResult,
        UnclearDecision,
    )

__all__ = ["print_scoreboard", "score_command"]

# The four summary lines of detail, with location beside identification: (label, metric, meaning).
SUMMARY = (
    ("detection", "defect_recall", "defects identified (labels, else a naming remark the mirror did not get)"),
    ("located", "located_recall", "defects with a finding at their lines (upper bound)"),
    ("severity match", "severity_match", "identified defects with the gold severity"),
    ("false alarms", "false_alarm_rate", "clean runs with at least one finding"),
    ("rename-stable", "rename_stability", "defects identified again after renaming"),
)
TABLE = ("named_recall", "discriminating_recall", "pair_accuracy", "recall_any", "recall_all", "recall_k_of_n", "file_recall", "symbol_recall", "localisation", "silence_rate",
         "fp_per_clean_case", "precision", "located_precision", "duplicate_rate", "flag_coverage", "completion",
         "file_mention_rate", "symbol_mention_rate", "severity_match_all", "rename_stable_all",
         "weighted_points")  # fmt: skip
#: Per returned model id, when the model changed during a run.
DRIFT_METRICS = ("defect_recall", "located_recall", "false_alarm_rate")
#: End-to-end figures shown beside the completed-run ones (a missing review counts against).
END_TO_END = ("defect_recall", "located_recall", "false_alarm_rate")


def _fmt(m: MetricValue) -> tuple[str, str, str]:
    value = "n/a" if m.value is None else f"{m.value:.3f}"
    fraction = f"{m.num}/{m.den}"
    interval = "" if m.lo is None else f"[{m.lo:.3f}, {m.hi:.3f}]"
    if interval and m.exact:  # the case bootstrap had no variance: exact on the clusters
        interval += " exact"
    return value, fraction, interval


def _cost_line(cost: CostScore) -> str:
    """Cost from the price table, apart from the usage proxy (token counts): a list-price
    estimate, or why none is made."""
    unit = f" {cost.currency}" if cost.currency else ""
    if cost.refused:
        return f"cost: not estimated: {cost.refused}"
    if cost.unpriced_models:
        return f"cost: not given: no price for {', '.join(cost.unpriced_models)}"
    if cost.per_run is None or cost.per_identified_defect is None or cost.total is None:
        return "cost: not given: no run reported usage"

    def figure(f: CostFigure, of: str) -> str:
        value = "n/a" if f.value is None else f"{f.value:.6g}{unit}"
        interval = "" if f.lo is None else f" [{f.lo:.6g}, {f.hi:.6g}]"
        return f"{value}{interval} per {of} ({f.num:.6g}{unit} / {f.den})"

    bound = "" if cost.complete else f"; at least: {cost.runs_without_usage} runs reported no usage"
    return (f"cost ({cost.basis}, not an invoice): {cost.total:.6g}{unit} total; " + figure(cost.per_run, "run") + "; "
            + figure(cost.per_identified_defect, "identified defect") + bound)


def _figure(metric: str, m: MetricValue) -> str:
    value, fraction, interval = _fmt(m)
    return f"{metric} {fraction} = {value}" + (f" {interval}" if interval else "")


def _evidence(data: ConditionScore, metric: str) -> str:
    from ..score.levels import describe

    evidence = (data.metric_evidence or {}).get(metric)
    return describe(evidence) if evidence else ""


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _said(status: DecisionStatus) -> str:
    return status.value.replace("_", " ")


def _print_condition(name: str, data: ConditionScore, version: str = "not registered") -> None:
    metrics = data.metrics
    console.print(f"\n{name}  ({_states(data.states)}; {data.valid_defect_cases} defect cases with a "
                  f"completed review; evidence: {_evidence_word(data.evidence.value)})", markup=False,
                  style="bold")  # fmt: skip
    for label, metric, meaning in SUMMARY:
        value, fraction, interval = _fmt(metrics[metric])
        console.print(f"  {label:<15} {fraction:>9}  {value:>6} {interval:<17} {meaning}; evidence: "
                      f"{_evidence(data, metric)}", markup=False)  # fmt: skip
    e2e = data.end_to_end.metrics
    parts = []
    for metric in END_TO_END:
        value, fraction, _ = _fmt(e2e[metric])
        parts.append(f"{metric} {fraction} = {value}")
    console.print("  end to end (missing reviews count against): " + "; ".join(parts), markup=False)
    _print_rules_and_drift(data)
    table = Table(show_edge=False, box=None, padding=(0, 1))
    for column in ("metric", "num/den", "value", "95% interval", "evidence"):
        table.add_column(column, justify="left" if column in ("metric", "evidence") else "right")
    for metric in TABLE:
        value, fraction, interval = _fmt(metrics[metric])
        table.add_row(metric, fraction, value, interval, _evidence(data, metric))
    latency = metrics["latency_s"]
    if latency.value is not None:
        table.add_row("latency_s (median)", f"n={latency.den}", f"{latency.value:.3f}",
                      f"IQR [{latency.lo:.3f}, {latency.hi:.3f}] min {latency.min:.3f} "
                      f"max {latency.max:.3f}")  # fmt: skip
    first = metrics.get("time_to_first_review_s")  # forge conditions only
    if first is not None:
        from ..score.first_review import first_review_note

        table.add_row("time_to_first_review_s (median)", f"{first.num}/{first.den}", _seconds(first.value),
                      first_review_note(first))  # fmt: skip
    console.print(table)
    if data.precision_claims:
        console.print("  " + _claims_line(data.precision_claims), markup=False)
    if data.stability:
        st = data.stability
        console.print(f"  stability: recall_k_of_n counts a defect identified in {st.rule} repetitions "
                      f"({st.analysis}); {st.too_few_repetitions} with fewer counted repetitions left out; "
                      "hit sequences in score --json", markup=False)  # fmt: skip
    if data.cost:
        console.print("  " + _cost_line(data.cost), markup=False)
    _print_decision(data, version)


def _print_rules_and_drift(data: ConditionScore) -> None:
    """Missing reviews with their failure codes, per-rule recall, and a model that changed mid-run."""
    from ..report.headline import attempts_line  # the page's words (loaded on use)

    metrics = data.metrics
    attempts = attempts_line(metrics["completion"])
    if attempts:
        console.print(f"  {attempts}", markup=False)
    for metric, m in metrics.items():
        if metric.startswith("defect_recall@rule:"):
            value, fraction, interval = _fmt(m)
            console.print(f"  {metric[len('defect_recall@'):]:<15} {fraction:>9}  {value:>6} {interval:<17} "
                          f"rule defects identified / eligible; {m.not_eligible or 0} outside the "
                          "condition's guidance (not eligible)", markup=False)  # fmt: skip
    drift = data.model_drift
    if drift:
        console.print(f"  MODEL DRIFT: requested {', '.join(drift.requested) or 'none'}; returned "
                      f"{', '.join(drift.returned)}", markup=False)  # fmt: skip
        for model, part in (drift.by_model or {}).items():  # each model's runs apart (not paired)
            figures = "; ".join(_figure(m, part.metrics[m]) for m in DRIFT_METRICS)
            console.print(f"    answered by {model} ({part.runs} runs, {part.cases} cases): {figures}",
                          markup=False)  # fmt: skip


def _print_decision(data: ConditionScore, version: str) -> None:
    decision = data.decision
    reason = f" ({decision.reason})" if decision.reason else ""
    status = _said(decision.status)
    if decision.status == "needs_labels":  # the enum's value: the CLI loads no scoring module to start
        status += f": {decision.labels_needed} located findings await a label"
    console.print(f"  decision ({version}): {decision.authority} [{status}]{reason}", markup=False)
    if secondary := data.judge_secondary:
        console.print(f"  secondary analysis on judge labels (no authority): {secondary.tier} "
                      f"[{_said(secondary.status)}]: {secondary.would_be} only if people's labels "
                      "said the same", markup=False)  # fmt: skip
    if data.unclear:
        console.print("  " + _unclear_line(data), markup=False)
    if data.labels:
        console.print("  " + _labels_line(data.labels), markup=False)
    if decision.permitted:
        console.print("  permitted: " + "; ".join(decision.permitted), markup=False)
    console.print("  NOT permitted: " + "; ".join(decision.not_permitted), markup=False)


#: Run states in words: a state counts runs, not findings.
STATE_WORDS = {"completed_findings": "with findings", "completed_no_findings": "without findings"}


def _states(states: Mapping[str, int]) -> str:
    """"213 runs scored: 9 with findings, 204 without findings": what the run states count."""
    total = sum(states.values())
    if not total:
        return "no runs scored"
    parts = ", ".join(f"{n} {STATE_WORDS.get(k, k.replace('_', ' '))}" for k, n in states.items())
    return f"{counted(total, 'run')} scored: {parts}"


def _evidence_word(level: str) -> str:
    from ..score.levels import EVIDENCE_WORDS

    return next((word for e, word in EVIDENCE_WORDS.items() if e.value == level), level)


def _labels_line(labels: LabelFigures) -> str:
    """People's figures beside the metrics, each saying what it counts: actionability of the
    comments people called true findings (every labelled case: rename variants and clean
    cases included, so not precision's findings), and rater minutes per labelled run."""
    rate, triage = labels.actionability_rate, labels.triage_minutes
    line = (f"labels: {rate.numerator} of {rate.denominator} comments people called true findings pass all five "
            "actionability questions (comments of every labelled case, rename variants and clean cases included)")
    failing = [f"{field.replace('_', ' ')} {f.numerator}/{f.denominator}"
               for field, f in rate.fields.items() if f.denominator and f.numerator < f.denominator]
    if failing:
        line += f"; yes on {', '.join(failing)}"
    if triage.median is not None:
        line += (f"; triage {triage.median:.1f} rater-minutes per run, median over the {triage.runs} runs "
                 f"with labelled comments, scored or not (IQR {triage.q1:.1f}-{triage.q3:.1f})")  # fmt: skip
    return line


def _unclear_line(data: ConditionScore) -> str:
    """One line: the unclear claims left out of precision, both sensitivity bounds, the decision at each."""
    u = data.unclear
    assert u is not None
    metrics = data.end_to_end.metrics if u.analysis == "end_to_end" else data.metrics
    value, fraction, _ = _fmt(metrics["precision"])

    def bound(m: MetricValue) -> str:
        low, frac, interval = _fmt(m)
        return f"{frac} = {low}" + (f" {interval}" if interval else "")

    def said(d: UnclearDecision) -> str:
        return f"{d.authority} [{_said(d.status)}]"

    verdict = (f"DECISION CHANGES: {said(u.decision_all_false)} if all false, {said(u.decision_all_true)} if "
               "all true" if u.decision_changes else "decision unchanged either way")  # fmt: skip
    return (f"unclear claims: {u.n} left out of precision ({u.analysis} {fraction} = {value}); "
            f"all false {bound(u.precision_all_false)}, all true {bound(u.precision_all_true)}; "
            f"{verdict}")


def _print_splits(data: ConditionScore) -> None:
    """The holdout strata and the before/after cut-off figures, each apart from the headline."""
    from ..score.splits import SPLIT_METRICS, split_difference, split_rows

    rows = split_rows(data.holdout, data.cutoff)
    if not rows:
        return
    table = Table(show_edge=False, box=None, padding=(0, 1), title="apart from the headline", title_justify="left")
    table.add_column("cases")
    for metric in SPLIT_METRICS:
        table.add_column(metric, justify="right")
    for row in rows:
        table.add_row(row.label, *(" ".join(_fmt(row.metrics[m])) if row.metrics[m].den else "n/a"
                                   for m in SPLIT_METRICS))  # fmt: skip
    if diffs := split_difference(data.cutoff):
        table.add_row("after - before", *("n/a" if diffs[m].diff is None else f"{diffs[m].diff:+.3f}"
                                          + ("" if diffs[m].lo is None else f" [{diffs[m].lo:.3f}, {diffs[m].hi:.3f}]")
                                          for m in SPLIT_METRICS))  # fmt: skip
    console.print(table, markup=False)


@click.command("score")
@click.argument("rundir", type=click.Path(path_type=Path))
@click.option("--tolerance", type=click.IntRange(min=0),
              help="Lines either side of a gold range that still count as located [default: registered, or 3].")
@click.option("--bootstrap", "resamples", type=click.IntRange(min=100),
              help="Bootstrap resamples for the 95% intervals [default: registered, or 10000].")
@click.option("--seed", type=click.IntRange(min=0), help="Seed of the bootstrap (0 or more) [default: the registered one, or 0].")
@click.option("--gates", type=click.Path(path_type=Path),
              help="Gates TOML [default: the registered gates, or the built-in table].")
@click.option("--include-unvalidated/--validated-only", default=None,
              help="Also score cases whose defect no test observed [default: registered, or validated only].")
@click.option("--new-version", is_flag=True,
              help="If registered inputs changed, register them as a new benchmark version.")
@click.option("--version", "version", type=click.IntRange(min=1),
              help="Score the runs of an earlier registered version, by its own gates and rules "
                   "[default: the latest; a version scores only the runs started under it].")
@click.option("--cutoff", metavar="DATE",
              help="Contamination cut-off (YYYY-MM-DD): every metric also on the cases before and after it, "
                   "with their difference [default: the experiment's registered cutoff, if any].")
@click.option("--prices", type=click.Path(path_type=Path),
              help="Price table TOML ([prices] \"MODEL\" = { input_per_mtok, output_per_mtok }): cost per run and "
                   "per identified defect, with intervals; none for a model it does not price.")  # fmt: skip
@click.option("--details", is_flag=True,
              help="After the headline, every metric of every condition with its evidence, the gates' "
                   "end-to-end figures, the labels and every paired difference.")
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
def score_command(rundir: Path, tolerance: int | None, resamples: int | None, seed: int | None,
                  gates: Path | None, include_unvalidated: bool | None, new_version: bool,
                  version: int | None, cutoff: str | None, prices: Path | None, details: bool,
                  as_json: bool) -> None:  # fmt: skip
    """Score the runs of RUNDIR: every finding's verdict (RUNDIR/verdicts.jsonl), metrics
    with numerators, denominators and 95% intervals, located and identified recall side by
    side, an end-to-end analysis where missing reviews count against, paired comparisons,
    and the decision each condition earned. Labels in RUNDIR/labels.sqlite (people's, or a
    calibrated judge's) override the automatic verdicts of the findings they label.

    By default only defect cases validated 'observed' and controls whose tests pass count.
    Natural cases (mine --natural) are a holdout: shown on their own, never in the headline.
    A registered run directory is scored with its registered rules; changing them is
    refused unless --new-version. A version registered after runs scores only the runs
    started after it: the older ones keep the version they ran under (--version N).
    """
    from ..score import score_run  # numpy and scipy: only when scoring
    from ..score.cost import load_prices
    from ..score.inputs import ScoreOptions

    table = load_prices(prices) if prices is not None else None
    result = score_run(rundir, ScoreOptions(tolerance=tolerance, bootstrap=resamples, seed=seed,
                                            gates=gates, include_unvalidated=include_unvalidated,
                                            new_version=new_version, version=version, cutoff=cutoff,
                                            prices=table))  # fmt: skip
    if as_json:
        print_json(result.as_json())
        return
    print_scoreboard(rundir, result, details=details)


def _clip(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def print_scoreboard(rundir: Path, result: ScoreResult, details: bool = False) -> None:
    """The scoreboard (shared with the demo): what was scored, one row per condition, the
    decisions, one sentence per pair; with ``details``, every metric of every condition."""
    from ..report.headline import LEGEND, headline_rows, pair_heading, pair_sentences
    from ..score.versions import version_phrase
    from ..store.runs import last_errors

    _print_scope(rundir, result)
    try:
        errors = {name: _clip(f"{e.state.value} {e.case_id}: {e.error}", 60) for name, e in last_errors(rundir).items()}
    except ReviewbenchError:  # a store it cannot read has already been scored: say nothing more
        errors = {}
    rows = headline_rows(result, errors)
    analysis = "end to end: a run with no review counts as a miss and a false alarm" \
        if result.analysis.gated_analysis == "end_to_end" else "completed runs only"
    if not rows:
        console.print("\nno condition has runs scored under this version", markup=False)
    else:
        _print_headline(rows, analysis)
        say("; ".join(LEGEND))
    if rows:
        console.print(f"\ndecision ({version_phrase(result.registration)}):", markup=False)
    _print_decisions(rows)
    for name, cond in result.conditions.items():
        if secondary := cond.judge_secondary:
            say(f"  {name}: secondary analysis on judge labels (no authority): {secondary.tier} "
                f"[{_said(secondary.status)}]: {secondary.would_be} only if people's labels "
                "said the same", "      ")  # fmt: skip
        if cond.unclear and cond.unclear.decision_changes:
            say(f"  {name}: " + _unclear_line(cond), "      ")
        if drift := cond.model_drift:
            say(f"  {name}: MODEL DRIFT: requested {', '.join(drift.requested) or 'none'}; returned "
                 f"{', '.join(drift.returned)} (score --details: each model apart)", "      ")  # fmt: skip
    if result.exclusions:
        for name, beside in result.exclusions.without.items():
            say(f"  {name} " + _without_line(beside), "      ")
    for name, cond in result.conditions.items():  # a contaminated control that decides it: said here too
        if cond.contamination and cond.contamination.decision_changes:
            say(f"  {name} " + _contamination_line(cond.contamination), "      ")
    sentences = pair_sentences(result)
    if sentences:
        console.print("\n" + pair_heading(result), markup=False)
        for sentence in sentences:
            say("  " + sentence.text, "    ")
    if details:
        _print_details(result)
    else:
        console.print("every metric, the gates and the labels per condition: reviewbench score RUNDIR --details",
                      markup=False)  # fmt: skip
    if result.compare:
        console.print("\ncomparative gates", markup=False, style="bold")
        for g in result.compare:
            interval = "" if g.lo is None else f" [{g.lo:.3f}, {g.hi:.3f}]"
            rule = f"margin {g.margin:g}" if g.margin is not None else f"{g.op} {g.value:g}"
            console.print(f"  {g.name}: {g.metric} {g.diff[0]} - {g.diff[1]}{interval} ({rule}): {g.status}",
                          markup=False)  # fmt: skip


def _print_decisions(rows: Sequence[HeadlineRow]) -> None:
    """Each condition's authority and uses; the uses none of them may have, said once."""
    for row in rows:
        reason = f" ({row.reason})" if row.reason else ""
        say(f"  {row.condition}: {row.authority}{reason}; permitted: {'; '.join(row.permitted) or 'nothing'}",
             "      ")  # fmt: skip
        if row.last_error:
            say(f"    last error: {row.last_error}", "      ")
    common = [use for use in rows[0].not_permitted if all(use in r.not_permitted for r in rows)] if rows else []
    if common:
        say(f"  NOT permitted to {'any of them' if len(rows) > 1 else rows[0].condition}: {'; '.join(common)}",
             "      ")  # fmt: skip
    others: dict[str, list[str]] = {}
    for row in rows:
        for use in row.not_permitted:
            if use not in common:
                others.setdefault(use, []).append(row.condition)
    if others:
        say("  nor: " + "; ".join(f"{use} ({', '.join(names)})" for use, names in others.items()), "      ")


def _print_headline(rows: Sequence[HeadlineRow], analysis: str) -> None:
    """One row per condition, in plain columns two spaces apart (nothing wrapped or padded at the end)."""
    console.print(f"\nThe figures the gates read ({analysis}):", markup=False)
    cells = [("reviewer", "decision", "detection", "false alarms", "precision", "completed")]
    cells += [(row.condition, row.status, row.detection.cell, row.false_alarms.cell, row.precision.cell,
               row.completion.fraction) for row in rows]  # fmt: skip
    widths = [max(len(line[i]) for line in cells) for i in range(len(cells[0]))]
    for line in cells:  # plain columns, two spaces apart: no trailing padding, nothing wrapped
        console.print("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip(), markup=False,
                      soft_wrap=True)  # fmt: skip


def _print_scope(rundir: Path, result: ScoreResult) -> None:
    """What was scored, under which registration, and what was left out."""
    corpus, analysis = result.corpus, result.analysis
    scope = "all cases, --include-unvalidated" if corpus.include_unvalidated else "validated cases only"
    boot = analysis.bootstrap
    say(f"Scored {rundir}: {corpus.eligible_defect_cases} defect cases, {_clean(corpus)}, "
         f"{corpus.eligible_variants} rename variants ({scope}, of {corpus.cases}); 95% intervals from "
         f"{boot.resamples} case resamples, seed {boot.seed}")  # fmt: skip
    say(analysis.audit.line if analysis.audit else "matcher audit: not run on this corpus (reviewbench audit CORPUS)")
    registration = result.registration
    if registration:
        when = "pre-registered" if registration.pre_registered else "registered after runs"
        if registration.sha256_recorded:
            sealed = f"verified unchanged, registration.json SHA-256 {registration.sha256}"
        else:  # runs begun by a reviewbench that recorded no digest: the file cannot be vouched for
            sealed = (f"inputs match it; registration.json SHA-256 {registration.sha256} not recorded "
                      "when the runs began, so edits to the file itself cannot be ruled out")
        scoped = registration.scored_runs
        every = scoped is not None and not scoped.other_versions and not scoped.since and not scoped.until
        say(f"{when}: version {registration.version} of {registration.registered_at[:19]}, {sealed}"
             + (f"; scores all {scoped.runs} runs" if scoped and every else ""))  # fmt: skip
        if scoped and not every:
            say(_scope_line(scoped))
        from ..report.protocol import protocol_summary

        say(protocol_summary(registration))
    else:
        say("not registered: the gates and rules were not fixed before the runs")
    cutoff = analysis.cutoff
    if cutoff and not cutoff.registered:
        fixed = cutoff.registered_date
        say(f"cutoff {cutoff.date} given here" + (f", not the registered {fixed}" if fixed else ", none "
             "registered") + ": an exploratory split, not part of the registration")  # fmt: skip
    excluded = result.exclusions
    if excluded:
        say(f"exclusions: {counted(len(excluded.runs), 'run')}, {counted(len(excluded.cases), 'case')} "
             "left out (exclusions.jsonl); the figures below are without them, each condition's "
             "without exclusions line has them back in")  # fmt: skip
    if result.incidental:
        _print_incidental(result.incidental)
    if result.inspection:
        from ..report.headline import inspection_line

        say(inspection_line(result.inspection))
    if result.severity_basis and result.severity_basis.missing:
        from ..report.headline import severity_basis_line

        say(severity_basis_line(result.severity_basis))
    differing = analysis.forge_tree_differences
    if differing:
        say(f"TREES DIFFER: {len(differing)} case(s) were pushed with different trees under different "
             f"conditions (bar the guidance files): {', '.join(sorted(differing))}")  # fmt: skip


def _print_details(result: ScoreResult) -> None:
    """Every metric of every condition, the end-to-end figures, the labels and every paired difference."""
    from ..score.versions import version_phrase

    console.print("\ndetails: defect_recall and precision count identified findings: by people, else a calibrated "
                  "judge, else a finding that names the defect where the same reviewer said nothing naming it on "
                  "the defect's mirror (the same change, clean); named_recall counts naming alone, located_recall "
                  "where findings land", markup=False)  # fmt: skip
    if result.registration:
        from ..report.protocol import protocol_lines

        console.print("\nregistered protocol", markup=False, style="bold")
        for field, text in protocol_lines(result.registration):
            say(f"  {field}: {text}", "      ")
    excluded = result.exclusions
    for name, data in result.conditions.items():
        _print_condition(name, data, version_phrase(result.registration))
        if excluded and name in excluded.without:
            console.print("  " + _without_line(excluded.without[name]), markup=False)
        if data.contamination:
            console.print("  " + _contamination_line(data.contamination), markup=False)
        _print_splits(data)
    shown = [c for c in result.comparisons
             if c.metric in ("defect_recall", "false_alarm_rate") and c.analysis == "completed"]  # fmt: skip
    if shown:
        console.print("\n[bold]paired differences[/] (a - b, same cases, completed runs)", markup=True)
        for c in shown:
            if c.diff is None:
                continue
            p = "" if c.mcnemar_p is None else f", exact McNemar p = {c.mcnemar_p:.4g}"
            interval = "" if c.lo is None else f" [{c.lo:.3f}, {c.hi:.3f}]"
            if interval and c.exact:
                interval += " exact"
            console.print(f"  {c.a} - {c.b} {c.metric}: {c.diff:+.3f}{interval}{p}; {_pairs(c)}", markup=False)


def _pairs(c: PairedComparison) -> str:
    """"20 complete pairs (B lacks 2)": the clusters a paired figure is over, and what each side missed."""
    lacking = [f"{name} lacks {n}" for name, n in (c.missing or {}).items() if n]
    units = f"; {c.mcnemar_pairs} McNemar pairs" if c.mcnemar_pairs is not None else ""
    return f"{c.pairs} complete pairs" + (f" ({', '.join(lacking)})" if lacking else "") + units


def _clean(corpus: CorpusSummary) -> str:
    """"32 clean cases (12 controls, 20 mirrors)": a mirror is no control."""
    clean, mirrors = corpus.eligible_controls, corpus.eligible_mirrors
    return f"{clean} clean cases ({clean - mirrors} controls, {mirrors} mirrors)" if mirrors else f"{clean} controls"


def _scope_line(scoped: ScoredRuns) -> str:
    """Which runs this version scores, and how many ran under another one."""
    since, until = scoped.since, scoped.until
    window = (f"started from {since} until {until}" if since and until else f"started from {since}" if since
              else f"started before {until}" if until else "every run")  # fmt: skip
    line = f"version {scoped.version} scores {scoped.runs} runs ({window})"
    others = [f"{n} runs ran under version {v}" for v, n in scoped.other_versions.items()]
    if others:
        line += f"; {', '.join(others)}, not scored under version {scoped.version} (score --version N)"
    return line


def _claims_line(c: PrecisionClaims) -> str:
    """What precision counted besides one claim per comment."""
    rule = (f"boilerplate rule ({counted(len(c.boilerplate_rule), 'pattern')}): {c.boilerplate_excluded} of "
            f"{c.false_positives} false positives left out" if c.boilerplate_rule
            else "no boilerplate rule registered")  # fmt: skip
    return (f"precision ({c.analysis}): {counted(c.split_comments, 'split comment')} counted claim by claim "
            f"({counted(c.extra_claims, 'claim')} more than one per comment); {rule}")


def _print_incidental(report: IncidentalReport) -> None:
    """The contaminated clean cases and the incidental defects, in one line."""
    shown = ", ".join(report.contaminated[:5]) + (", …" if len(report.contaminated) > 5 else "")
    contaminated = (f"contaminated clean cases: {len(report.contaminated)} ({shown}: a claim on it labelled "
                    "valid_incidental)") if report.contaminated else "contaminated clean cases: none"  # fmt: skip
    say(f"{contaminated}; {counted(len(report.defects), 'incidental defect')} reported apart, in no recall "
        "denominator"
        + ("; each condition's clean-set figures without them: score --details" if report.contaminated else ""))


def _contamination_line(beside: ContaminationBeside) -> str:
    """The clean-set figures and the decision without the contaminated clean cases."""
    parts = []
    for metric in ("false_alarm_rate", "fp_per_clean_case", "precision"):
        value, fraction, _ = _fmt(getattr(beside, metric))
        parts.append(f"{metric} {fraction} = {value}")
    d = beside.decision
    verdict = f"DECISION CHANGES: {d.authority} [{_said(d.status)}]" if beside.decision_changes \
        else "decision unchanged"
    return f"without contaminated clean cases: {'; '.join(parts)}; {verdict}"


def _without_line(beside: ExcludedBeside) -> str:
    """The headline figures and the decision with nothing left out, and whether it changes."""
    parts = []
    for metric in (beside.defect_recall, beside.false_alarm_rate):
        value, fraction, _ = _fmt(metric)
        parts.append(f"{fraction} = {value}")
    d = beside.decision
    said = f"{d.authority} [{_said(d.status)}]"
    verdict = f"DECISION CHANGES: {said}" if beside.decision_changes else "decision unchanged"
    return f"without exclusions: defect_recall {parts[0]}; false_alarm_rate {parts[1]}; {verdict}"
