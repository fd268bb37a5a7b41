"""Rename variants: the same defect, in code whose locals have other names.

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

When a touched function has no local to rename (``def is_expired(self): ...``), or the
defect lies at module level, the name the defect touches (the function, its class, or the
module-level name the line binds) is renamed instead, with every use of it in the
repository (:mod:`identifiers`): the other files' renames go into the base patch too.
A defect case that gets no variant is counted by :class:`NoVariant` reason.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable
from enum import StrEnum

from ..git.repo import Repository
from ..records import Defect, GoldRecord, Location
from .edits import FileEdit, SyntheticCase, compiles, make_case
from .fix_reversal import MinedCase
from .head import HeadTree
from .identifiers import RepositoryNames, touched_names
from .naming import case_id
from .paths import SCRIPT_LANGUAGES, language_of
from .rename import _IDENTIFIER, Renamed, function_spans, qualified_spans, rename_in_functions
from .script_rename import rename_in_script_functions, script_function_spans
from .textdiff import file_diff, line_map, split_lines

__all__ = ["NoVariant", "fix_reversal_edits", "rename_variant"]


class NoVariant(StrEnum):
    """Why a defect case got no rename variant, from the earliest obstacle to the latest
    (a case with several files is counted under the furthest any of them got)."""

    FILES = "files_not_text"
    """A file was added, deleted, moved, changed mode or is not UTF-8 text."""
    NOT_PYTHON = "not_python"
    """No gold line lies in a Python, JavaScript or TypeScript file (the value keeps its old name)."""
    STUBS_ONLY = "stubs_only"
    """Every gold line is in a type stub (``.pyi``): declarations, no code around them to rename."""
    OUTSIDE_FUNCTIONS = "outside_functions"
    """Every gold line is outside any function (module level or a class body: imports,
    ``__version__``, a class docstring), and no name it binds or reads, nor the class, can
    be renamed safely."""
    NO_SAFE_NAME = "no_safe_name"
    """The touched functions have no local, parameter or own name that can be renamed safely."""
    SIDES_DIFFER = "sides_differ"
    """The defect binds or unbinds the renamed names: both sides cannot take the same rename."""
    DIFF_CHANGED = "diff_changed"
    """The rename changes how many lines the defect's diff changes."""
    GOLD_LOST = "gold_lost"
    """A gold line has no place in the renamed tree."""


_ORDER = list(NoVariant)


def _furthest(reasons: list[NoVariant]) -> NoVariant:
    return max(reasons, key=_ORDER.index) if reasons else NoVariant.NOT_PYTHON


def _moved(location: Location, lines: dict[int, int]) -> Location | None:
    if location.start_line == 0:
        return location
    start, end = lines.get(location.start_line), lines.get(location.end_line)
    if start is None or end is None:
        return None
    return location.model_copy(update={"start_line": start, "end_line": end})


def _rename_map(text: str, renamed: str) -> dict[int, int]:
    """Where each line of ``text`` is in ``renamed``. A rename rewrites lines in place and
    never adds or removes one, so that is line for line; a line map by content could
    leave a renamed line without a place when many neighbours changed."""
    count = len(split_lines(text))
    if count == len(split_lines(renamed)):
        return {n: n for n in range(1, count + 2)}  # count + 1: a deletion at the very end
    return line_map(text, renamed)


def _renamed(values: list[str], names: dict[str, str]) -> list[str]:
    return sorted({names.get(v, v) for v in values})


def _changed_lines(diff: bytes) -> int:
    return sum(1 for line in diff.split(b"\n") if line[:1] in (b"+", b"-") and not line.startswith((b"+++", b"---")))


def _old_lines(new: str, old: str, lines: list[int]) -> list[int]:
    """``lines`` of ``new`` placed in ``old``: in the function of the same qualified name
    (its first line) when the line lies in one, else where the line survived, else its
    nearest surviving neighbour (a line the edit added has no place of its own). A
    neighbour can sit in another function — a method the defect deleted next to it — which
    would rename the wrong function on the base side."""
    where = line_map(new, old)
    new_spans, old_spans = qualified_spans(new), qualified_spans(old)
    placed = []
    for line in lines:
        around = [s for s in new_spans if s[0] <= line <= s[1]]
        if around:
            name = min(around, key=lambda s: s[1] - s[0])[2]
            same = [s for s in old_spans if s[2] == name]
            if len(same) == 1:
                placed.append(same[0][0])
                continue
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


