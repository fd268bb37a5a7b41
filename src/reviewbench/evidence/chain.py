"""Tamper evidence for ``labels.sqlite``: every label and calibration row is chained by SHA-256.

Triggers keep honest code from editing or deleting rows, but anyone who can write the file
can ``DROP TRIGGER`` and edit. So each row also carries ``prev_sha256`` (the digest of the
row before it in its table, 64 zeros for the first) and ``row_sha256``: SHA-256 of a
canonical JSON array of the previous digest and the row's content columns. Reading labels
for scoring re-computes the chain; an edited, deleted, re-ordered or inserted row breaks it
at that row, and :class:`~reviewbench.errors.LabelChainBroken` says where.

Whoever edits the file can also re-compute every digest after the edit: what exposes that
is the chain's **head** (the last row's digest) changing. ``label status`` prints the head,
so it can be published or timestamped when labelling ends; a later head that differs
means the labels differ from the published ones (and deleting the last rows is seen the
same way, by the row count beside it).

Rows written before chaining existed are chained, in their ``seq`` order, the first time
the store is opened by a version that chains: the chain vouches for them from that moment.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass

from ..errors import LabelChainBroken

__all__ = ["CHAINED", "GENESIS", "ChainHead", "chain_digest", "migrate", "verify"]

GENESIS = "0" * 64
"""``prev_sha256`` of a table's first row."""

CHAINED: dict[str, tuple[str, ...]] = {
    "labels": ("comment_id", "part", "author", "role", "probe", "class", "defect_id", "location", "consequence",
               "evidence", "safe_fix", "severity_fit", "triage_s", "note", "reason", "source", "created_at",
               "rubric_version"),
    "calibrations": ("judge", "created_at", "result"),
    "profiles": ("role", "name_key", "name", "profile", "created_at"),
}  # fmt: skip
"""The chained tables and the content columns each digest covers, in order."""

_TRIGGERS = {
    "labels": "CREATE TRIGGER IF NOT EXISTS labels_no_update BEFORE UPDATE ON labels "
              "BEGIN SELECT RAISE(ABORT, 'labels are append-only'); END;",
    "calibrations": "CREATE TRIGGER IF NOT EXISTS calibrations_no_update BEFORE UPDATE ON calibrations "
                    "BEGIN SELECT RAISE(ABORT, 'calibrations are append-only'); END;",
}  # fmt: skip


@dataclass(frozen=True)
class ChainHead:
    """How many rows a table's chain holds and the digest of its last row."""

    table: str
    rows: int
    head: str


def _canonical(value: object) -> object:
    # As SQLite gives values back: integers for booleans, floats for REAL columns.
    if isinstance(value, bool):
        return int(value)
    return value


def chain_digest(prev: str, values: tuple[object, ...]) -> str:
    """The digest of a row whose content columns hold ``values``, after the row ``prev``."""
    text = json.dumps([prev, *(_canonical(v) for v in values)], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def head(db: sqlite3.Connection, table: str) -> str:
    """The digest the next row of ``table`` chains to."""
    row = db.execute(f"SELECT row_sha256 FROM {table} ORDER BY seq DESC LIMIT 1").fetchone()
    return row[0] if row and row[0] else GENESIS


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def migrate(db: sqlite3.Connection) -> None:
    """Add the chain columns to a store written before them and chain its rows in ``seq`` order."""
    if all({"prev_sha256", "row_sha256"} <= _columns(db, table) for table in CHAINED):
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        for table, columns in CHAINED.items():
            if {"prev_sha256", "row_sha256"} <= _columns(db, table):
                continue  # another process migrated it first
            db.execute(f"ALTER TABLE {table} ADD COLUMN prev_sha256 TEXT")
            db.execute(f"ALTER TABLE {table} ADD COLUMN row_sha256 TEXT")
            db.execute(f"DROP TRIGGER IF EXISTS {table}_no_update")
            prev = GENESIS
            rows = db.execute(f"SELECT seq, {', '.join(columns)} FROM {table} ORDER BY seq").fetchall()
            for seq, *values in rows:
                digest = chain_digest(prev, tuple(values))
                db.execute(f"UPDATE {table} SET prev_sha256 = ?, row_sha256 = ? WHERE seq = ?", (prev, digest, seq))
                prev = digest
            db.execute(_TRIGGERS[table])
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def verify(db: sqlite3.Connection, table: str, where: str) -> ChainHead:
    """Re-compute ``table``'s chain.

    Raises:
        LabelChainBroken: a row's digest or link does not match (``where`` names the file).
    """
    columns = CHAINED[table]
    prev = GENESIS
    count = 0
    query = f"SELECT seq, prev_sha256, row_sha256, {', '.join(columns)} FROM {table} ORDER BY seq"
    for seq, linked, digest, *values in db.execute(query):
        if linked != prev or digest != chain_digest(prev, tuple(values)):
            what = "does not follow the row before it" if linked != prev else "was changed after it was written"
            raise LabelChainBroken(f"{where}: {table} row {seq} {what} (its SHA-256 chain is broken: a row was "
                                   "edited, deleted or inserted by hand); these labels cannot be scored")  # fmt: skip
        prev = digest
        count += 1
    return ChainHead(table=table, rows=count, head=prev)
