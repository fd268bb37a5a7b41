"""Neutral case ids and titles: nothing a reviewer sees may reveal the source of a case."""

from __future__ import annotations

import hashlib
import random
import re
import unicodedata
from pathlib import PurePosixPath

__all__ = ["case_id", "neutral_title"]

_TEMPLATES = (
    "Update {name} module",
    "Refactor {name}",
    "Adjust {name} handling",
    "Revise {name} logic",
    "Tidy up {name}",
    "Change {name} implementation",
    "Rework parts of {name}",
    "Touch up {name} code",
)
# Words that would tell a reviewer what to look for.
_TELLING = re.compile(r"fix|bug|revert|regress|broken|patch|hotfix|defect|error", re.IGNORECASE)


def case_id(seed: int, source: str) -> str:
    """A stable id for ``source`` (e.g. a commit) under ``seed``, revealing neither."""
    digest = hashlib.sha256(f"reviewbench:{seed}:{source}".encode()).hexdigest()
    return f"case-{digest[:12]}"


#: Longest module name a title carries (a name is a hint to the reviewer, not the path).
MAX_NAME = 40


def _sanitised(name: str) -> str:
    """``name`` with only letters, digits, marks, single spaces and ``_.-`` (in any script):
    no control, format or bidirectional character (U+202E made "Tidy up <U+202E>yp.exe"), no
    newline, no markup; at most ``MAX_NAME`` characters."""
    kept = "".join(c for c in name if c in "_.- " or unicodedata.category(c)[0] in "LNM")
    return " ".join(kept.split()).strip(".-")[:MAX_NAME].strip()


def _module_name(path: str) -> str:
    pure = PurePosixPath(path)
    for raw in (pure.stem, *(p for p in reversed(pure.parent.parts))):
        candidate = _sanitised(raw)
        if candidate and candidate not in {"__init__", "index", "mod", "main", "src", "lib"} and not _TELLING.search(candidate):
            return candidate
    return "core"


def neutral_title(seed: int, source: str, paths: list[str]) -> str:
    """A plain title in the voice of an ordinary change, chosen deterministically."""
    rng = random.Random(f"{seed}:{source}")
    names = sorted({_module_name(p) for p in paths})
    name = names[0] if len(names) == 1 else f"{names[0]} and related"
    return rng.choice(_TEMPLATES).format(name=name)
