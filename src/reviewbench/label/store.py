"""The label store: ``RUNDIR/labels.sqlite``, append-only.

Every submission is a new row with its author, role, UTC time and rubric version; a
correction is a later row, never an edit (triggers refuse UPDATE and DELETE on ``labels``).
The latest row of an author for a claim is that author's label. The store also keeps the
secret that makes packet ids opaque, and the map from opaque claim ids to run-store
comments, written when packets are first built.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Self

from ..errors import CorpusError, UsageError
from ..store.runs import RUNS_DB
from .packets import ClaimRef, PacketSet, build_packets
from .records import ACTIONABILITY_FIELDS, RUBRIC_VERSION, ActionabilityFields, LabelClass, LabelRow

__all__ = ["LABELS_DB", "LabelStore", "Role", "StoredLabel", "check_name", "open_labels"]

LABELS_DB = "labels.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS claims (
    comment_id TEXT NOT NULL,
    part INTEGER NOT NULL,
    parts INTEGER NOT NULL,
    source_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    packet_id TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (comment_id, part)
);
CREATE TABLE IF NOT EXISTS labels (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    comment_id TEXT NOT NULL,
    part INTEGER NOT NULL,
    author TEXT NOT NULL,
    role TEXT NOT NULL,
    probe TEXT NOT NULL DEFAULT '',
    class TEXT NOT NULL,
    defect_id TEXT,
    location INTEGER, consequence INTEGER, evidence INTEGER, safe_fix INTEGER, severity_fit INTEGER,
    triage_s REAL,
    note TEXT,
    reason TEXT,
    source TEXT NOT NULL,
    created_at TEXT NOT NULL,
    rubric_version TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS calibrations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    judge TEXT NOT NULL,
    created_at TEXT NOT NULL,
    result TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS labels_no_update BEFORE UPDATE ON labels
BEGIN SELECT RAISE(ABORT, 'labels are append-only'); END;
CREATE TRIGGER IF NOT EXISTS labels_no_delete BEFORE DELETE ON labels
BEGIN SELECT RAISE(ABORT, 'labels are append-only'); END;
CREATE TRIGGER IF NOT EXISTS calibrations_no_update BEFORE UPDATE ON calibrations
BEGIN SELECT RAISE(ABORT, 'calibrations are append-only'); END;
CREATE TRIGGER IF NOT EXISTS calibrations_no_delete BEFORE DELETE ON calibrations
BEGIN SELECT RAISE(ABORT, 'calibrations are append-only'); END;
"""


class Role(StrEnum):
    """Who wrote a label."""

    RATER = "rater"
    ADJUDICATOR = "adjudicator"
    JUDGE = "judge"


@dataclass(frozen=True)
class StoredLabel:
    """One row of ``labels``: a label with who gave it, when and how."""

    seq: int
    row: LabelRow
    author: str
    role: Role
    probe: str
    source: str
    created_at: str
    rubric_version: str

    @property
    def key(self) -> tuple[str, int]:
        return (self.row.comment_id, self.row.part)


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _bool(value: int | None) -> bool | None:
    return None if value is None else bool(value)


def check_name(name: str, what: str = "rater") -> str:
    """A rater or adjudicator name: 1-40 printable characters, no surrounding space."""
    name = name.strip()
    if not name or len(name) > 40 or not name.isprintable() or "/" in name:
        raise UsageError(f"a {what} name is 1 to 40 printable characters without '/'; got {name!r}")
    return name