def _script_renamer(language: str) -> tuple[Callable[..., Renamed | None], Callable[[str], list[tuple[int, int]]]]:
    """The JavaScript/TypeScript renamer and function spans, called as the Python ones are."""

    def rename(source: str, lines: list[int], key: str, *, mapping: dict[str, str] | None = None,
               params: object = None, taken: set[str] | frozenset[str] = frozenset()) -> Renamed | None:  # fmt: skip
        return rename_in_script_functions(source, language, lines, key, mapping=mapping, taken=taken)

    return rename, lambda source: script_function_spans(source, language)


def _renamed_both(edit: FileEdit, lines: list[int], key: str,
                  params: Callable[[str, str], bool] | None = None,
                  ) -> tuple[str, str, dict[str, str]] | NoVariant:  # fmt: skip
    """(renamed base text, renamed patched text, the rename), or why the two sides
    cannot take the same rename of locals and keep the defect's diff the same size.

    The patched side chooses the names (fresh on both sides); the base side takes those it
    can (a local the defect adds or removes exists on one side only); the patched side is
    then renamed again with just those, so both carry exactly the same rename."""
    language = language_of(edit.path)
    rename, spans_of = (_script_renamer(language) if language in SCRIPT_LANGUAGES
                        else (rename_in_functions, function_spans))  # fmt: skip
    old_words = set(_IDENTIFIER.findall(edit.old))
    renamed_new = rename(edit.new, lines, key, params=params, taken=old_words)
    if renamed_new is None:
        spans = spans_of(edit.new)
        inside = any(a <= line <= b for line in lines for a, b in spans)
        return NoVariant.NO_SAFE_NAME if inside else NoVariant.OUTSIDE_FUNCTIONS
    old_lines = _old_lines(edit.new, edit.old, lines)
    renamed_old = rename(edit.old, old_lines, key, mapping=renamed_new.mapping, params=params)
    if renamed_old is None:
        return NoVariant.SIDES_DIFFER
    if renamed_old.mapping != renamed_new.mapping:
        renamed_new = rename(edit.new, lines, key, mapping=renamed_old.mapping, params=params)
        if renamed_new is None or renamed_new.mapping != renamed_old.mapping:
            return NoVariant.SIDES_DIFFER
    if not compiles(renamed_new.source, edit.path) or not compiles(renamed_old.source, edit.path):
        return NoVariant.SIDES_DIFFER
    if not _same_size(edit, renamed_old.source, renamed_new.source):
        return NoVariant.DIFF_CHANGED
    return renamed_old.source, renamed_new.source, renamed_new.mapping


def _same_size(edit: FileEdit, old: str, new: str) -> bool:
    before = _changed_lines(file_diff(edit.path, edit.old, edit.new))
    return before == _changed_lines(file_diff(edit.path, old, new))


def _gold_lines(original: GoldRecord, path: str) -> list[int]:
    return [line for d in original.defects for loc in d.locations if loc.path == path
            for line in range(max(loc.start_line, 1), loc.end_line + 1)]  # fmt: skip


def _rename_touched_names(edits: list[FileEdit], sides: dict[str, tuple[str, str]], original: GoldRecord,
                          names: RepositoryNames, key: str, *, locals_renamed: bool = False,
                          ) -> tuple[dict[str, str], dict[str, tuple[str, str]]] | None:  # fmt: skip
    """Rename the names the defect touches (its functions, or module-level names) with all
    their uses, on top of ``sides`` (``path → (base, patched)``, updated in place).

    Returns:
        (old name → new name, ``path → (text, renamed)`` of other files), or None when no
        touched name could be renamed with the defect's diff keeping its size.
    """
    wanted: list[str] = []
    fallbacks: list[str] = []
    for edit in edits:
        found, fallback, _outside = touched_names(edit.new, _gold_lines(original, edit.path))
        wanted.extend(found)
        fallbacks.extend(fallback)
    rng = random.Random(f"identifiers:{key}")
    renamed: dict[str, str] = {}
    others: dict[str, tuple[str, str]] = {}
    primary = list(dict.fromkeys(wanted))[:3]
    for name in primary + [n for n in dict.fromkeys(fallbacks) if n not in primary][:2]:
        if name not in primary and (renamed or locals_renamed):
            break  # a class is renamed only when nothing nearer could be
        done = names.rename(name, sides, rng, current={p: after for p, (_b, after) in others.items()})
        if done is None:
            continue
        new, edited, rest = done
        if not all(_same_size(e, *edited[e.path]) for e in edits if e.path in edited):
            continue
        sides.update(edited)
        for path, (before, after) in rest.items():
            others[path] = (others[path][0] if path in others else before, after)
        renamed[name] = new
    return (renamed, others) if renamed else None


