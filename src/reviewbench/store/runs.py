"""The run store: one SQLite file (WAL) per run directory, ``RUNDIR/runs.sqlite``.

A run and its findings are written in one transaction when the run ends, and the
response that produced them goes into a content-addressed cache in the same transaction,
so a crash at any moment leaves each run either wholly recorded or absent — never half.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import CorpusError, StoreError, UsageError
from ..records import FailureCode, Finding, PullRequest, RunRow, RunState, Severity

__all__ = ["ALLOCATION_FILE", "REGISTRATION_FILE", "REGISTRATION_SHA256", "RUNS_DB", "CachedReply", "LastError",
           "RunRow", "RunStore", "last_errors", "read_allocation"]

RUNS_DB = "runs.sqlite"
#: The run directory's registration (written by ``registration.py``).
REGISTRATION_FILE = "registration.json"
#: The meta key holding that file's SHA-256, recorded when the first run starts.
REGISTRATION_SHA256 = "registration_sha256"
#: The seeded order of every planned run, written by ``run`` at its first run.
ALLOCATION_FILE = "allocation.jsonl"

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
    patch TEXT,
    try_no INTEGER NOT NULL DEFAULT 1,
    pull_request TEXT,
    guidance_blobs TEXT,
    failure_code TEXT,
    position INTEGER,
    usage TEXT,
    network TEXT
);
CREATE TABLE IF NOT EXISTS history (
    run_id TEXT NOT NULL,
    try_no INTEGER NOT NULL,
    state TEXT NOT NULL,
    retired_at TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, try_no)
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
_ADDED_COLUMNS = (("runs", "patch", "TEXT"), ("cache", "patch", "TEXT"),
                  ("runs", "try_no", "INTEGER NOT NULL DEFAULT 1"), ("runs", "pull_request", "TEXT"),
                  ("runs", "guidance_blobs", "TEXT"), ("runs", "failure_code", "TEXT"),
                  ("runs", "position", "INTEGER"), ("runs", "usage", "TEXT"), ("runs", "network", "TEXT"))
_ADDED_DEFAULTS = {"try_no": "1"}
_COLUMNS = tuple(name for name in RunRow.model_fields if name != "findings")
_INSERT_RUN = f"INSERT INTO runs ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})"
# A run and a finding read back have every field set. Both models are frozen, so one set of
# those names serves every record (pydantic's own set per record is 2.2 KiB for a run, 0.7 KiB
# for a finding: 280 MiB of 50,000 runs with 5 findings each).
_RUN_FIELDS_SET = {*_COLUMNS, "findings"}
_FINDING_FIELDS_SET = {"path", "line", "severity", "claim", "raw"}
#: How long a writer waits for another process's lock before giving up (seconds).
BUSY_TIMEOUT_S = 60.0


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
    notes: tuple[str, ...] = ()
    """Notes for the run's record (never cached: a reply with notes is not kept in the cache)."""


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to an existing store whose tables are all there."""
    from urllib.parse import quote

    try:
        db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, isolation_level=None)
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is not a readable run store: {exc}") from None
    missing = sorted({"meta", "runs", "findings", "cache"} - tables)
    if missing:
        db.close()
        raise StoreError(f"{path} is damaged: its table(s) {', '.join(missing)} are missing")
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
            self.db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_S)
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
            raise StoreError(f"{self.path} is damaged and cannot be read: {exc}") from None
        return row[0] if row else None

    def set_meta(self, values: dict[str, str]) -> None:
        with self._tx():
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

    def seal_registration(self) -> str | None:
        """Record the SHA-256 of the run directory's ``registration.json`` when the first run
        starts (no run recorded, none recorded before); return the recorded digest, if any.

        A store that already holds runs without one (an older reviewbench) is never sealed
        after the fact: the file may have been edited in the meantime.
        """
        recorded = self.get_meta(REGISTRATION_SHA256)
        path = self.path.parent / REGISTRATION_FILE
        if recorded is not None or not path.is_file():
            return recorded
        with self._tx():
            if self.db.execute("SELECT 1 FROM runs LIMIT 1").fetchone() is None:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (REGISTRATION_SHA256, digest))
                return digest
        return None

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

    def state_counts(self) -> Counter[RunState]:
        """How many runs the store holds in each state."""
        return Counter({RunState(s): n for s, n in self.db.execute("SELECT state, COUNT(*) FROM runs GROUP BY state")})

    def conditions_without_answers(self) -> dict[str, str]:
        """Conditions whose every run failed or timed out, with one of their errors."""
        rows = self.db.execute(
            "SELECT condition, MIN(error) FROM runs GROUP BY condition "
            "HAVING SUM(state IN ('failed', 'timed_out')) = COUNT(*)"
        )
        return {condition: error or "no detail" for condition, error in rows}

    def retire(self, states: set[RunState], *, keep: Iterable[str] = ()) -> dict[str, int]:
        """Move the runs in ``states`` (but those in ``keep``) to the history, so they are run
        again; never delete them.

        Returns:
            run id -> the try number of the attempt retired (the next one is one more).
        """
        wanted = sorted(s.value for s in states)
        kept = set(keep)
        retired: dict[str, int] = {}
        with self._tx():
            rows = [r for r in self.runs() if r.state.value in wanted and r.run_id not in kept]
            for run in rows:
                self.db.execute(
                    "INSERT OR REPLACE INTO history (run_id, try_no, state, retired_at, record) VALUES (?, ?, ?, "
                    "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?)",
                    (run.run_id, run.try_no, run.state.value, json.dumps(run.as_dict(), sort_keys=True)),
                )  # fmt: skip
                self.db.execute("DELETE FROM runs WHERE run_id = ?", (run.run_id,))
                retired[run.run_id] = run.try_no
        return retired

    def retries_used(self) -> Counter[str]:
        """Per run id: earlier attempts retired by a retry (interrupted ones, ``cancelled``, are not retries)."""
        if not self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'history'").fetchone():
            return Counter()
        return Counter({run_id: n for run_id, n in self.db.execute(
            "SELECT run_id, COUNT(*) FROM history WHERE state != 'cancelled' GROUP BY run_id")})  # fmt: skip

    def history(self) -> list[RunRow]:
        """Earlier attempts retired by ``run --retry-failed``, oldest try first."""
        out: list[RunRow] = []
        if not self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'history'").fetchone():
            return out  # a store from before run --retry-failed kept history
        for (record,) in self.db.execute("SELECT record FROM history ORDER BY run_id, try_no"):
            data = json.loads(record)
            data.setdefault("patch", None)
            out.append(RunRow.model_validate(data))
        return out

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
        """Write a finished run, its findings and (if any) its response, atomically.

        Raises:
            StoreError: the write failed (locked past the busy timeout, disk full, a value
                SQLite cannot hold); nothing of the run is written.
        """
        self._write([(run, reply)])

    def record_many(self, runs: Iterable[RunRow]) -> int:
        """Write many finished runs (no cached responses) in one transaction: all or none.

        The bulk form of :meth:`record` (same rows, same code), for importing or building
        large stores; a run already recorded under the same id is replaced.

        Returns:
            How many runs were written.

        Raises:
            StoreError: as :meth:`record`, naming the run that failed; nothing is written.
        """
        return self._write((run, None) for run in runs)

    def _write(self, items: Iterable[tuple[RunRow, CachedReply | None]]) -> int:
        run_id, count = None, 0
        try:
            with self._tx():
                for run, reply in items:
                    run_id = run.run_id
                    self._insert(run, reply)
                    count += 1
        except (sqlite3.Error, OverflowError) as exc:
            raise StoreError(f"cannot record run {run_id} in {self.path}: {_reason(exc)}") from None
        return count

    def _insert(self, run: RunRow, reply: CachedReply | None) -> None:
        values = [getattr(run, name) for name in _COLUMNS]
        values[_STATE] = run.state.value if isinstance(run.state, RunState) else RunState(run.state).value
        values[_PARAMS] = json.dumps(run.params, sort_keys=True)
        values[_UNPARSED] = json.dumps(run.unparsed)
        values[_CACHED] = int(run.cached)
        pull = run.pull_request
        values[_PULL] = None if pull is None else pull.model_dump_json()
        values[_BLOBS] = None if run.guidance_blobs is None else json.dumps(run.guidance_blobs, sort_keys=True)
        values[_CODE] = None if run.failure_code is None else FailureCode(run.failure_code).value
        values[_USAGE] = None if run.usage is None else json.dumps(run.usage, sort_keys=True)
        values[_NETWORK] = None if run.network is None else json.dumps(run.network, sort_keys=True)
        self.db.execute("DELETE FROM runs WHERE run_id = ?", (run.run_id,))
        self.db.execute(_INSERT_RUN, values)
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
            StoreError: the store is damaged (a corrupt page, a value no run can hold).
        """
        try:
            yield from self._runs()
        except (sqlite3.DatabaseError, ValueError, TypeError, KeyError) as exc:
            raise StoreError(f"{self.path} is damaged and cannot be read: {type(exc).__name__}: {exc}") from None

    def _runs(self) -> Iterator[RunRow]:
        findings: dict[str, list[Finding]] = {}
        for run_id, path, line, severity, claim, raw in self.db.execute(
            "SELECT run_id, path, line, severity, claim, raw FROM findings ORDER BY run_id, idx"
        ):
            # Validated when written: rebuilt without validating again (a large store has
            # hundreds of thousands of findings).
            findings.setdefault(run_id, []).append(
                Finding.model_construct(_FINDING_FIELDS_SET, path=path, line=line,
                                        severity=Severity(severity) if severity else None, claim=claim, raw=raw)
            )  # fmt: skip
        # A store opened read-only is never migrated: columns added since it was written
        # read as their default.
        present = {row[1] for row in self.db.execute("PRAGMA table_info(runs)")}
        wanted = ", ".join(c if c in present else f"{_ADDED_DEFAULTS.get(c, 'NULL')} AS {c}" for c in _COLUMNS)
        cursor = self.db.execute(f"SELECT {wanted} FROM runs ORDER BY case_id, condition, variant, repetition")
        for row in cursor:
            data = dict(zip(_COLUMNS, row, strict=True))
            data["state"] = RunState(data["state"])
            data["params"] = json.loads(data["params"])
            data["unparsed"] = json.loads(data["unparsed"])
            data["cached"] = bool(data["cached"])
            if data["pull_request"] is not None:
                data["pull_request"] = PullRequest.model_validate_json(data["pull_request"])
            if data["guidance_blobs"] is not None:
                data["guidance_blobs"] = json.loads(data["guidance_blobs"])
            if data["failure_code"] is not None:
                data["failure_code"] = FailureCode(data["failure_code"])
            if data["usage"] is not None:
                data["usage"] = json.loads(data["usage"])
            if data["network"] is not None:
                data["network"] = json.loads(data["network"])
            yield RunRow.model_construct(_RUN_FIELDS_SET, **data, findings=findings.pop(data["run_id"], []))

    def last_errors(self) -> dict[str, LastError]:
        """Per condition, the error of its latest run that gave no review (``failed``,
        ``timed_out``, ``invalid`` with a note; ``cancelled`` is the operator's, not counted).

        Raises:
            StoreError: the store is damaged.
        """
        present = {row[1] for row in self.db.execute("PRAGMA table_info(runs)")}
        code = "failure_code" if "failure_code" in present else "NULL"
        try:
            rows = self.db.execute(
                f"SELECT condition, run_id, case_id, state, error, ended_at, {code} FROM runs "
                "WHERE state IN ('failed', 'timed_out', 'invalid') AND error IS NOT NULL AND error != '' "
                "ORDER BY condition, ended_at, run_id").fetchall()  # fmt: skip
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is damaged and cannot be read: {exc}") from None
        return {row[0]: LastError(condition=row[0], run_id=row[1], case_id=row[2], state=RunState(row[3]),
                                  error=row[4], ended_at=row[5], failure_code=row[6]) for row in rows}  # fmt: skip

    def _tx(self) -> _Transaction:
        return _Transaction(self.db)


