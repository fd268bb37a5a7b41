"""Automatic naming: does a located finding's claim name the defect?

Naming is not yet identification: a style remark names the function it sits in. A naming
finding identifies its defect automatically only when the same condition said nothing
naming it on the defect's mirror (``discriminate.py``); this module decides the naming.

A finding near the change is *located*; its claim *names* the defect when it says what
changed, in this order of evidence:

1. ``removed_identifier`` / ``added_identifier``: an identifier the fix removed or added;
   ``changed_identifier``: another name of the changed lines (a gold symbol that is not
   where it sits: a mutation's operands);
2. ``hint_term``: one of the gold hint terms;
3. ``paraphrase``: a close paraphrase of the gold description, by rapidfuzz's
   ``token_set_ratio`` at or above :data:`PARAPHRASE_MIN` with at least
   :data:`PARAPHRASE_SHARED` content words in common (so a two-word claim that happens to
   be a subset of the description does not count).

The defect's *enclosing symbol* (its locations' ``symbol``, any part of it) is never evidence:
it says where, not what is wrong. Every remark about a function names it ("`parse` would
read better with a docstring", an analyser's "Missing return type annotation for public
function `cached`"), and a reviewer that speaks only on defect-shaped diffs (two hunks,
more removed than added lines) is not echoed on the mirror, whose shape is the other way:
on the demo corpus such a probe was credited with 2 of 20 defects by naming functions. An
identifier the fix touched that is also a name of where it sits is no evidence either.

Names and hint terms match as whole words, case-insensitively, in the claim only (the raw
line also holds the path). Short and generic identifiers (Python keywords and builtins,
dunder names such as ``__init__``, fewer than four characters — the all-runs
``[A-Za-z_][A-Za-z0-9_]{3,}``) are not evidence. An identifier must also be
*code-shaped* (an underscore, a digit, or a capital after its first letter:
``retry_limit``, ``PyJWKSet``) or quoted as code in the claim (`` `subtotal` ``), because
the identifiers a fix touches include plain words (``annotations`` from ``from __future__
import annotations``, words of a message string) that any linter remark may contain. A
claim that says none of these may still identify the defect in other words: that is what
judge and human labels settle.

A *rule remark* — a claim that opens with an analyser's rule code (``ANN201``, ``C901``,
``PLR0913``: what the ``sarif`` reviewer writes) — quotes what its rule's template quotes,
plain names included (``ANN001 … argument `attr```), so there only code-shaped identifiers
count (``F841 Local variable `subtotal` is assigned to but never used``).
"""

from __future__ import annotations

import builtins
import keyword
import re
from enum import StrEnum
from functools import lru_cache

from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from ..records import Defect

__all__ = ["PARAPHRASE_MIN", "PARAPHRASE_SHARED", "IdentifiedBy", "evidence_name", "identify"]

PARAPHRASE_MIN = 85.0
"""rapidfuzz ``token_set_ratio`` (0-100) from which a claim paraphrases the description."""
PARAPHRASE_SHARED = 3
"""Content words (4+ letters, not stop words) claim and description must share."""

_GENERIC = frozenset(w.lower() for w in (*keyword.kwlist, *dir(builtins), "self", "cls", "args", "kwargs"))
_STOP = frozenset(
    "this that with from into when then than there their which would could should have been does done "
    "line lines code file change changes changed function value values undoes fixes fixed issue".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,}")
_UNDOES = re.compile(r"^Undoes [0-9a-f]+:\s*")
_REVERSAL = re.compile(r'^Undoes [0-9a-f]+ "(?P<subject>.*)"(?: in [^:]*)?: the defect that commit fixed is back$', re.S)
"""``mine``'s fix-reversal description: only the fix's subject says what the defect is."""
_RULE_CODE = re.compile(r"^\s*\[?[A-Z]{1,6}[0-9]{2,5}\]?(?:\s|:|$)")
"""An analyser's rule code opening a claim (ruff, flake8, pylint, bandit): a rule remark."""