def rename_variant(seed: int, original: GoldRecord, base: str, edits: tuple[FileEdit, ...],
                   keywords: frozenset[tuple[str, str]] | None = None,
                   names: RepositoryNames | None = None) -> SyntheticCase | NoVariant:  # fmt: skip
    """The rename variant of a defect case, or why it has none.

    Args:
        keywords: the keyword arguments of the repository's calls (:func:`keyword_names`);
            parameters no call names are renamed too (:func:`parameter_rule`). None:
            parameters keep their names.
        names: the repository at ``base``; with it, the names the defect touches (its
            functions, or module-level names) are renamed too, with all their uses.
    """
    params = None if keywords is None else parameter_rule(keywords)
    key = f"rename:{original.case_id}"
    sides: dict[str, tuple[str, str]] = {}
    mapping: dict[str, str] = {}
    reasons: list[NoVariant] = []
    python = [e for e in edits if _gold_lines(original, e.path) and language_of(e.path) == "python"
              and e.old and e.new]  # fmt: skip
    # JavaScript/TypeScript files get their locals renamed; the names a defect touches
    # (functions, module-level names) are renamed across the repository for Python only.
    scripts = [e for e in edits if _gold_lines(original, e.path) and language_of(e.path) in SCRIPT_LANGUAGES
               and e.old and e.new]  # fmt: skip
    for edit in python + scripts:
        both = _renamed_both(edit, _gold_lines(original, edit.path), f"{seed}:{key}:{edit.path}", params)
        if isinstance(both, NoVariant):
            reasons.append(both)
            continue
        old, new, renamed = both
        sides[edit.path] = (old, new)
        mapping.update(renamed)
    others: dict[str, tuple[str, str]] = {}
    identifiers: dict[str, str] = {}
    if names is not None and python:
        current = {e.path: sides.get(e.path, (e.old, e.new)) for e in python}
        touched = _rename_touched_names(python, current, original, names, f"{seed}:{key}", locals_renamed=bool(sides))
        if touched is not None:
            identifiers, others = touched
            sides.update(current)
            mapping.update(identifiers)
    if not sides:
        if python and all(e.path.endswith(".pyi") for e in python):
            return NoVariant.STUBS_ONLY
        return _furthest(reasons)
    maps = {e.path: _rename_map(e.new, sides[e.path][1]) for e in edits if e.path in sides}
    cid = case_id(seed, key)
    defects: list[Defect] = []
    for number, defect in enumerate(original.defects, start=1):
        locations = []
        for loc in defect.locations:
            moved = _moved(loc, maps[loc.path]) if loc.path in maps else loc
            if moved is None:
                return NoVariant.GOLD_LOST
            if moved.symbol:
                moved = moved.model_copy(update={"symbol": ".".join(identifiers.get(p, p) for p in moved.symbol.split("."))})
            locations.append(moved)
        defects.append(defect.model_copy(update={
            "defect_id": f"{cid}-d{number}",
            "locations": locations,
            "symbols": _renamed(defect.symbols, mapping),
            "removed_identifiers": _renamed(defect.removed_identifiers, mapping),
            "added_identifiers": _renamed(defect.added_identifiers, mapping),
            "description": f"{defect.description} (renamed: "
                           + ", ".join(f"{a}→{b}" for a, b in sorted(mapping.items())) + ")",
        }))  # fmt: skip
    gold = original.model_copy(update={"case_id": cid, "variant_of": original.case_id, "defects": defects,
                                       "validation": None})  # fmt: skip
    renamed_edits = [FileEdit(e.path, *sides[e.path], e.mode, e.python_funcnames) if e.path in sides else e
                     for e in edits]  # fmt: skip
    base_edits = [FileEdit(e.path, e.old, sides[e.path][0], e.mode, e.python_funcnames) for e in edits
                  if e.path in sides and sides[e.path][0] != e.old]  # fmt: skip
    if names is not None:
        for path, (before, after) in sorted(others.items()):
            entry = names.tree.files[path]
            base_edits.append(FileEdit(path, before, after, entry.mode, names.tree.python_funcnames(path)))
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