class LabelStore:
    """Read and append to ``labels.sqlite``; one connection per instance and thread."""

    def __init__(self, rundir: Path) -> None:
        self.rundir = rundir
        if not (rundir / RUNS_DB).is_file():
            raise CorpusError(f"{rundir} is not a run directory (no {RUNS_DB}); run 'reviewbench run' first")
        path = rundir / LABELS_DB
        if path.is_symlink():
            raise CorpusError(f"{path} is a symbolic link; refusing to write through it")
        try:
            self.db = sqlite3.connect(path, isolation_level=None, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise CorpusError(f"{path} is not a readable label store: {exc}") from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- meta -----------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def secret(self) -> bytes:
        """The key of opaque ids, drawn once per run directory."""
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('secret', ?)", (secrets.token_hex(32),))
        return bytes.fromhex(self.get_meta("secret") or "")

    # -- packets and claims ---------------------------------------------------------------

    def packets(self) -> PacketSet:
        """Build the packets of the run directory and remember where each claim came from."""
        packet_set = build_packets(self.rundir, self.secret())
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany(
                "INSERT OR IGNORE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(c.comment_id, c.part, c.parts, c.source_id, c.run_id, c.index, c.case_id, c.packet_id, c.text)
                 for c in packet_set.claims],
            )  # fmt: skip
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return packet_set

    def claims(self) -> dict[tuple[str, int], ClaimRef]:
        """Every claim of exported packets, by (opaque comment id, part)."""
        return {
            (row[0], row[1]): ClaimRef(comment_id=row[0], part=row[1], parts=row[2], source_id=row[3], run_id=row[4],
                                       index=row[5], case_id=row[6], packet_id=row[7], text=row[8])
            for row in self.db.execute("SELECT * FROM claims ORDER BY packet_id, comment_id, part")
        }  # fmt: skip

    # -- labels ---------------------------------------------------------------------------

    def add(self, rows: list[LabelRow], *, author: str, role: Role, source: str, probe: str = "") -> int:
        """Append ``rows`` in one transaction; every claim must be known, or nothing is written.

        Raises:
            UsageError: a row names a claim no packet has (export the packets first).
        """
        known = {(r[0], r[1]) for r in self.db.execute("SELECT comment_id, part FROM claims")}
        for number, row in enumerate(rows, start=1):
            if (row.comment_id, row.part) not in known:
                raise UsageError(f"label {number}: no packet has claim {row.comment_id!r} part {row.part}; "
                                 "run 'reviewbench label export' on this run directory first")  # fmt: skip
        now = _utc_now()
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany(
                "INSERT INTO labels (comment_id, part, author, role, probe, class, defect_id, location, consequence, "
                "evidence, safe_fix, severity_fit, triage_s, note, reason, source, created_at, rubric_version) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(r.comment_id, r.part, author, role.value, probe, r.label_class.value, r.defect_id,
                  *(getattr(r.fields, name) for name in ACTIONABILITY_FIELDS), r.triage_s, r.note, r.reason,
                  source, now, RUBRIC_VERSION) for r in rows],
            )  # fmt: skip
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return len(rows)

    def rows(self, role: Role | None = None, author: str | None = None, probe: str | None = "") -> list[StoredLabel]:
        """Stored rows in the order written, filtered by role, author and probe (None: any probe)."""
        query = "SELECT * FROM labels WHERE 1=1"
        args: list[object] = []
        for column, value in (("role", role and role.value), ("author", author), ("probe", probe)):
            if value is not None:
                query += f" AND {column} = ?"
                args.append(value)
        out = []
        cursor = self.db.execute(query + " ORDER BY seq", args)
        names = [d[0] for d in cursor.description]
        for values in cursor:
            d = dict(zip(names, values, strict=True))
            row = LabelRow.model_construct(
                comment_id=d["comment_id"], part=d["part"], label_class=LabelClass(d["class"]),
                defect_id=d["defect_id"],
                fields=ActionabilityFields(**{name: _bool(d[name]) for name in ACTIONABILITY_FIELDS}),
                triage_s=d["triage_s"], note=d["note"], reason=d["reason"],
            )  # fmt: skip
            out.append(StoredLabel(seq=d["seq"], row=row, author=d["author"], role=Role(d["role"]), probe=d["probe"],
                                   source=d["source"], created_at=d["created_at"],
                                   rubric_version=d["rubric_version"]))  # fmt: skip
        return out

    def latest(self, role: Role, probe: str | None = "") -> dict[str, dict[tuple[str, int], StoredLabel]]:
        """Each author's current label of each claim: their latest row."""
        out: dict[str, dict[tuple[str, int], StoredLabel]] = {}
        for label in self.rows(role=role, probe=probe):
            out.setdefault(label.author, {})[label.key] = label
        return out

    # -- calibrations ---------------------------------------------------------------------

    def add_calibration(self, judge: str, result: dict) -> None:
        self.db.execute("INSERT INTO calibrations (judge, created_at, result) VALUES (?, ?, ?)",
                        (judge, _utc_now(), json.dumps(result, sort_keys=True)))  # fmt: skip

    def latest_calibration(self, judge: str | None = None) -> tuple[str, dict] | None:
        query = "SELECT judge, result FROM calibrations"
        args: tuple = ()
        if judge is not None:
            query += " WHERE judge = ?"
            args = (judge,)
        row = self.db.execute(query + " ORDER BY seq DESC LIMIT 1", args).fetchone()
        return (row[0], json.loads(row[1])) if row else None


def open_labels(rundir: Path) -> LabelStore:
    """The label store of ``rundir`` (created on first use)."""
    return LabelStore(rundir)
