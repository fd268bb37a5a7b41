"""Rename variants (SPEC 3.4): the same defect, in code whose locals have other names.

For a defect case the variant's patched tree is the original's patched tree with the
locals of every function holding a gold location consistently renamed (scope-aware,
:mod:`rename`). Its patch applies to the same base, so it carries the rename and the
defect together, as a real change would. Gold lines are recomputed in the variant's
tree through a line map, and gold names follow the rename. A variant is a case of its own
(new neutral id, ``variant_of`` = the original) and is validated like any case.
"""

from __future__ import annotations

from ..git.repo import Repository
from ..records import Defect, GoldRecord, Location
from .edits import FileEdit, SyntheticCase, compiles, make_case
from .fix_reversal import MinedCase
from .head import HeadTree
from .naming import case_id
from .paths import language_of
from .rename import rename_in_functions
from .textdiff import line_map

__all__ = ["fix_reversal_edits", "rename_variant"]


def _moved(location: Location, lines: dict[int, int]) -> Location | None:
    if location.start_line == 0:
        return location
    start, end = lines.get(location.start_line), lines.get(location.end_line)
    if start is None or end is None:
        return None
    return location.model_copy(update={"start_line": start, "end_line": end})


def _renamed(values: list[str], names: dict[str, str]) -> list[str]:
    return sorted({names.get(v, v) for v in values})


def rename_variant(seed: int, original: GoldRecord, base: str, edits: tuple[FileEdit, ...]) -> SyntheticCase | None:
    """The rename variant of a defect case, or None when its functions have no safe local."""
    key = f"rename:{original.case_id}"
    renamed_edits: list[FileEdit] = []
    maps: dict[str, dict[int, int]] = {}
    names: dict[str, str] = {}
    for edit in edits:
        lines = [line for d in original.defects for loc in d.locations if loc.path == edit.path
                 for line in range(max(loc.start_line, 1), loc.end_line + 1)]  # fmt: skip
        renamed = None
        if lines and language_of(edit.path) == "python":
            renamed = rename_in_functions(edit.new, lines, f"{seed}:{key}:{edit.path}")
        if renamed is None or not compiles(renamed.source, edit.path):
            renamed_edits.append(edit)
            continue
        maps[edit.path] = line_map(edit.new, renamed.source)
        names.update(renamed.mapping)
        renamed_edits.append(FileEdit(edit.path, edit.old, renamed.source, edit.mode, edit.python_funcnames))
    if not maps:
        return None
    cid = case_id(seed, key)
    defects: list[Defect] = []
    for number, defect in enumerate(original.defects, start=1):
        locations = []
        for loc in defect.locations:
            moved = _moved(loc, maps[loc.path]) if loc.path in maps else loc
            if moved is None:
                return None
            locations.append(moved)
        defects.append(defect.model_copy(update={
            "defect_id": f"{cid}-d{number}",
            "locations": locations,
            "symbols": _renamed(defect.symbols, names),
            "removed_identifiers": _renamed(defect.removed_identifiers, names),
            "added_identifiers": _renamed(defect.added_identifiers, names),
            "description": f"{defect.description} (locals renamed: "
                           + ", ".join(f"{a}→{b}" for a, b in sorted(names.items())) + ")",
        }))  # fmt: skip
    gold = original.model_copy(update={"case_id": cid, "variant_of": original.case_id, "defects": defects,
                                       "validation": None})  # fmt: skip
    return make_case(seed, key, base, renamed_edits, gold)


def _tree(repo: Repository, commit: str, paths: list[str]) -> dict[str, tuple[str, str]]:
    """``path → (mode, blob)`` at ``commit`` for the regular files among ``paths``."""
    out = repo.run("ls-tree", "-z", commit, "--", *paths, check=False)
    found: dict[str, tuple[str, str]] = {}
    for entry in out.split("\0"):
        if entry:
            meta, _, path = entry.partition("\t")
            mode, kind, blob = meta.split()
            if kind == "blob":
                found[path] = (mode, blob)
    return found


def fix_reversal_edits(mined: MinedCase, repo: Repository, head: HeadTree) -> tuple[FileEdit, ...] | None:
    """The file texts of a fix reversal (fix → parent), or None when a file was added,
    deleted, renamed, changed mode or is not text: such patches are not rewritten."""
    provenance = mined.gold.provenance
    if not provenance.commit or not provenance.parent:
        return None
    paths = list(mined.case.paths)
    fixed = _tree(repo, provenance.commit, paths)
    buggy = _tree(repo, provenance.parent, paths)
    if set(fixed) != set(paths) or set(buggy) != set(paths):
        return None
    if any(fixed[p][0] != buggy[p][0] for p in paths):
        return None
    blobs = head.blobs.get_many(list({b for p in paths for b in (fixed[p][1], buggy[p][1])}))
    edits = []
    for path in paths:
        old, new = blobs.get(fixed[path][1]), blobs.get(buggy[path][1])
        if old is None or new is None or b"\0" in old or b"\0" in new:
            return None
        try:
            edits.append(FileEdit(path, old.decode("utf-8"), new.decode("utf-8"), fixed[path][0],
                                  head.python_funcnames(path)))  # fmt: skip
        except UnicodeDecodeError:
            return None
    return tuple(edits)
