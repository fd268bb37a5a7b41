"""The labelling rubric a run directory's labels are given under: built in, or a user's file.

An experiment may name a rubric file (``rubric = "rubric.md"``, relative to the experiment
file). Its SHA-256 is frozen into the registration (``frozen.rubric``), and its version is
``user-`` and the first 12 hex digits of that digest. Every label row records the rubric
version it was given under; a label under any other version than the latest registered
one does not count (its claim is queued again), and stays in the store as it was.
Without a rubric file the built-in rubric (:data:`~reviewbench.evidence.records.RUBRIC_VERSION`)
applies.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import IntegrityError, UsageError
from ..store.runs import REGISTRATION_FILE, REGISTRATION_SHA256, RUNS_DB
from .records import RUBRIC_VERSION

__all__ = ["BUILT_IN", "MAX_RUBRIC_BYTES", "Rubric", "load_rubric", "registered_rubric", "rubric_fingerprint"]

MAX_RUBRIC_BYTES = 256 * 1024
"""A rubric file past this size is refused (it is shown to every rater on every page)."""


@dataclass(frozen=True)
class Rubric:
    """A rubric version, and where its text came from."""

    version: str
    path: str | None = None
    sha256: str | None = None
    text: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """What the registration freezes (``frozen.rubric``)."""
        return {"version": self.version, "path": self.path or "built-in", "sha256": self.sha256}


BUILT_IN = Rubric(version=RUBRIC_VERSION)
"""The rubric of the labelling app's own texts (classes and the five questions)."""


def load_rubric(path: Path) -> Rubric:
    """The rubric in ``path`` (UTF-8 text), versioned by its SHA-256.

    Raises:
        UsageError: unreadable, a symbolic link, too large, empty or not UTF-8.
    """
    if path.is_symlink():
        raise UsageError(f"rubric file {path} is a symbolic link; name the file itself")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"rubric file {path} cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_RUBRIC_BYTES:
        raise UsageError(f"rubric file {path} is {len(data)} bytes; at most {MAX_RUBRIC_BYTES}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"rubric file {path} is not UTF-8 text") from None
    if not text.strip():
        raise UsageError(f"rubric file {path} is empty")
    digest = hashlib.sha256(data).hexdigest()
    return Rubric(version=f"user-{digest[:12]}", path=str(path.resolve()), sha256=digest, text=text)


def rubric_fingerprint(base: Path, name: str | None) -> dict[str, Any]:
    """``frozen.rubric`` of an experiment whose file (at ``base``) names rubric ``name``."""
    return (BUILT_IN if name is None else load_rubric(base / name)).as_dict()


def _registration(rundir: Path) -> dict[str, Any] | None:
    """The latest registered version's frozen inputs, the file checked against the digest
    the run store recorded (as ``score`` checks it)."""
    import sqlite3
    from urllib.parse import quote

    path = rundir / REGISTRATION_FILE
    if not path.is_file() or path.is_symlink():
        return None
    data = path.read_bytes()
    recorded = None
    if (rundir / RUNS_DB).is_file():
        try:
            db = sqlite3.connect(f"file:{quote(str((rundir / RUNS_DB).resolve()))}?mode=ro", uri=True)
            try:
                row = db.execute("SELECT value FROM meta WHERE key = ?", (REGISTRATION_SHA256,)).fetchone()
            finally:
                db.close()
            recorded = row[0] if row else None
        except sqlite3.DatabaseError:
            recorded = None
    if recorded and hashlib.sha256(data).hexdigest() != recorded:
        raise IntegrityError(f"{path} changed since the runs recorded it; the rubric it registers cannot be "
                             "trusted: restore it")  # fmt: skip
    try:
        versions = json.loads(data)["versions"]
        frozen: dict[str, Any] = versions[-1]["frozen"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise UsageError(f"{path} is not a readable registration; restore it or register anew") from None
    return frozen


def registered_rubric(rundir: Path, *, with_text: bool = False) -> Rubric:
    """The rubric of ``rundir``'s latest registered version (the built-in one when none is
    registered, or the registration predates rubric files). ``with_text`` reads the file
    too (the app shows it), refused when it no longer has the registered digest.

    Raises:
        IntegrityError: the registration, or with ``with_text`` the rubric file, changed.
        UsageError: the registration cannot be read.
    """
    frozen = _registration(rundir)
    entry = (frozen or {}).get("rubric")
    if not isinstance(entry, dict) or not entry.get("sha256"):
        return BUILT_IN
    rubric = Rubric(version=str(entry["version"]), path=str(entry.get("path")), sha256=str(entry["sha256"]))
    if not with_text:
        return rubric
    current = load_rubric(Path(str(rubric.path)))
    if current.sha256 != rubric.sha256:
        raise IntegrityError(f"rubric file {rubric.path} changed since registration (version {rubric.version}); "
                             "restore it, or register a new version ('reviewbench register --new-version'): "
                             "labels under the old rubric are then queued again")  # fmt: skip
    return current
