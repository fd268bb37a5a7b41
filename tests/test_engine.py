"""The run engine's own guarantees: retries keep history, the harness's failures are never
the reviewer's, implausible replies are recorded honestly. Real corpus, real SQLite store,
a real loopback endpoint where a reply matters."""

from __future__ import annotations

import sqlite3

import pytest

from reviewbench.errors import StoreError
from reviewbench.records import RunState
from reviewbench.review.experiment import load_experiment
from reviewbench.review.runner import run_experiment
from reviewbench.store import runs as runs_module
from reviewbench.store.runs import RunStore

from .review.test_runner import _condition, _experiment, _openai, corpus  # noqa: F401 (fixture)
from .reviewers.servers import FakeLLMServer, Reply


def _runs(out):
    store = RunStore(out / "runs.sqlite")
    try:
        return list(store.runs()), store.history()
    finally:
        store.close()


def test_retry_failed_keeps_the_failed_attempts_with_their_try_numbers(tmp_path, corpus):  # noqa: F811
    dead = '{ kind = "openai", base_url = "http://127.0.0.1:9/v1", model = "m", api_key_env = "" }'
    experiment = load_experiment(_experiment(tmp_path, corpus, _condition("dead", dead, retries=0), repeats=1))
    out = tmp_path / "runs"
    assert run_experiment(experiment, out).by_state == {"failed": 3}
    first, history = _runs(out)
    assert history == [] and {r.try_no for r in first} == {1}
    assert run_experiment(experiment, out, retry_failed=True).by_state == {"failed": 3}
    assert run_experiment(experiment, out, retry_failed=True).by_state == {"failed": 3}
    current, history = _runs(out)
    assert {r.try_no for r in current} == {3}
    assert sorted((r.run_id, r.try_no) for r in history) == sorted(
        (r.run_id, n) for r in first for n in (1, 2)
    )
    assert all(r.state is RunState.FAILED and r.error for r in history)
    # The first attempt is kept exactly as it was recorded.
    by_id = {(r.run_id, r.try_no): r for r in history}
    for run in first:
        assert by_id[(run.run_id, 1)].as_dict() == run.as_dict()


def test_implausible_token_counts_are_recorded_as_unknown_with_a_note(tmp_path, corpus):  # noqa: F811
    with FakeLLMServer() as server:
        server.default = Reply.answer("app/a.py:2 high missing guard", tokens_in=10**20, tokens_out=7)
        experiment = load_experiment(_experiment(tmp_path, corpus, _condition("A", _openai(server)), repeats=1))
        summary = run_experiment(experiment, tmp_path / "runs")
    assert summary.by_state == {"completed_findings": 3}
    runs, _ = _runs(tmp_path / "runs")
    for run in runs:
        assert run.tokens_in is None and run.tokens_out == 7
        assert "implausible input token count" in run.error


def test_a_store_that_cannot_be_written_stops_the_experiment_without_blaming_the_reviewer(
    tmp_path, corpus, monkeypatch  # noqa: F811
):
    monkeypatch.setattr(runs_module, "BUSY_TIMEOUT_S", 0.2)
    conditions = _condition("silent", '{ kind = "silent" }', concurrency=1)
    experiment = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=2))
    out = tmp_path / "runs"
    holder: list[sqlite3.Connection] = []

    def lock_after_first(counts, finished, total):
        if not holder:  # another process takes the write lock and keeps it
            db = sqlite3.connect(out / "runs.sqlite", isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            holder.append(db)

    with pytest.raises(StoreError, match="locked"):
        run_experiment(experiment, out, on_update=lock_after_first)
    holder[0].execute("ROLLBACK")
    holder[0].close()
    recorded, _ = _runs(out)
    assert [r.state for r in recorded] == [RunState.COMPLETED_NO_FINDINGS]  # nothing blamed on the reviewer
    summary = run_experiment(experiment, out)
    assert summary.by_state == {"completed_no_findings": 6} and summary.already_done == 1
