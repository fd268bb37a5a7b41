"""RunStore.record_many: the bulk form of record, one transaction, one code path."""

from __future__ import annotations

import sqlite3

import pytest

from reviewbench.errors import StoreError
from reviewbench.records import Finding, RunState
from reviewbench.store.runs import CachedReply, RunRow, RunStore


def _row(run_id: str, state: RunState = RunState.COMPLETED_FINDINGS, findings: int = 2, **extra) -> RunRow:
    return RunRow(
        run_id=run_id, case_id=f"case-{run_id}", condition="A", repetition=0, variant="original", state=state,
        latency_s=1.5, attempts=1, cached=False, model_requested="m", model_returned="m",
        params={"temperature": 0}, prompt_sha256="p" * 64, gold_sha256="g" * 64, tool_version="test",
        raw_output="out", unparsed=["noise"], cache_key=f"k-{run_id}",
        findings=[Finding(path="a.py", line=i + 1, severity="high", claim=f"claim {i}", raw=f"raw {i}")
                  for i in range(findings)],
        **extra,
    )  # fmt: skip


def test_record_many_stores_exactly_what_record_stores(tmp_path):
    rows = [_row("r1"), _row("r2", RunState.COMPLETED_NO_FINDINGS, findings=0), _row("r3", findings=5)]
    one = RunStore(tmp_path / "one.sqlite", create=True)
    for row in rows:
        one.record(row, None)
    many = RunStore(tmp_path / "many.sqlite", create=True)
    assert many.record_many(iter(rows)) == 3  # any iterable, counted
    assert [r.model_dump() for r in many.runs()] == [r.model_dump() for r in one.runs()]
    assert [r.model_dump() for r in many.runs()] == [r.model_dump() for r in rows]
    assert many.cached("k-r1") is None  # bulk rows carry no cached response


def test_record_many_replaces_a_run_like_record(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite", create=True)
    store.record(_row("r1", findings=4), CachedReply("text", "m", 1, 2, None))
    store.record_many([_row("r1", RunState.COMPLETED_NO_FINDINGS, findings=0)])
    (only,) = list(store.runs())
    assert only.state is RunState.COMPLETED_NO_FINDINGS and only.findings == []
    assert store.cached("k-r1") is not None  # the cache of the earlier answer is kept


def test_record_many_is_all_or_nothing(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite", create=True)
    store.record(_row("r0"), None)
    bad = _row("r2", tokens_in=2**70)  # SQLite cannot hold it
    with pytest.raises(StoreError, match="r2"):
        store.record_many([_row("r1"), bad, _row("r3")])
    assert [r.run_id for r in store.runs()] == ["r0"]
    store.close()
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:  # the file itself: nothing of r1 or r3
        assert db.execute("SELECT COUNT(*) FROM findings").fetchone()[0] == 2
