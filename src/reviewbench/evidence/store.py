"""The label store: ``RUNDIR/labels.sqlite``, append-only.

Every submission is a new row with its author, role, UTC time and rubric version; a
correction is a later row, never an edit (triggers refuse UPDATE and DELETE on ``labels``,
and every row is chained by SHA-256 to the one before it: ``label/chain.py``). The latest
row of an author for a claim is that author's label. The store also keeps the secret that
makes packet ids opaque, the map from opaque claim ids to run-store comments and the gold
defect ids of each case (written when packets are built, so every label's link is checked
against its case's gold), and the people invited to the labelling app: their names and the
SHA-256 of their secret tokens, never the tokens.
"""

from __future__ import annotations

import hashlib
import json
import math
import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Self

from ..errors import CorpusError, UsageError
from ..store.runs import RUNS_DB
from . import chain
from .chain import ChainHead
from .packets import ClaimRef, PacketSet, build_packets
from .records import (
    ACTIONABILITY_FIELDS,
    MAX_TRIAGE_S,
    VALID_INCIDENTAL,
    ActionabilityFields,
    LabelClass,
    LabelRow,
    RaterProfile,
)
from .rubric import registered_rubric

__all__ = ["CARRY", "LABELS_DB", "CarriedLabel", "CarryOrigin", "LabelStore", "Person", "Role", "StoredLabel",
           "check_name", "open_labels"]

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
CREATE TABLE IF NOT EXISTS claim_sources (
    source_id TEXT PRIMARY KEY,
    comment_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    case_id TEXT NOT NULL
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
    rubric_version TEXT NOT NULL,
    prev_sha256 TEXT,
    row_sha256 TEXT
);
CREATE TABLE IF NOT EXISTS calibrations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    judge TEXT NOT NULL,
    created_at TEXT NOT NULL,
    result TEXT NOT NULL,
    prev_sha256 TEXT,
    row_sha256 TEXT
);
CREATE TABLE IF NOT EXISTS gold (
    case_id TEXT NOT NULL,
    defect_id TEXT NOT NULL,
    PRIMARY KEY (case_id, defect_id)
);
CREATE TABLE IF NOT EXISTS people (
    role TEXT NOT NULL,
    name_key TEXT NOT NULL,
    name TEXT NOT NULL,
    token_sha256 TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (role, name_key)
);
CREATE TABLE IF NOT EXISTS carries (
    carry_id INTEGER PRIMARY KEY AUTOINCREMENT,
    from_rundir TEXT NOT NULL,
    from_gold_sha256 TEXT NOT NULL,
    from_labels_rows INTEGER NOT NULL,
    from_labels_head TEXT NOT NULL,
    from_registration_sha256 TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS carried (
    seq INTEGER PRIMARY KEY,
    carry_id INTEGER NOT NULL,
    from_seq INTEGER NOT NULL,
    from_row_sha256 TEXT NOT NULL,
    from_comment_id TEXT NOT NULL,
    from_created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS profiles (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    role TEXT NOT NULL,
    name_key TEXT NOT NULL,
    name TEXT NOT NULL,
    profile TEXT NOT NULL,
    created_at TEXT NOT NULL,
    prev_sha256 TEXT,
    row_sha256 TEXT
);
CREATE TRIGGER IF NOT EXISTS profiles_no_update BEFORE UPDATE ON profiles
BEGIN SELECT RAISE(ABORT, 'profiles are append-only'); END;
CREATE TRIGGER IF NOT EXISTS profiles_no_delete BEFORE DELETE ON profiles
BEGIN SELECT RAISE(ABORT, 'profiles are append-only'); END;
CREATE TRIGGER IF NOT EXISTS labels_no_update BEFORE UPDATE ON labels
BEGIN SELECT RAISE(ABORT, 'labels are append-only'); END;
CREATE TRIGGER IF NOT EXISTS labels_no_delete BEFORE DELETE ON labels
BEGIN SELECT RAISE(ABORT, 'labels are append-only'); END;
CREATE TRIGGER IF NOT EXISTS calibrations_no_update BEFORE UPDATE ON calibrations
BEGIN SELECT RAISE(ABORT, 'calibrations are append-only'); END;
CREATE TRIGGER IF NOT EXISTS calibrations_no_delete BEFORE DELETE ON calibrations
BEGIN SELECT RAISE(ABORT, 'calibrations are append-only'); END;
CREATE TRIGGER IF NOT EXISTS carries_no_update BEFORE UPDATE ON carries
BEGIN SELECT RAISE(ABORT, 'carries are append-only'); END;
CREATE TRIGGER IF NOT EXISTS carries_no_delete BEFORE DELETE ON carries
BEGIN SELECT RAISE(ABORT, 'carries are append-only'); END;
CREATE TRIGGER IF NOT EXISTS carried_no_update BEFORE UPDATE ON carried
BEGIN SELECT RAISE(ABORT, 'carried labels are append-only'); END;
CREATE TRIGGER IF NOT EXISTS carried_no_delete BEFORE DELETE ON carried
BEGIN SELECT RAISE(ABORT, 'carried labels are append-only'); END;
"""

CARRY = "carry"
"""The ``source`` of a label row copied from another run directory (``label carry``); the
row's provenance is in table ``carried`` (and the copy as a whole in ``carries``)."""


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
    row_sha256: str | None = None
    """The row's digest in the chain (its id across run directories)."""

    @property
    def key(self) -> tuple[str, int]:
        return (self.row.comment_id, self.row.part)

    @property
    def carried(self) -> bool:
        """Copied from another run directory's store (``label carry``), not given here."""
        return self.source == CARRY


@dataclass(frozen=True)
class CarryOrigin:
    """The run directory labels are carried from, as it stood: its gold, its label chain."""

    rundir: str
    gold_sha256: str
    labels_rows: int
    labels_head: str
    registration_sha256: str | None


@dataclass(frozen=True)
class CarriedLabel:
    """A label of the origin, under this store's claim id, and the origin row it copies."""

    row: LabelRow
    author: str
    role: Role
    from_seq: int
    from_row_sha256: str
    from_comment_id: str
    from_created_at: str
    rubric_version: str
    """The rubric the label was given under (kept as it was)."""


@dataclass(frozen=True)
class Person:
    """Someone invited to the labelling app: their name (as first given) and role."""

    name: str
    role: Role
    created_at: str


def _token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _bool(value: int | None) -> bool | None:
    return None if value is None else bool(value)


_INSERT_LABEL = (f"INSERT INTO labels ({', '.join(chain.CHAINED['labels'])}, prev_sha256, row_sha256) "
                 f"VALUES ({', '.join('?' * (len(chain.CHAINED['labels']) + 2))})")  # fmt: skip


def _content(r: LabelRow, author: str, role: Role, probe: str, source: str, now: str, rubric: str) -> tuple[Any, ...]:
    """A label row's chained columns, in ``chain.CHAINED['labels']`` order."""
    return (r.comment_id, r.part, author, role.value, probe, r.label_class.value, r.defect_id,
            *(getattr(r.fields, name) for name in ACTIONABILITY_FIELDS),
            None if r.triage_s is None else float(r.triage_s), r.note, r.reason, source, now, rubric)  # fmt: skip


def check_name(name: str, what: str = "rater") -> str:
    """A rater or adjudicator name: 1-40 printable characters, no surrounding space."""
    name = name.strip()
    if not name or len(name) > 40 or not name.isprintable() or "/" in name:
        raise UsageError(f"a {what} name is 1 to 40 printable characters without '/'; got {name!r}")
    return name


class LabelStore:
    """Read and append to ``labels.sqlite``; one connection per instance and thread."""

    def __init__(self, rundir: Path, *, read_only: bool = False) -> None:
        self.rundir = rundir
        if not (rundir / RUNS_DB).is_file():
            raise CorpusError(f"{rundir} is not a run directory (no {RUNS_DB}); run 'reviewbench run' first")
        path = rundir / LABELS_DB
        if path.is_symlink():
            raise CorpusError(f"{path} is a symbolic link; refusing to write through it")
        if read_only:
            self.db = self._open_read_only(path)
            return
        try:
            self.db = sqlite3.connect(path, isolation_level=None, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.executescript(_SCHEMA)
            chain.migrate(self.db)  # a store written before rows were chained: chain them now
        except sqlite3.DatabaseError as exc:
            raise CorpusError(f"{path} is not a readable label store: {exc}") from None

    @staticmethod
    def _open_read_only(path: Path) -> sqlite3.Connection:
        """A store read and never written (the origin of ``label carry``): it must exist, be
        chained, and hold the tables a label needs."""
        from urllib.parse import quote

        if not path.is_file():
            raise UsageError(f"{path.parent} has no labels ({LABELS_DB})")
        try:
            db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, isolation_level=None)
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            columns = {row[1] for row in db.execute("PRAGMA table_info(labels)")}
        except sqlite3.DatabaseError as exc:
            raise CorpusError(f"{path} is not a readable label store: {exc}") from None
        if not {"meta", "claims", "claim_sources", "labels", "calibrations"} <= tables:
            db.close()
            raise CorpusError(f"{path} is not a label store written by this version (tables missing)")
        if not {"prev_sha256", "row_sha256"} <= columns:
            db.close()
            raise UsageError(f"{path} predates the label chain: open it once with 'reviewbench label status "
                             f"{path.parent}' (which chains its rows), then carry")  # fmt: skip
        return db

    def close(self) -> None:
        self.db.close()

    @property
    def rubric_version(self) -> str:
        """The rubric labels are given under now: the latest registered one (``evidence/rubric.py``)."""
        if not hasattr(self, "_rubric_version"):
            self._rubric_version = registered_rubric(self.rundir).version
        return self._rubric_version

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
        """Build the packets of the run directory and remember where each claim came from.

        ``claims`` keeps one row per claim shown (with the comment of the copy shown);
        ``claim_sources`` maps every run-store comment to the claim that shows it, so a
        label applies to every identical copy. A comment keeps the claim id it had.
        """
        known: dict[str, set[str]] = {}
        for source_id, comment_id in self.db.execute("SELECT source_id, comment_id FROM claims UNION "
                                                     "SELECT source_id, comment_id FROM claim_sources"):  # fmt: skip
            known.setdefault(source_id, set()).add(comment_id)
        labelled = dict(self.db.execute("SELECT comment_id, COUNT(*) FROM labels GROUP BY comment_id").fetchall())
        packet_set = build_packets(self.rundir, self.secret(), known, labelled)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(c.comment_id, c.part, c.parts, c.source_id, c.run_id, c.index, c.case_id, c.packet_id, c.text)
                 for c in packet_set.claims],
            )  # fmt: skip
            self.db.executemany("INSERT OR REPLACE INTO claim_sources VALUES (?, ?, ?, ?, ?)",
                                {(c.source_id, c.comment_id, c.run_id, c.index, c.case_id)
                                 for c in packet_set.sources})  # fmt: skip
            self.db.executemany("INSERT OR IGNORE INTO gold VALUES (?, ?)",
                                [(g.case_id, d.defect_id) for g in packet_set.corpus.gold for d in g.defects])  # fmt: skip
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return packet_set

    def _current(self) -> str:
        """SQL condition on ``claims``: a claim some comment maps to now (every claim of a store
        whose comments were never mapped, as written before identical claims were merged)."""
        return ("(NOT EXISTS (SELECT 1 FROM claim_sources) OR "
                "comment_id IN (SELECT comment_id FROM claim_sources))")  # fmt: skip

    def claims(self) -> dict[tuple[str, int], ClaimRef]:
        """Every claim of exported packets, by (opaque comment id, part), with the copy shown."""
        return {
            (row[0], row[1]): ClaimRef(comment_id=row[0], part=row[1], parts=row[2], source_id=row[3], run_id=row[4],
                                       index=row[5], case_id=row[6], packet_id=row[7], text=row[8])
            for row in self.db.execute(f"SELECT * FROM claims WHERE {self._current()} "
                                       "ORDER BY packet_id, comment_id, part")
        }  # fmt: skip

    def claim_sources(self) -> dict[tuple[str, int], list[ClaimRef]]:
        """Every claim with every run-store comment its label applies to (identical copies of
        one case), each as a :class:`ClaimRef` of that comment."""
        claims = self.claims()
        out: dict[tuple[str, int], list[ClaimRef]] = {}
        rows = self.db.execute("SELECT source_id, comment_id, run_id, idx FROM claim_sources ORDER BY source_id")
        by_comment: dict[str, list[tuple[str, str, int]]] = {}
        for source_id, comment_id, run_id, idx in rows:
            by_comment.setdefault(comment_id, []).append((source_id, run_id, idx))
        for key, ref in claims.items():
            copies = by_comment.get(key[0]) or [(ref.source_id, ref.run_id, ref.index)]
            out[key] = [ClaimRef(comment_id=ref.comment_id, part=ref.part, parts=ref.parts, source_id=source_id,
                                 run_id=run_id, index=idx, case_id=ref.case_id, packet_id=ref.packet_id,
                                 text=ref.text) for source_id, run_id, idx in copies]  # fmt: skip
        return out

    # -- labels ---------------------------------------------------------------------------

    def add(self, rows: list[LabelRow], *, author: str, role: Role, source: str, probe: str = "",
            skip_unchanged: bool = False) -> int:
        """Append ``rows`` in one transaction; every claim must be known, or nothing is written.

        With ``skip_unchanged`` a row equal to the author's current label of its claim (class,
        link, answers, note and reason; the time aside) is not written again: a submission
        sent twice (a double click, a retried request) adds nothing. Returns the rows written.

        Raises:
            UsageError: a row names a claim no packet has (export the packets first).
        """
        for number, row in enumerate(rows, start=1):
            problem = self.check_row(row)
            if problem is not None:
                raise UsageError(f"label {number}: {problem}")
        now = _utc_now()
        rubric = self.rubric_version
        self.db.execute("BEGIN IMMEDIATE")
        try:
            author = self._canonical(author, role)
            if role is Role.RATER and not probe:
                for number, row in enumerate(rows, start=1):
                    problem = self.first_label_problem(row, author)
                    if problem is not None:
                        raise UsageError(f"label {number}: {problem}")
            if skip_unchanged:
                rows = [r for r in rows if not self._unchanged(r, author, role, probe)]
            self._append(rows, author, role, probe, source, now, rubric)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return len(rows)

    def _append(self, rows: list[LabelRow], author: str, role: Role, probe: str, source: str, now: str,
                rubric: str) -> None:  # fmt: skip
        prev = chain.head(self.db, "labels")
        values = []
        for r in rows:
            content = _content(r, author, role, probe, source, now, rubric)
            digest = chain.chain_digest(prev, content)
            values.append((*content, prev, digest))
            prev = digest
        self.db.executemany(_INSERT_LABEL, values)

    def add_practice(self, rows: list[LabelRow], *, author: str, probe: str) -> int:
        """Append a rater's labels of practice claims (checked by the caller against the
        practice set: they name no claim of the run) under ``probe``, chained like every
        label and never counted as one (every reader of labels asks for ``probe = ''``)."""
        if not probe:
            raise UsageError("practice labels are kept under a probe of their own")
        self.db.execute("BEGIN IMMEDIATE")
        try:
            author = self._canonical(author, Role.RATER)
            rows = [r for r in rows if not self._unchanged(r, author, Role.RATER, probe)]
            self._append(rows, author, Role.RATER, probe, "practice", _utc_now(), self.rubric_version)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return len(rows)

    def add_carried(self, labels: list[CarriedLabel], origin: CarryOrigin) -> int:
        """Append labels copied from ``origin`` in one transaction, each as a chained row of
        source ``carry`` with its provenance in ``carried``; the rows written.

        A claim that has any human label here when the transaction starts gets nothing: this
        store's own labels are never overtaken by copies.

        Raises:
            UsageError: a row names a claim no packet has, or a defect its case does not have.
        """
        for label in labels:
            problem = self.check_row(label.row)
            if problem is not None:
                raise UsageError(f"label {label.from_seq} of {origin.rundir}: {problem}")
        now = _utc_now()
        self.db.execute("BEGIN IMMEDIATE")
        try:
            taken = {(r[0], r[1]) for r in self.db.execute(
                "SELECT comment_id, part FROM labels WHERE role IN (?, ?) AND probe = ''",
                (Role.RATER.value, Role.ADJUDICATOR.value))}  # fmt: skip
            labels = [label for label in labels if (label.row.comment_id, label.row.part) not in taken]
            carry_id = 0
            if labels:
                cursor = self.db.execute(
                    "INSERT INTO carries (from_rundir, from_gold_sha256, from_labels_rows, from_labels_head, "
                    "from_registration_sha256, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (origin.rundir, origin.gold_sha256, origin.labels_rows, origin.labels_head,
                     origin.registration_sha256, now))  # fmt: skip
                carry_id = int(cursor.lastrowid or 0)
            prev = chain.head(self.db, "labels")
            for label in labels:
                author = self._canonical(label.author, label.role)
                content = _content(label.row, author, label.role, "", CARRY, now, label.rubric_version)
                digest = chain.chain_digest(prev, content)
                seq = self.db.execute(_INSERT_LABEL, (*content, prev, digest)).lastrowid
                prev = digest
                self.db.execute("INSERT INTO carried VALUES (?, ?, ?, ?, ?, ?)",
                                (seq, carry_id, label.from_seq, label.from_row_sha256, label.from_comment_id,
                                 label.from_created_at))  # fmt: skip
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return len(labels)

    def carries(self) -> list[dict[str, Any]]:
        """Every carry into this store: where from (its gold, label chain rows and head,
        registration digest), when, and how many label rows it wrote."""
        rows = self.db.execute(
            "SELECT c.carry_id, from_rundir, from_gold_sha256, from_labels_rows, from_labels_head, "
            "from_registration_sha256, created_at, COUNT(d.seq) FROM carries c LEFT JOIN carried d "
            "ON d.carry_id = c.carry_id GROUP BY c.carry_id ORDER BY c.carry_id").fetchall()  # fmt: skip
        keys = ("carry_id", "from_rundir", "from_gold_sha256", "from_labels_rows", "from_labels_head",
                "from_registration_sha256", "carried_at", "labels")  # fmt: skip
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def provenance(self) -> dict[int, dict[str, Any]]:
        """Per carried label row (its ``seq`` here): the origin run directory and the origin row
        (``from_seq``, ``from_row_sha256``, ``from_comment_id``, ``from_created_at``)."""
        rows = self.db.execute(
            "SELECT d.seq, c.from_rundir, c.from_labels_head, d.from_seq, d.from_row_sha256, d.from_comment_id, "
            "d.from_created_at FROM carried d JOIN carries c ON c.carry_id = d.carry_id").fetchall()  # fmt: skip
        keys = ("from_rundir", "from_labels_head", "from_seq", "from_row_sha256", "from_comment_id", "from_created_at")
        return {int(row[0]): dict(zip(keys, row[1:], strict=True)) for row in rows}

    def _unchanged(self, row: LabelRow, author: str, role: Role, probe: str) -> bool:
        current = self.db.execute(
            f"SELECT class, defect_id, {', '.join(ACTIONABILITY_FIELDS)}, note, reason FROM labels "
            "WHERE comment_id = ? AND part = ? AND author = ? AND role = ? AND probe = ? AND rubric_version = ? "
            "ORDER BY seq DESC LIMIT 1",
            (row.comment_id, row.part, author, role.value, probe, self.rubric_version)).fetchone()  # fmt: skip
        mine = (row.label_class.value, row.defect_id, *(getattr(row.fields, name) for name in ACTIONABILITY_FIELDS),
                row.note, row.reason)  # fmt: skip
        return current is not None and tuple(_bool(v) if i in range(2, 7) else v for i, v in enumerate(current)) == mine

    def check_row(self, row: LabelRow) -> str | None:
        """Why ``row`` cannot be stored (None when it can): an unknown claim, a defect link that
        is not one of its case's gold defects, a triage time that is not a finite, bounded number.
        Every path (the app, ``label import``, the judge) is held to it here."""
        found = self.db.execute("SELECT case_id FROM claims WHERE comment_id = ? AND part = ?",
                                (row.comment_id, row.part)).fetchone()  # fmt: skip
        if found is None:
            return (f"no packet has claim {row.comment_id!r} part {row.part}; "
                    "run 'reviewbench label export' on this run directory first")  # fmt: skip
        if row.defect_id is not None and row.defect_id != VALID_INCIDENTAL:
            gold = [r[0] for r in self.db.execute("SELECT defect_id FROM gold WHERE case_id = ? ORDER BY defect_id",
                                                  (found[0],))]  # fmt: skip
            if row.defect_id not in gold:
                allowed = ", ".join(repr(d) for d in [*gold, VALID_INCIDENTAL])
                return f"defect_id {row.defect_id!r} is not a gold defect of its case (one of {allowed})"
        if row.triage_s is not None and not (math.isfinite(row.triage_s) and 0 <= row.triage_s <= MAX_TRIAGE_S):
            return f"triage_s must be a number of seconds from 0 to {MAX_TRIAGE_S}"
        return None

    def _append_chained(self, table: str, columns: tuple[str, ...], content: Callable[[], tuple[Any, ...]]) -> None:
        """One row appended to a hash-chained table in its own transaction; ``content`` is read
        inside it, so what it looks up and the chain's head are of the same moment."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            values = content()
            prev = chain.head(self.db, table)
            names = ", ".join((*columns, "prev_sha256", "row_sha256"))
            marks = ", ".join("?" * (len(columns) + 2))
            self.db.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})",
                            (*values, prev, chain.chain_digest(prev, values)))  # fmt: skip
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def _canonical(self, name: str, role: Role) -> str:
        """Names are case-insensitive: the spelling an invitation or the first label gave."""
        key = name.casefold()
        found = self.db.execute("SELECT name FROM people WHERE role = ? AND name_key = ?", (role.value, key)).fetchone()
        if found:
            return str(found[0])
        for (author,) in self.db.execute("SELECT DISTINCT author FROM labels WHERE role = ? ORDER BY seq",
                                         (role.value,)):  # fmt: skip
            if str(author).casefold() == key:
                return str(author)
        return name

    # -- people of the labelling app --------------------------------------------------------

    def invite(self, name: str, role: Role) -> str:
        """A new secret token for ``name`` as ``role`` (a previous token of theirs stops working).

        Only its SHA-256 is stored: the token is returned once, to be handed to that person.

        Raises:
            UsageError: a bad name, or a role that is not a person's.
        """
        if role not in (Role.RATER, Role.ADJUDICATOR):
            raise UsageError(f"only raters and adjudicators are invited, not a {role.value}")
        name = check_name(name, role.value)
        token = secrets.token_urlsafe(32)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            canonical = self._canonical(name, role)
            self.db.execute("INSERT OR REPLACE INTO people VALUES (?, ?, ?, ?, ?)",
                            (role.value, name.casefold(), canonical, _token_digest(token), _utc_now()))  # fmt: skip
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return token

    def people(self, role: Role | None = None) -> list[Person]:
        """Everyone invited (tokens are not kept, so never returned)."""
        query = "SELECT name, role, created_at FROM people"
        args: tuple[str, ...] = ()
        if role is not None:
            query, args = query + " WHERE role = ?", (role.value,)
        return [Person(name=r[0], role=Role(r[1]), created_at=r[2])
                for r in self.db.execute(query + " ORDER BY role, name_key", args)]  # fmt: skip

    def identify(self, token: str) -> Person | None:
        """Whose token this is, or None."""
        if not token or len(token) > 200:
            return None
        row = self.db.execute("SELECT name, role, created_at FROM people WHERE token_sha256 = ?",
                              (_token_digest(token),)).fetchone()  # fmt: skip
        return Person(name=row[0], role=Role(row[1]), created_at=row[2]) if row else None

    def set_profile(self, name: str, role: Role, profile: RaterProfile) -> None:
        """Record ``name``'s profile (a new chained row: the latest is theirs; nothing is edited).

        Raises:
            UsageError: a bad name, or a role that is not a person's.
        """
        if role not in (Role.RATER, Role.ADJUDICATOR):
            raise UsageError(f"only raters and adjudicators have profiles, not a {role.value}")
        name = check_name(name, role.value)
        self._append_chained("profiles", ("role", "name_key", "name", "profile", "created_at"),
                             lambda: (role.value, name.casefold(), self._canonical(name, role),
                                      profile.model_dump_json(), _utc_now()))  # fmt: skip

    def profiles(self, role: Role = Role.RATER) -> dict[str, RaterProfile]:
        """Each person's latest profile, by the name they are stored under."""
        try:
            rows = self.db.execute("SELECT name, profile FROM profiles WHERE role = ? ORDER BY seq",
                                   (role.value,)).fetchall()  # fmt: skip
        except sqlite3.OperationalError:  # a read-only store written before profiles
            return {}
        return {str(name): RaterProfile.model_validate_json(text) for name, text in rows}

    def conflicted(self) -> set[str]:
        """Raters whose latest profile declares a conflict (or authorship of the fixture)."""
        return {name.casefold() for name, profile in self.profiles(Role.RATER).items() if profile.conflicted}

    def _first_free(self, conflicted: set[str]) -> dict[tuple[str, int], int]:
        """Per claim, the ``seq`` of the first row (under the current rubric) by a rater
        without a conflict: a conflicted rater's label counts only after it."""
        out: dict[tuple[str, int], int] = {}
        for key0, key1, author, seq in self.db.execute(
                "SELECT comment_id, part, author, seq FROM labels WHERE role = ? AND probe = '' AND rubric_version = ? "
                "ORDER BY seq", (Role.RATER.value, self.rubric_version)):  # fmt: skip
            if str(author).casefold() not in conflicted:
                out.setdefault((key0, key1), int(seq))
        return out

    def first_label_problem(self, row: LabelRow, author: str) -> str | None:
        """Why ``author`` may not label ``row``'s claim now (None when they may): a conflicted
        rater cannot give a claim's first independent label."""
        conflicted = self.conflicted()
        if author.casefold() not in conflicted:
            return None
        if (row.comment_id, row.part) in self._first_free(conflicted):
            return None
        return (f"rater {author} declared a conflict (their profile), so they cannot give the first independent "
                f"label of claim {row.comment_id!r} part {row.part}: it waits for a rater without one")  # fmt: skip

    def open_to_conflicted(self) -> set[tuple[str, int]]:
        """Claims a conflicted rater may label: a rater without a conflict labelled them first."""
        return set(self._first_free(self.conflicted()))

    # -- tamper evidence --------------------------------------------------------------------

    def verify_chain(self) -> tuple[ChainHead, ChainHead]:
        """Re-compute the SHA-256 chains of labels and calibrations; their heads.

        Raises:
            LabelChainBroken: a row was edited, deleted or inserted outside this store.
        """
        where = str(self.rundir / LABELS_DB)
        self.verify_profiles()
        return chain.verify(self.db, "labels", where), chain.verify(self.db, "calibrations", where)

    def verify_profiles(self) -> ChainHead:
        """Re-compute the chain of ``profiles`` (who declared what, and when); its head."""
        try:
            return chain.verify(self.db, "profiles", str(self.rundir / LABELS_DB))
        except sqlite3.OperationalError:  # a read-only store written before profiles
            return ChainHead(table="profiles", rows=0, head=chain.GENESIS)

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
                                   rubric_version=d["rubric_version"], row_sha256=d.get("row_sha256")))  # fmt: skip
        return out

    def latest(self, role: Role, probe: str | None = "", *,
               counted: bool = True) -> dict[str, dict[tuple[str, int], StoredLabel]]:  # fmt: skip
        """Each author's current label of each claim: their latest row.

        ``counted`` (the default) keeps only what counts: rows under the current rubric
        (others wait to be given again), and a conflicted rater's label only once a rater
        without a conflict labelled the claim before it. ``counted=False``: every latest row.
        """
        out: dict[str, dict[tuple[str, int], StoredLabel]] = {}
        rubric = self.rubric_version if counted else None
        for label in self.rows(role=role, probe=probe):
            if rubric is None or label.rubric_version == rubric:
                out.setdefault(label.author, {})[label.key] = label
        if counted and role is Role.RATER:
            conflicted = self.conflicted()
            if conflicted:
                free = self._first_free(conflicted)
                for author, labels in out.items():
                    if author.casefold() in conflicted:
                        out[author] = {k: v for k, v in labels.items() if k in free and free[k] < v.seq}
        return {author: labels for author, labels in out.items() if labels}

    # -- calibrations ---------------------------------------------------------------------

    def add_calibration(self, judge: str, result: dict[str, Any]) -> None:
        self._append_chained("calibrations", ("judge", "created_at", "result"),
                             lambda: (judge, _utc_now(), json.dumps(result, sort_keys=True)))

    def latest_calibration(self, judge: str | None = None) -> tuple[str, dict[str, Any]] | None:
        query = "SELECT judge, result FROM calibrations"
        args: tuple[Any, ...] = ()
        if judge is not None:
            query += " WHERE judge = ?"
            args = (judge,)
        row = self.db.execute(query + " ORDER BY seq DESC LIMIT 1", args).fetchone()
        return (row[0], json.loads(row[1])) if row else None


def open_labels(rundir: Path) -> LabelStore:
    """The label store of ``rundir`` (created on first use)."""
    return LabelStore(rundir)