@dataclass(frozen=True)
class LastError:
    """The latest run of a condition that gave no review, and why."""

    condition: str
    run_id: str
    case_id: str
    state: RunState
    """``failed``, ``timed_out`` or ``invalid``."""
    error: str
    """The run's error as recorded (one line; no secret: adapters redact them)."""
    ended_at: str | None
    failure_code: str | None


def last_errors(rundir: Path) -> dict[str, LastError]:
    """Per condition of run directory ``rundir``, its last error (see ``RunStore.last_errors``);
    conditions without one are absent.

    Raises:
        CorpusError: ``rundir`` is not a run directory.
        StoreError: its store is damaged.
    """
    store = RunStore(rundir / RUNS_DB)
    try:
        return store.last_errors()
    finally:
        store.close()


_STATE, _PARAMS, _UNPARSED, _CACHED, _PULL, _BLOBS, _CODE, _USAGE, _NETWORK = (
    _COLUMNS.index(n) for n in ("state", "params", "unparsed", "cached", "pull_request", "guidance_blobs",
                                "failure_code", "usage", "network"))  # fmt: skip


def _reason(exc: BaseException) -> str:
    text = str(exc)
    if "database or disk is full" in text or "disk I/O" in text:
        return f"no space left on device ({text})"
    if "locked" in text:
        return f"the store stayed locked by another process for {BUSY_TIMEOUT_S:g}s ({text})"
    if isinstance(exc, OverflowError):
        return f"a value too large to store ({text})"
    return text


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def read_allocation(rundir: Path) -> list[dict[str, str]] | None:
    """The planned runs of ``RUNDIR/allocation.jsonl`` (``run_id``, ``case_id``,
    ``condition``), in their seeded order; None when the run directory has no plan
    (runs recorded before it was kept, or not by ``run``).

    Raises:
        StoreError: the file cannot be read or a line is not a planned run.
    """
    path = rundir / ALLOCATION_FILE
    if path.is_symlink() or not path.is_file():
        return None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"cannot read {path}: {exc}") from None
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            out.append({key: str(record[key]) for key in ("run_id", "case_id", "condition")})
        except (ValueError, KeyError, TypeError):
            raise StoreError(f"{path} line {number} is not a planned run (run_id, case_id, condition)") from None
    return out
