"""Rename variants (SPEC 3.4, seed 001): the same defect, in code whose locals have other names.

For a defect case, the locals of every function holding a gold location are renamed
consistently (scope-aware, :mod:`rename`) in the patched text, and the very same rename is
applied to the base text. The variant's *base* is the original base plus a silent base
patch (``Case.base_patch``: the rename alone; validation and the exported trees apply it,
a reviewer never sees it as a change), and its patch is the defect alone in the renamed
code: exactly as many changed lines as the original's. A file whose two sides cannot take
the same rename (the defect binds or unbinds a renamed local) keeps its original text.
Gold lines are recomputed in the variant's tree through a line map, and gold names follow
the rename. A variant is a case of its own (new neutral id, ``variant_of`` = the original)
and is validated like any case.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..git.repo import Repository
from ..records import Defect, GoldRecord, Location
from .edits import FileEdit, SyntheticCase, compiles, make_case
from .fix_reversal import MinedCase
from .head import HeadTree
from .naming import case_id
from .paths import language_of
from .rename import rename_in_functions
from .textdiff import file_diff, line_map

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


def _changed_lines(diff: bytes) -> int:
    return sum(1 for line in diff.split(b"\n") if line[:1] in (b"+", b"-") and not line.startswith((b"+++", b"---")))


def _old_lines(new: str, old: str, lines: list[int]) -> list[int]:
    """``lines`` of ``new`` placed in ``old``: where they survived, else their nearest
    surviving neighbour (a line the edit added has no place of its own)."""
    where = line_map(new, old)
    placed = []
    for line in lines:
        for step in range(60):
            hit = where.get(line - step) or where.get(line + step)
            if hit:
                placed.append(hit)
                break
    return placed


#: Calls whose keywords belong to another callable (``partial(f, x=1)``): any function's.
_FORWARDING = frozenset({"partial", "partialmethod", "submit", "run_in_executor", "apply_async", "call_soon",
                         "call_later", "create_task", "Thread", "Process", "Timer", "wraps"})  # fmt: skip
#: Methods whose callers name the class, not the method: any keyword anywhere blocks.
_CLASS_CALLED = frozenset({"__init__", "__new__", "__call__", "__post_init__", "__init_subclass__"})
ANY = "*"


def keyword_names(head: HeadTree) -> frozenset[tuple[str, str]]:
    """``(callee, keyword)`` for every keyword argument of every call in the Python files at
    HEAD (sources and tests). The callee is the called name (``f`` of ``f(...)`` or
    ``obj.f(...)``), or :data:`ANY` when it cannot be told (``x[0](...)``, ``partial``)."""
    pairs: set[tuple[str, str]] = set()
    paths = [p for p in head.files if p.endswith(".py")]
    for text in head.texts(paths).values():
        if not text:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.keywords:
                continue
            func = node.func
            callee = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ANY
            if callee in _FORWARDING:
                callee = ANY
            pairs.update((callee, k.arg) for k in node.keywords if k.arg)
    return frozenset(pairs)


def parameter_rule(keywords: frozenset[tuple[str, str]]) -> Callable[[str, str], bool]:
    """Whether parameter ``param`` of function ``function`` may be renamed: no call to a
    callee of that name (or to an unknown callee) passes it by keyword; for methods called
    through their class (``__init__``), no call anywhere does."""
    anywhere = {kw for _callee, kw in keywords}
    unknown = {kw for callee, kw in keywords if callee == ANY}

    def allowed(function: str, param: str) -> bool:
        if function in _CLASS_CALLED:
            return param not in anywhere
        return param not in unknown and (function, param) not in keywords

    return allowed


def _renamed_both(edit: FileEdit, lines: list[int], key: str,
                  params: Callable[[str, str], bool] | None = None) -> tuple[str, str, dict[str, str]] | None:  # fmt: skip
    """(renamed base text, renamed patched text, the rename), or None when the two sides
    cannot take the same rename and keep the defect's diff the same size.

    The patched side chooses the names; the base side takes those it can (a local the
    defect adds or removes exists on one side only); the patched side is then renamed
    again with just those, so both carry exactly the same rename."""
    renamed_new = rename_in_functions(edit.new, lines, key, params=params)
    if renamed_new is None:
        return None
    old_lines = _old_lines(edit.new, edit.old, lines)
    renamed_old = rename_in_functions(edit.old, old_lines, key, mapping=renamed_new.mapping, params=params)
    if renamed_old is None:
        return None
    if renamed_old.mapping != renamed_new.mapping:
        renamed_new = rename_in_functions(edit.new, lines, key, mapping=renamed_old.mapping, params=params)
        if renamed_new is None or renamed_new.mapping != renamed_old.mapping:
            return None
    if not compiles(renamed_new.source, edit.path) or not compiles(renamed_old.source, edit.path):
        return None
    before = _changed_lines(file_diff(edit.path, edit.old, edit.new))
    after = _changed_lines(file_diff(edit.path, renamed_old.source, renamed_new.source))
    if before != after:
        return None
    return renamed_old.source, renamed_new.source, renamed_new.mapping


def rename_variant(seed: int, original: GoldRecord, base: str, edits: tuple[FileEdit, ...],
                   keywords: frozenset[tuple[str, str]] | None = None) -> SyntheticCase | None:  # fmt: skip
    """The rename variant of a defect case, or None when its functions have no local that
    both sides of the edit can rename the same way.

    Args:
        keywords: the keyword arguments of the repository's calls (:func:`keyword_names`);
            parameters no call names are renamed too (:func:`parameter_rule`). None:
            parameters keep their names.
    """
    params = None if keywords is None else parameter_rule(keywords)
    key = f"rename:{original.case_id}"
    renamed_edits: list[FileEdit] = []
    base_edits: list[FileEdit] = []
    maps: dict[str, dict[int, int]] = {}
    names: dict[str, str] = {}
    for edit in edits:
        lines = [line for d in original.defects for loc in d.locations if loc.path == edit.path
                 for line in range(max(loc.start_line, 1), loc.end_line + 1)]  # fmt: skip
        both = None
        if lines and language_of(edit.path) == "python" and edit.old and edit.new:
            both = _renamed_both(edit, lines, f"{seed}:{key}:{edit.path}", params)
        if both is None:
            renamed_edits.append(edit)
            continue
        old, new, mapping = both
        maps[edit.path] = line_map(edit.new, new)
        names.update(mapping)
        base_edits.append(FileEdit(edit.path, edit.old, old, edit.mode, edit.python_funcnames))
        renamed_edits.append(FileEdit(edit.path, old, new, edit.mode, edit.python_funcnames))
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
    made = make_case(seed, key, base, renamed_edits, gold)
    base_patch = f"patches/{cid}.base.diff"
    case = made.mined.case.model_copy(update={"base_patch": base_patch})
    mined = MinedCase(case, made.mined.gold, made.mined.patch, {base_patch: b"".join(e.diff() for e in base_edits)})
    return SyntheticCase(mined, made.edits)


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
