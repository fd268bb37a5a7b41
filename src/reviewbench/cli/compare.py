"""``reviewbench compare``: two run directories of one corpus, paired by case."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from ._output import console, print_json

__all__ = ["compare_command", "compare_options", "load_comparison", "print_comparison"]

#: The figures of the text table (all are in --json), and those shown per stratum.
SHOWN = ("defect_recall", "located_recall", "pair_accuracy", "false_alarm_rate", "fp_per_clean_case", "precision",
         "silence_rate", "flag_coverage", "completion")  # fmt: skip
PER_STRATUM = ("defect_recall", "false_alarm_rate")


def compare_options(command):
    """The options ``compare`` and ``gate`` share (pairing and resampling)."""
    for option in reversed((
        click.option("--condition", "pairs", multiple=True, metavar="NAME=NAME",
                     help="Pair a condition of the first (baseline) run directory with one of the second; "
                          "repeatable [default: the conditions both name alike]."),
        click.option("--shared-cases", is_flag=True,
                     help="On corpora whose gold differs, compare only the cases both hold unchanged (same id, "
                          "patch and gold) instead of refusing; the output says how many."),
        click.option("--bootstrap", "resamples", type=click.IntRange(min=100),
                     help="Bootstrap resamples [default: the first run directory's registered count, or 10000]."),
        click.option("--seed", type=click.IntRange(min=0),
                     help="Seed of the bootstrap [default: the first run directory's registered seed, or 0]."),
    )):  # fmt: skip
        command = option(command)
    return command


def load_comparison(a: Path, b: Path, pairs: tuple[str, ...], shared_cases: bool, analysis: str,
                    resamples: int | None, seed: int | None):  # fmt: skip
    """Both run directories judged as ``score`` judges them (their labels included), compared."""
    from ..score.compare import CompareOptions, compare_runs, parse_pairs

    options = CompareOptions(pairs=parse_pairs(pairs), shared_cases=shared_cases, analysis=analysis,
                             bootstrap=resamples, seed=seed)
    return compare_runs(a, b, options)


@click.command("compare")
@click.argument("rundir_a", type=click.Path(path_type=Path))
@click.argument("rundir_b", type=click.Path(path_type=Path))
@compare_options
@click.option("--analysis", type=click.Choice(["completed", "end_to_end"]), default="completed", show_default=True,
              help="completed: only completed runs count (as score's headline); end_to_end: a missing review "
                   "is a miss and a false alarm (as the gates).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON (reviewbench schema compare).")
def compare_command(rundir_a: Path, rundir_b: Path, pairs: tuple[str, ...], shared_cases: bool,
                    resamples: int | None, seed: int | None, analysis: str, as_json: bool) -> None:  # fmt: skip
    """Compare the runs of RUNDIR_B with those of RUNDIR_A (an earlier run, the baseline) on
    the same corpus: for every condition both hold, every metric's difference B - A with a
    95% case-clustered bootstrap interval (paired: the same cases, resampled together),
    exact McNemar on the defects found by one and missed by the other, the same per
    stratum, and what changed between them (models requested and returned, prompt and
    guidance hashes, reviewer settings, tool version, dates).

    Each side is judged as 'reviewbench score' judges it: its registered rules and its
    labels. Corpora whose gold differs are refused unless --shared-cases.
    """
    result = load_comparison(rundir_a, rundir_b, pairs, shared_cases, analysis, resamples, seed)
    if as_json:
        print_json(result.as_json())
        return
    print_comparison(result)


def _fraction(f: dict) -> str:
    value = "n/a" if f["value"] is None else f"{f['value']:.3f}"
    return f"{f['num']}/{f['den']} = {value}"


def _diff(m: dict) -> str:
    if m["diff"] is None:
        return "n/a"
    interval = "" if m["lo"] is None else f" [{m['lo']:+.3f}, {m['hi']:+.3f}]"
    return f"{m['diff']:+.3f}{interval}"


def _short(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(_short(v) for v in value) or "none"
    text = "none" if value is None else str(value)
    return text[:12] + "…" if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else text


def _flat(value: object, prefix: str) -> dict[str, object]:
    if not isinstance(value, dict):
        return {prefix: value}
    out: dict[str, object] = {}
    for key, item in value.items():
        out.update(_flat(item, f"{prefix}.{key}" if prefix else str(key)))
    return out


def _change_line(name: str, change: dict) -> str:
    a, b = change["a"], change["b"]
    if name == "started":
        def span(s: dict) -> str:
            return f"{(s['first'] or 'never')[:19]} .. {(s['last'] or 'never')[:19]}"

        return f"started {span(a)} -> {span(b)}"
    if name == "params" and len(a) == 1 and len(b) == 1:
        a, b = a[0], b[0]
    if isinstance(a, dict) and isinstance(b, dict):  # a reviewer's table: the keys that differ
        fa, fb = _flat(a, ""), _flat(b, "")
        keys = [k for k in dict.fromkeys([*fa, *fb]) if fa.get(k) != fb.get(k)]
        root = "reviewer" if name == "reviewer" else name
        return "; ".join(f"{root}.{k.removeprefix('reviewer.')} {_short(fa.get(k))} -> {_short(fb.get(k))}"
                         for k in keys)  # fmt: skip
    return f"{name} {_short(a)} -> {_short(b)}"


def mcnemar_line(m: dict) -> str:
    p = "no discordant units, no test" if m["p"] is None else f"exact McNemar p = {m['p']:.4g}"
    return (f"found by both {m['both']}, a only {m['only_a']}, b only {m['only_b']}, neither {m['neither']}: {p}")


def print_comparison(result) -> None:
    """The comparison as text: provenance, then one table per paired condition."""
    data = result.as_json()
    shared, boot = data["shared_cases"], data["analysis"]["bootstrap"]
    if shared["restricted"] and not (shared["only_a"] or shared["only_b"] or shared["differing"]):
        scope = (f"different gold files whose {shared['cases']} cases all agree in patch and labels (the files "
                 "differ elsewhere, e.g. validation records)")  # fmt: skip
    elif shared["restricted"]:
        scope = (f"different corpora, shared cases only: {shared['cases']} cases (left out: {shared['only_a']} only in "
                 f"a, {shared['only_b']} only in b, {shared['differing']} changed)")  # fmt: skip
    else:
        scope = f"same corpus (gold SHA-256 {data['a']['gold_sha256'][:12]}…), {shared['cases']} cases"
    console.print(f"compare b - a: {scope}; {shared['analysed']} analysed; {data['analysis']['analysis']} "
                  f"analysis; 95% paired intervals from {boot['resamples']} case resamples, seed {boot['seed']}")  # fmt: skip
    for side in ("a", "b"):
        s = data[side]
        console.print(f"  {side}: {s['rundir']} ({s['runs']} runs; {s['registration'] or 'not registered'})")
    run_changes = [_change_line(k, c) for k, c in data["changed"].items() if not c["same"] and k != "registration"]
    console.print("  changed: " + ("; ".join(run_changes) if run_changes else "nothing run-wide"))
    for side, names in data["unpaired"].items():
        if names:
            console.print(f"  not compared (only in {side}): {', '.join(names)}")
    for c in data["conditions"]:
        title = c["a"] if c["a"] == c["b"] else f"{c['a']} -> {c['b']}"
        note = f"  (calibration baseline: {c['baseline']})" if c["baseline"] else ""
        console.print(f"\n{title}{note}", style="bold")
        shown = [_change_line(k, c["changed"][k]) for k in c["differs"]]
        console.print("  changed: " + ("; ".join(shown) if shown else "nothing"))
        model = c["changed"]["model_returned"]
        if len(model["a"]) > 1 or len(model["b"]) > 1:
            console.print(f"  MODEL DRIFT within a run: returned {_short(model['a'])} (a), {_short(model['b'])} (b)")
        table = Table(show_edge=False, box=None, padding=(0, 1))
        for column in ("metric", "a", "b", "b - a [95%]", "clusters"):
            table.add_column(column, justify="left" if column == "metric" else "right")
        for name in SHOWN:
            m = c["metrics"][name]
            table.add_row(name, _fraction(m["a"]), _fraction(m["b"]), _diff(m), str(m["clusters"]))
        console.print(table)
        console.print("  defect_recall units (case, defect, repetition): " + mcnemar_line(c["mcnemar"]))
        for stratum, s in c["strata"].items():
            parts = [f"{m} {_fraction(s['metrics'][m]['a'])} -> {_fraction(s['metrics'][m]['b'])} "
                     f"{_diff(s['metrics'][m])}" for m in PER_STRATUM if m in s["metrics"]]  # fmt: skip
            if s["mcnemar"]["only_a"] or s["mcnemar"]["only_b"]:
                parts.append(f"McNemar p = {s['mcnemar']['p']:.4g}")
            if parts:
                console.print(f"  {stratum} ({s['cases']} cases): " + "; ".join(parts))
