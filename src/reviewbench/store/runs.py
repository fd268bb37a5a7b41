"""The run store: one SQLite file (WAL) per run directory, ``RUNDIR/runs.sqlite``.

A run and its findings are written in one transaction when the run ends, and the
response that produced them goes into a content-addressed cache in the same transaction,
so a crash at any moment leaves each run either wholly recorded or absent — never half.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..errors import CorpusError, UsageError
from ..records import Finding, Severity

__all__ = ["RUNS_DB", "CachedReply", "RunRow", "RunStore"]

RUNS_DB = "runs.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    case_id TEXT NOT NULL,
    condition TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    variant TEXT NOT NULL,
    state TEXT NOT NULL,
    started_at TEXT,
    ended_at TEXT,
    latency_s REAL,
    attempts INTEGER NOT NULL,
    cached INTEGER NOT NULL,
    model_requested TEXT,
    model_returned TEXT,
    params TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    guidance_sha256 TEXT,
    gold_sha256 TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    tokens_in INTEGER,
    tokens_out INTEGER,
    raw_output TEXT,
    unparsed TEXT NOT NULL,
    error TEXT,
    cache_key TEXT NOT NULL,
    patch TEXT
);
CREATE TABLE IF NOT EXISTS findings (
    run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    path TEXT,
    line INTEGER,
    severity TEXT,
    claim TEXT NOT NULL,
    raw TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    model TEXT,
    tokens_in INTEGER,
    tokens_out INTEGER,
    findings TEXT,
    patch TEXT
);
"""

# Columns added after the first release: (table, column, type). Older stores gain them on open.
_ADDED_COLUMNS = (("runs", "patch", "TEXT"), ("cache", "patch", "TEXT"))


@dataclass(frozen=True)
class CachedReply:
    """A response as cached: enough to rebuild the run without asking again."""

    text: str
    model: str | None
    tokens_in: int | None
    tokens_out: int | None
    findings: tuple[Finding, ...] | None
    patch: str | None = None
    """Fix-task runs of solvers that edit a tree: the change they made (not in ``text``)."""


