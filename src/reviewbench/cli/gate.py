"""``reviewbench gate``: a new run against its baseline, for CI (exit 0 pass, 1 fail, 3 inconclusive)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ._output import console, print_json
from .compare import compare_options

__all__ = ["gate_command"]


@click.command("gate")
@click.argument("rundir", type=click.Path(path_type=Path))
@click.option("--baseline", required=True, type=click.Path(path_type=Path),
              help="The run directory to compare with (an earlier run of the same corpus).")
@click.option("--rules", "rules_path", type=click.Path(path_type=Path),
              help="Gate rules TOML (docs/COMPARE.md) [default: defect_recall max_drop 0.05, false_alarm_rate "
                   "max_rise 0.05, end to end, min_cases 10].")  # fmt: skip
@compare_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (reviewbench schema gate).")
def gate_command(rundir: Path, baseline: Path, rules_path: Path | None, pairs: tuple[str, ...],
                 shared_cases: bool, resamples: int | None, seed: int | None, as_json: bool) -> None:  # fmt: skip
    """Gate the runs of RUNDIR against those of --baseline, rule by rule, on the paired 95%
    interval of RUNDIR minus baseline: a rule FAILS only when the whole interval lies
    beyond its tolerance, PASSES only when it lies within, and is INCONCLUSIVE otherwise
    (also when a side did not measure it, when fewer than min_cases cases are paired, when
    the baseline was already at the metric's worst, or for a calibration baseline). A
    change of model between the runs is always reported; fail_on_model_change = true in
    the rules makes it a failure.

    Exit status: 0 every rule passed, 1 a rule failed, 3 inconclusive (CI chooses), 2 bad
    input. Calibration baselines (silent, flag_all, probes) are not gated unless named
    with --condition.
    """
    from ..errors import CorpusError, IntegrityError, StoreError, UsageError
    from ..score.compare import CompareOptions, parse_pairs
    from ..score.gate import gate_runs

    try:
        options = CompareOptions(pairs=parse_pairs(pairs), shared_cases=shared_cases, bootstrap=resamples, seed=seed)
        result = gate_runs(rundir, baseline, rules_path, options)
    except (CorpusError, IntegrityError, StoreError) as exc:
        # Exit 1 means "a rule failed" here: an unusable run directory is bad input (2).
        raise UsageError(str(exc)) from None
    if as_json:
        print_json(result.as_json())
    else:
        _print(result)
    # Not ctx.exit: the CLI runs click outside standalone mode, where that only returns the code.
    sys.exit(result.outcome.exit_code)


def _figure(f) -> str:
    if f is None:
        return "n/a"
    return f"{f.num}/{f.den} = " + ("n/a" if f.value is None else f"{f.value:.3f}")


def _print(result) -> None:
    c = result.comparison
    scope = (f"{c.shared_cases.cases} shared cases (different corpora)" if c.shared_cases.restricted
             else f"same corpus, {c.shared_cases.cases} cases")  # fmt: skip
    boot = c.analysis["bootstrap"]
    console.print(f"gate {result.run} against baseline {result.baseline}: {scope}; {c.analysis['analysis']} "
                  f"analysis; rules {result.rules_file}; 95% paired intervals from {boot['resamples']} case "
                  f"resamples, seed {boot['seed']}")  # fmt: skip
    for name, why in result.not_gated.items():
        console.print(f"  not gated: {name}: {why}")
    for change in result.model_changes:
        verdict = "FAIL (fail_on_model_change)" if result.fail_on_model_change else "reported"
        parts = [f"{what} {', '.join(map(str, ch.a)) or 'none'} -> {', '.join(map(str, ch.b)) or 'none'}"
                 for what, ch in (("requested", change.requested), ("returned", change.returned)) if not ch.same]  # fmt: skip
        console.print(f"MODEL CHANGED {change.condition}: {'; '.join(parts)} [{verdict}]")
    scoring = c.changed["rules"]
    if not scoring.same:
        console.print(f"  note: the two runs are scored under different registered rules ({scoring.a} in the "
                      f"baseline, {scoring.b} now): a difference may be the rules'")  # fmt: skip
    for name in result.evidence_changes:
        console.print(f"  note: {name}'s figures rest on different evidence in the two runs (labels in one, not the "
                      "other): label both, or read a difference as partly the labels'")  # fmt: skip
    for r in result.rules:
        interval = "" if r.lo is None else f" [{r.lo:+.3f}, {r.hi:+.3f}]"
        diff = "n/a" if r.diff is None else f"{r.diff:+.3f}"
        console.print(f"{r.status.value.upper():<12} {r.condition} {r.metric} ({r.rule}): baseline "
                      f"{_figure(r.baseline)}, now {_figure(r.new)}, change {diff}{interval} on {r.clusters} "
                      f"case clusters; {r.reason}")  # fmt: skip
    o = result.outcome
    console.print(f"gate: {o.status.value} ({o.passed} passed, {o.failed} failed, {o.inconclusive} inconclusive"
                  + (f", {len(result.model_changes)} model change(s)" if result.model_changes else "")
                  + (f", {len(result.missing)} baseline condition(s) not run" if result.missing else "")
                  + f"); exit {o.exit_code}")  # fmt: skip
