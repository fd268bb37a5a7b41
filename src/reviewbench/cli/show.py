"""``reviewbench show``: what a corpus holds."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TypedDict

import click
from rich.table import Table

from ..store import read_corpus
from ..validate.reasons import group_reasons
from ._output import console, escape, print_json, printable
from ._validation import environment_json, print_environment, print_reasons

__all__ = ["show_command"]

#: Strata whose cases expect no finding: their tests passing is what makes them valid.
CLEAN_STRATA = frozenset({"control", "mirror"})


class _CaseRow(TypedDict):
    """One case of ``show --cases`` (``--json``: one of ``case_rows``)."""

    case_id: str
    stratum: str | None
    title: str
    paths: list[str]
    language: str | None
    validation: str


@click.command("show")
@click.argument("corpus", type=click.Path(path_type=Path))
@click.option("--cases", "with_cases", is_flag=True, help="Also list one row per case.")
@click.option("--dropped", "dropped", is_flag=True,
              help="List the candidate commits that made no case, each with its reason (dropped.jsonl).")
@click.option("--why", "why", metavar="SHA",
              help="Say what mining made of commit SHA: its case, why it was dropped, which candidate "
                   "signals it lacked, or why it lay outside the history mined.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def show_command(corpus: Path, with_cases: bool, dropped: bool, why: str | None, as_json: bool) -> None:
    """Counts of a corpus by stratum, validation status and drop reason.

    Controls are counted apart: how many are paired with a fix reversal (made at its
    commit) and how many of those validated keep the tests green (the valid ones); so are
    mirrors (each defect case's change the other way, paired with it). The shape
    separability is the cross-validated AUC with which diff shape alone tells defect cases
    from clean cases.
    """
    from ..score.severity import BASIS_FIELDS, severity_basis_flag
    from ..score.yields import UNVALIDATED, corpus_yields

    data = read_corpus(corpus)
    if why is not None:
        return _show_why(data, why, as_json)
    if dropped:
        return _show_dropped(corpus, as_json)
    gold = {g.case_id: g for g in data.gold}
    counted = corpus_yields(data)
    rows: list[_CaseRow] = [
        {
            "case_id": c.case_id,
            "stratum": gold[c.case_id].stratum if c.case_id in gold else None,
            "title": c.title,
            "paths": c.paths,
            "language": c.language,
            "validation": (v.status.value if (g := gold.get(c.case_id)) and (v := g.validation) else UNVALIDATED),
        }
        for c in data.cases
    ]
    control_counts, mirror_counts = counted.controls, counted.mirrors

    from ..mine.shape import corpus_shapes, shape_separability
    from ..score.cutoff import case_dates, date_histogram

    by_month = date_histogram(case_dates(data))
    # Can diff shape alone tell defect cases from clean ones? (0.5: no; docs/CORPUS.md)
    defect_shapes, clean_shapes = corpus_shapes(corpus, data)
    separability = shape_separability(defect_shapes, clean_shapes)
    shape = {**separability._asdict(), "defect_cases": len(defect_shapes), "clean_cases": len(clean_shapes)}

    # What went wrong: a clean case whose tests pass is what it should be, not a failure.
    reasons = group_reasons(g.validation for g in data.gold if g.validation and not (g.valid and not g.expect_finding))
    report = {
        "corpus": str(corpus),
        "repo": data.meta.repo.model_dump(),
        "cases": len(data.cases),
        **counted.model_dump(mode="json", by_alias=True),
        "shape": shape,
        "by_source_month": by_month,
        "matched_commits": data.meta.counts.matched_commits,
        "dropped": data.meta.counts.dropped,
        "gold_sha256": data.meta.gold_sha256,
        "environment": environment_json(data.meta.environment),
        "reasons": {status: [{"line": line, "cases": n} for line, n in lines] for status, lines in reasons.items()},
        "severity_basis": severity_basis_flag(data.gold),
    }
    if with_cases:
        report["case_rows"] = rows
    if as_json:
        print_json(report)
        return
    console.print(f"[bold]{escape(printable(corpus))}[/]: {len(data.cases)} cases mined from "
                  f"{escape(printable(data.meta.repo.path))}",
                  markup=True)  # fmt: skip
    for title, counts, total in (
        ("stratum", counted.by_stratum, len(data.gold)),
        ("validation", counted.by_outcome, len(data.gold)),
        ("source month", by_month, len(data.gold)),
        ("drop reason", Counter({k: v for k, v in data.meta.counts.dropped.items() if v}),
         data.meta.counts.matched_commits),
    ):  # fmt: skip
        table = Table(show_edge=False)
        table.add_column(title)
        table.add_column("count", justify="right")
        table.add_column("share", justify="right")
        for key, n in sorted(counts.items()):
            table.add_row(key, str(n), f"{n}/{total}")
        if counts:
            console.print(table)
    if control_counts.mined:
        console.print(f"controls: {control_counts.mined} ({control_counts.paired_with_fix_reversals} at "
                      f"fix commits); {control_counts.valid} of {control_counts.validated} validated "
                      "keep the tests green")  # fmt: skip
    if separability.auc is not None:
        console.print(f"shape separability: AUC {separability.auc:.2f} of defect cases ({len(defect_shapes)}) against "
                      f"clean cases ({len(clean_shapes)}) from changed, added and removed lines, files and hunks "
                      f"(0.5: shape tells nothing); best single feature {separability.best_feature} "
                      f"{separability.best_feature_auc:.2f}", markup=False)  # fmt: skip
    flag = report["severity_basis"]
    if flag["missing"]:  # every primary defect case, validated or not: the people writing gold fix it here
        shown = ", ".join(flag["missing"][:5]) + (", …" if len(flag["missing"]) > 5 else "")
        console.print(f"SEVERITY BASIS missing on {len(flag['missing'])} of {flag['primary_cases']} primary defect "
                      f"cases ({BASIS_FIELDS}): {shown}", markup=False)  # fmt: skip
    if mirror_counts.mined:
        console.print(f"mirrors: {mirror_counts.mined} ({mirror_counts.paired_with_defect_cases} paired with "
                      f"defect cases); {mirror_counts.valid} of {mirror_counts.validated} validated keep the "
                      f"tests green; {mirror_counts.in_analysis} scored (valid, with their defect case valid)")  # fmt: skip
    environment = data.meta.environment
    print_reasons(reasons, environment.setup if environment else None, environment.pytest if environment else None)
    if any(g.validation for g in data.gold):
        print_environment(data.meta.environment)
    if counted.by_stratum_yield:
        table = Table(show_edge=False)
        table.add_column("stratum")
        table.add_column("defect observed / validated", justify="right")
        for stratum, row in counted.by_stratum_yield.items():
            if stratum not in CLEAN_STRATA:  # their yield is the "keep the tests green" line above
                table.add_row(stratum, f"{row.observed}/{row.attempted}")
        console.print(table)
    if counted.by_operator:
        table = Table(show_edge=False)
        table.add_column("operator")
        table.add_column("observed / attempted", justify="right")
        table.add_column("mined", justify="right")
        for operator, row in counted.by_operator.items():
            table.add_row(operator, f"{row.observed}/{row.attempted}", str(row.mined))
        console.print(table)
    if with_cases:
        table = Table(show_edge=False)
        for column in ("case_id", "stratum", "validation", "language", "title", "paths"):
            table.add_column(column)
        for case_row in rows:
            table.add_row(case_row["case_id"], case_row["stratum"] or "?", case_row["validation"],
                          case_row["language"] or "", printable(case_row["title"]),
                          ", ".join(printable(p) for p in case_row["paths"]))  # a name stays on its row  # fmt: skip
        console.print(table)


def _show_dropped(corpus: Path, as_json: bool) -> None:
    from ..store.corpus import read_dropped

    rows = read_dropped(corpus)
    if as_json:
        print_json([r.model_dump(mode="json") for r in rows])
        return
    table = Table(show_edge=False, title=f"{len(rows)} candidate commits made no case")
    for column in ("commit", "reason", "selected by", "subject"):
        table.add_column(column)
    for row in rows:
        reason = f"{row.reason}: {row.detail}" if row.detail else row.reason
        table.add_row(row.commit[:12], printable(reason), ",".join(row.selected_by), printable(row.subject))
    console.print(table)


def _show_why(data, sha: str, as_json: bool) -> None:  # noqa: ANN001 - a Corpus
    from dataclasses import asdict

    from ..mine.why import explain_commit

    answer = explain_commit(data, sha)
    if as_json:
        print_json(asdict(answer))
        return
    made = f": {', '.join(answer.cases)}" if answer.cases else ""
    console.print(f"{answer.commit[:12]} {printable(answer.subject)!r}: {answer.outcome.replace('_', ' ')}{made}",
                  markup=False, soft_wrap=True)  # fmt: skip
    for reason in answer.reasons:
        console.print(f"  - {printable(reason)}", markup=False, soft_wrap=True)
