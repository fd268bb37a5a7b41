"""``reviewbench case add/list/remove``: hand-made cases in a corpus."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import click
from rich.markup import escape
from rich.table import Table

from ..errors import UsageError
from ..git.repo import open_repository
from ..store import read_corpus
from ._group import HelpGroup
from ._output import console, print_json, printable

if TYPE_CHECKING:
    from ..records import Case, GoldRecord

__all__ = ["case_group"]


@click.group("case", cls=HelpGroup, order=("add", "list", "remove"))
def case_group() -> None:
    """Add, list and remove hand-made (authored) cases of a corpus.

    Every change rewrites the corpus's gold and its gold_sha256: a registered run
    directory then refuses to run or score until --new-version registers the change.
    """


@case_group.command("add")
@click.argument("corpus", type=click.Path(path_type=Path))
@click.option("--repo", type=click.Path(path_type=Path), help="Repository [default: the corpus's own].")
@click.option("--base", required=True, metavar="REV", help="Commit the patch applies to.")
@click.option("--head", metavar="REV", help="Commit whose diff from --base is the patch.")
@click.option("--patch", "patch_file", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="A git-format patch applying to --base (instead of --head).")
@click.option("--gold", "gold_file", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="Gold TOML: expect_finding, [[defect]] with [[defect.location]] (path + symbol or lines).")
@click.option("--stratum", metavar="NAME", help="Stratum, built-in or your own (e.g. rule_violation).")
@click.option("--pair-id", metavar="ID", help="Pairs this case with another (a violation and its safe look-alike).")
@click.option("--exploratory", is_flag=True, help="Score the case apart from the headline, as a holdout "
              "('exploratory' in the gold TOML says the same).")
@click.option("--json", "as_json", is_flag=True, help="Print the new case as JSON.")
def case_add(corpus: Path, repo: Path | None, base: str, head: str | None, patch_file: Path | None,
             gold_file: Path, stratum: str | None, pair_id: str | None, exploratory: bool, as_json: bool) -> None:  # fmt: skip
    """Add a hand-made case to CORPUS: the patch must apply to --base; gold locations are
    computed in the patched tree."""
    from ..mine.authored import add_case

    if (head is None) == (patch_file is None):
        raise UsageError("give exactly one of --head REV and --patch FILE")
    repository = open_repository(repo or Path(read_corpus(corpus).meta.repo.path))
    patch = None
    if patch_file is not None:
        try:
            patch = patch_file.read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read --patch {patch_file}: {exc.strerror}") from None
    case, gold = add_case(corpus, repository, base, head=head, patch=patch, gold_file=gold_file,
                          stratum=stratum, pair_id=pair_id, exploratory=exploratory)  # fmt: skip
    if as_json:
        print_json({"case_id": case.case_id, "stratum": gold.stratum, "pair_id": gold.pair_id,
                    "exploratory": gold.exploratory,
                    "paths": case.paths, "locations": [loc.model_dump() for d in gold.defects for loc in d.locations]})  # fmt: skip
        return
    console.print(f"added {case.case_id} ({escape(printable(gold.stratum))}) to {escape(printable(corpus))}",
                  markup=True)


class _CaseRow(TypedDict):
    """One line of ``case list`` (``--json``: one object)."""

    case_id: str
    stratum: str
    pair_id: str | None
    expect_finding: bool
    paths: list[str]
    validation: str


def _case_row(case: Case, gold: GoldRecord) -> _CaseRow:
    validation = gold.validation
    return {"case_id": case.case_id, "stratum": gold.stratum, "pair_id": gold.pair_id,
            "expect_finding": gold.expect_finding, "paths": case.paths,
            "validation": validation.status.value if validation else "unvalidated"}  # fmt: skip


@case_group.command("list")
@click.argument("corpus", type=click.Path(path_type=Path))
@click.option("--all", "show_all", is_flag=True, help="Every case, not only authored ones.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def case_list(corpus: Path, show_all: bool, as_json: bool) -> None:
    """List the authored cases of CORPUS (with --all, every case)."""
    data = read_corpus(corpus)
    gold = {g.case_id: g for g in data.gold}
    rows = [_case_row(c, gold[c.case_id]) for c in data.cases
            if c.case_id in gold and (show_all or gold[c.case_id].provenance.operator == "authored")]  # fmt: skip
    if as_json:
        print_json(rows)
        return
    table = Table(show_edge=False)
    for column in ("case_id", "stratum", "pair_id", "expect", "validation", "paths"):
        table.add_column(column)
    for row in rows:
        # Names stay on their row: a newline or U+202E in a path is shown escaped.
        table.add_row(row["case_id"], printable(row["stratum"]), printable(row["pair_id"] or ""),
                      str(row["expect_finding"]), row["validation"],
                      ", ".join(printable(p) for p in row["paths"]))  # fmt: skip
    console.print(table)


@case_group.command("remove")
@click.argument("corpus", type=click.Path(path_type=Path))
@click.argument("case_id")
def case_remove(corpus: Path, case_id: str) -> None:
    """Remove CASE_ID (its records and patch files) from CORPUS."""
    from ..mine.authored import remove_case

    remove_case(corpus, case_id)
    console.print(f"removed {escape(printable(case_id))} from {escape(printable(corpus))}", markup=True)