@dataclass(frozen=True)
class RunRow:
    """One run with its provenance (SPEC 7)."""

    run_id: str
    case_id: str
    condition: str
    repetition: int
    variant: str
    state: str
    started_at: str | None
    ended_at: str | None
    latency_s: float | None
    attempts: int
    cached: bool
    model_requested: str | None
    model_returned: str | None
    params: dict
    prompt_sha256: str
    guidance_sha256: str | None
    gold_sha256: str
    tool_version: str
    tokens_in: int | None
    tokens_out: int | None
    raw_output: str | None
    unparsed: list[str]
    error: str | None
    cache_key: str
    findings: list[Finding] = field(default_factory=list)
    patch: str | None = None
    """Fix-task runs: the unified diff the solver produced ("" for no change); None for
    review runs and for task runs with nothing to grade."""

    def as_dict(self) -> dict:
        data = asdict(self)
        data["findings"] = [f.model_dump(mode="json") for f in self.findings]
        if self.patch is None:
            del data["patch"]  # review runs export exactly what they always did
        return data


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to an existing store whose tables are all there."""
    from urllib.parse import quote

    try:
        db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, isolation_level=None)
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise CorpusError(f"{path} is not a readable run store: {exc}") from None
    missing = sorted({"meta", "runs", "findings", "cache"} - tables)
    if missing:
        db.close()
        raise CorpusError(f"{path} is damaged: its table(s) {', '.join(missing)} are missing")
    return db


class RunStore:
    """Read and write ``runs.sqlite``; one connection, used from one thread."""

    def __init__(self, path: Path, create: bool = False) -> None:
        self.path = path
        if not create and not path.is_file():
            raise CorpusError(f"{path.parent} is not a run directory (no {RUNS_DB}); run 'reviewbench run' first")
        if not create:
            self.db = _open_read_only(path)  # read commands never change a store, nor repair it
            return
        try:
            self.db = sqlite3.connect(path, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(_SCHEMA)
            for table, column, kind in _ADDED_COLUMNS:
                present = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
                if column not in present:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        except sqlite3.DatabaseError as exc:
            raise CorpusError(f"{path} is not a readable run store: {exc}") from None

    def close(self) -> None:
        self.db.close()

    # -- metadata -------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.DatabaseError as exc:
            raise CorpusError(f"{self.path} is damaged and cannot be read: {exc}") from None
        return row[0] if row else None

    def set_meta(self, values: dict[str, str]) -> None:
        with self._tx():
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

    def check_meta(self, values: dict[str, str], what: dict[str, str]) -> None:
        """Record ``values`` on first use; afterwards refuse to mix in different ones.

        Raises:
            UsageError: a recorded value differs (e.g. the corpus's gold changed).
        """
        for key, value in values.items():
            recorded = self.get_meta(key)
            if recorded is not None and recorded != value:
                raise UsageError(
                    f"{self.path.parent} holds runs of a different {what.get(key, key)}; "
                    "use a new --out directory (results are never silently mixed)"
                )
        self.set_meta(values)

    # -- runs -----------------------------------------------------------------------------

    def done_ids(self) -> set[str]:
        """Runs with a terminal state other than ``cancelled`` (those are redone)."""
        return {r[0] for r in self.db.execute("SELECT run_id FROM runs WHERE state != 'cancelled'")}

    def cached(self, key: str) -> CachedReply | None:
        row = self.db.execute(
            "SELECT text, model, tokens_in, tokens_out, findings, patch FROM cache WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        findings = None
        if row[4] is not None:
            findings = tuple(Finding.model_validate(f) for f in json.loads(row[4]))
        return CachedReply(row[0], row[1], row[2], row[3], findings, row[5])

    def record(self, run: RunRow, reply: CachedReply | None) -> None:
        """Write a finished run, its findings and (if any) its response, atomically."""
        # A shallow copy: dataclasses.asdict deep-copies every finding, on the hot path.
        values = {f.name: getattr(run, f.name) for f in fields(RunRow) if f.name != "findings"}
        values["params"] = json.dumps(run.params, sort_keys=True)
        values["unparsed"] = json.dumps(run.unparsed)
        values["cached"] = int(run.cached)
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        with self._tx():
            self.db.execute("DELETE FROM runs WHERE run_id = ?", (run.run_id,))
            self.db.execute(f"INSERT INTO runs ({columns}) VALUES ({marks})", tuple(values.values()))
            self.db.executemany(
                "INSERT INTO findings VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(run.run_id, i, f.path, f.line, f.severity.value if f.severity else None, f.claim, f.raw)
                 for i, f in enumerate(run.findings)],
            )  # fmt: skip
            if reply is not None:
                findings = (None if reply.findings is None
                            else json.dumps([f.model_dump(mode="json") for f in reply.findings]))  # fmt: skip
                self.db.execute(
                    "INSERT OR IGNORE INTO cache (key, text, model, tokens_in, tokens_out, findings, patch) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (run.cache_key, reply.text, reply.model, reply.tokens_in, reply.tokens_out, findings,
                     reply.patch),
                )

    def runs(self) -> Iterator[RunRow]:
        """Every recorded run with its findings, in a stable order.

        Raises:
            CorpusError: the store is damaged (a corrupt page, a value no run can hold).
        """
        try:
            yield from self._runs()
        except (sqlite3.DatabaseError, ValueError, TypeError, KeyError) as exc:
            raise CorpusError(f"{self.path} is damaged and cannot be read: {type(exc).__name__}: {exc}") from None

    def _runs(self) -> Iterator[RunRow]:
        findings: dict[str, list[Finding]] = {}
        for run_id, path, line, severity, claim, raw in self.db.execute(
            "SELECT run_id, path, line, severity, claim, raw FROM findings ORDER BY run_id, idx"
        ):
            # Validated when written: rebuilt without validating again (a large store has
            # hundreds of thousands of findings).
            findings.setdefault(run_id, []).append(
                Finding.model_construct(path=path, line=line, severity=Severity(severity) if severity else None,
                                        claim=claim, raw=raw)
            )  # fmt: skip
        cursor = self.db.execute("SELECT * FROM runs ORDER BY case_id, condition, variant, repetition")
        names = [d[0] for d in cursor.description]
        for row in cursor:
            data = dict(zip(names, row, strict=True))
            data["params"] = json.loads(data["params"])
            data["unparsed"] = json.loads(data["unparsed"])
            data["cached"] = bool(data["cached"])
            yield RunRow(**data, findings=findings.get(data["run_id"], []))

    def _tx(self) -> _Transaction:
        return _Transaction(self.db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
