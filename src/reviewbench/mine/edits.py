"""Cases made by editing files at a base commit: mutations, controls and rename variants.

Fix reversals take their patch from git; these cases write theirs from the file texts
before and after the edit (:mod:`textdiff`), and every one is checked before it is kept:
the edited Python compiles and the patch is a well-formed diff of exactly those texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..records import Case, GoldRecord, Location
from .fix_reversal import MinedCase
from .languages.ecmascript import parse
from .naming import case_id, neutral_title
from .paths import SCRIPT_LANGUAGES, language_of
from .symbols import SymbolIndex
from .textdiff import changed_span, file_diff

__all__ = ["FileEdit", "SyntheticCase", "compiles", "edited_location", "make_case"]


@dataclass(frozen=True)
class FileEdit:
    """One file's text at the base and after the patch."""

    path: str
    old: str
    new: str
    mode: str = "100644"
    python_funcnames: bool = False

    def diff(self) -> bytes:
        return file_diff(self.path, self.old, self.new, mode=self.mode, python_funcnames=self.python_funcnames)


@dataclass(frozen=True)
class SyntheticCase:
    """A case ready to write, with the edits it was made of (rename variants start from them)."""

    mined: MinedCase
    edits: tuple[FileEdit, ...]

    @property
    def case_id(self) -> str:
        return self.mined.case.case_id


def compiles(source: str, path: str) -> bool:
    """Whether ``source`` is valid Python for the interpreter running reviewbench (for a
    JavaScript or TypeScript path: whether it parses without an error node)."""
    if language_of(path) in SCRIPT_LANGUAGES:
        return not parse(source, language_of(path) or "javascript").root_node.has_error
    try:
        compile(source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def edited_location(path: str, old: str, new: str) -> Location:
    """Where one contiguous edit of ``path`` lies in ``new``, labelled with its enclosing
    symbol: a mutation's gold location, and its mirror's ``changed``."""
    start, end = changed_span(old, new)
    return Location(path=path, start_line=start, end_line=end, symbol=SymbolIndex(new, language_of(path)).at(start))


def make_case(seed: int, key: str, base: str, edits: Sequence[FileEdit], gold: GoldRecord) -> SyntheticCase:
    """Assemble the reviewer-visible case for ``edits``; ``gold`` must carry the id of ``key``.

    Args:
        key: the case's source (e.g. ``mutation:pkg/mod.py:12:boundary_flip``); only its
            hash reaches the case id, and only a neutral title is derived from it.
    """
    cid = case_id(seed, key)
    assert gold.case_id == cid, "gold must be built with case_id(seed, key)"
    paths = [e.path for e in edits]
    case = Case(
        case_id=cid,
        base=base,
        title=neutral_title(seed, key, paths),
        patch=f"patches/{cid}.diff",
        paths=paths,
        language=language_of(paths[0]) if paths else None,
    )
    patch = b"".join(e.diff() for e in edits)
    return SyntheticCase(MinedCase(case=case, gold=gold, patch=patch), tuple(edits))