class IdentifiedBy(StrEnum):
    """What in a claim named the defect: what changed, never where (the enclosing symbol)."""

    REMOVED_IDENTIFIER = "removed_identifier"
    ADDED_IDENTIFIER = "added_identifier"
    CHANGED_IDENTIFIER = "changed_identifier"
    """Another name of the changed lines (a gold symbol: a mutation's operands)."""
    HINT_TERM = "hint_term"
    PARAPHRASE = "paraphrase"


def _usable(name: str) -> bool:
    dunder = name.startswith("__") and name.endswith("__")
    return len(name) >= 4 and name.lower() not in _GENERIC and not dunder


def evidence_name(name: str) -> bool:
    """Whether naming ``name`` can count as evidence (not short, generic or a dunder)."""
    return _usable(name)


def _code_shaped(name: str) -> bool:
    """An underscore (leading ones too: ``_methodkey`` is no word of prose), a digit, or an
    inner capital."""
    return "_" in name or any(c.isdigit() for c in name) or any(c.isupper() for c in name[1:])


@lru_cache(maxsize=4096)
def _pattern(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    if not terms:
        return None
    alternatives = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_])(?:{alternatives})(?![A-Za-z0-9_])", re.IGNORECASE)


def _names(claim: str, names: list[str] | tuple[str, ...]) -> bool:
    pattern = _pattern(tuple(sorted({n for n in names if _usable(n)})))
    return pattern is not None and pattern.search(claim) is not None


@lru_cache(maxsize=4096)
def _quoted(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    if not terms:
        return None
    return re.compile("`(?:" + "|".join(re.escape(t) for t in terms) + ")`", re.IGNORECASE)


def _names_identifier(claim: str, names: list[str], *, quotes_count: bool = True) -> bool:
    """Code-shaped names as whole words; plain-word names only when quoted as code, and
    not at all when ``quotes_count`` is false (a rule remark: the analyser's template puts
    the plain names of where it sits in backticks, ``ANN001 … argument `attr```)."""
    usable = [n for n in names if _usable(n)]
    if _names(claim, [n for n in usable if _code_shaped(n)]):
        return True
    if not quotes_count:
        return False
    pattern = _quoted(tuple(sorted({n for n in usable if not _code_shaped(n)})))
    return pattern is not None and pattern.search(claim) is not None


def _content(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP and w.lower() not in _GENERIC}


def paraphrases(claim: str, description: str) -> bool:
    """Whether ``claim`` is a close paraphrase of the gold ``description``."""
    reversal = _REVERSAL.match(description)
    description = reversal["subject"] if reversal else _UNDOES.sub("", description)
    if len(_content(claim) & _content(description)) < PARAPHRASE_SHARED:
        return False
    return fuzz.token_set_ratio(claim, description, processor=default_process) >= PARAPHRASE_MIN


def identify(claim: str, defect: Defect) -> IdentifiedBy | None:
    """How ``claim`` names ``defect`` (None: it does not, as far as automatic evidence goes)."""
    if not claim:
        return None
    rule = _RULE_CODE.match(claim) is not None
    touched = {*defect.removed_identifiers, *defect.added_identifiers}
    where = {part.lower() for loc in defect.locations if loc.symbol for part in loc.symbol.split(".")}

    def what(names: list[str] | set[str]) -> list[str]:
        return sorted(n for n in names if n.lower() not in where)

    for by, names in ((IdentifiedBy.REMOVED_IDENTIFIER, defect.removed_identifiers),
                      (IdentifiedBy.ADDED_IDENTIFIER, defect.added_identifiers),
                      (IdentifiedBy.CHANGED_IDENTIFIER, [s for s in defect.symbols if s not in touched])):  # fmt: skip
        if _names_identifier(claim, what(names), quotes_count=not rule):
            return by
    hints = _pattern(tuple(sorted({h for h in defect.hint_terms if h.strip()})))
    if hints is not None and hints.search(claim):
        return IdentifiedBy.HINT_TERM
    if defect.description and paraphrases(claim, defect.description):
        return IdentifiedBy.PARAPHRASE
    return None
