"""The run engine's own guarantees: retries keep history, the harness's failures are never
the reviewer's, implausible replies are recorded honestly. Real corpus, real SQLite store,
a real loopback endpoint where a reply matters."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

import pytest

from reviewbench.errors import SafetyStop, StoreError, UsageError
from reviewbench.records import FailureCode, RunState
from reviewbench.review.experiment import load_experiment
from reviewbench.review.runner import run_experiment
from reviewbench.score import ScoreOptions, score_run
from reviewbench.store import runs as runs_module
from reviewbench.store.runs import RunStore

from .conftest import run_cli
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
    conditions = "max_retries = 2\n" + _condition("dead", dead, retries=0)
    experiment = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=1))
    out = tmp_path / "runs"
    assert run_experiment(experiment, out, check_endpoints=False).by_state == {"failed": 3}
    first, history = _runs(out)
    assert history == [] and {r.try_no for r in first} == {1}
    assert run_experiment(experiment, out, retry_failed=True, check_endpoints=False).by_state == {"failed": 3}
    assert run_experiment(experiment, out, retry_failed=True, check_endpoints=False).by_state == {"failed": 3}
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

    def lock_after_first(counts, finished, total, last_error):
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


def test_latency_is_the_answering_attempt_alone_not_retries_or_backoff(tmp_path, corpus):  # noqa: F811
    with FakeLLMServer() as server:
        # Each case's first request fails (500) and is retried after ~1 s of backoff; the
        # answer itself comes after 0.2 s. Latency is that answer's time, not the whole run's.
        server.script(Reply.server_error(500), Reply.server_error(500), Reply.server_error(500))
        server.default = Reply.answer("app/a.py:2 high missing guard", delay=0.2)
        conditions = _condition("A", _openai(server), concurrency=3, retries=2)
        experiment = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=1))
        run_experiment(experiment, tmp_path / "runs")
    runs, _ = _runs(tmp_path / "runs")
    assert [r.attempts for r in runs] == [2, 2, 2]
    for run in runs:
        started = datetime.fromisoformat(run.started_at)
        ended = datetime.fromisoformat(run.ended_at)
        whole = (ended - started).total_seconds()
        assert 0.2 <= run.latency_s < whole  # the backoff (>= 0.5 s) is in the run, not its latency
        assert whole - run.latency_s >= 0.4


def test_retry_failed_beyond_the_registered_max_retries_is_refused(tmp_path, corpus):  # noqa: F811
    dead = '{ kind = "openai", base_url = "http://127.0.0.1:9/v1", model = "m", api_key_env = "" }'
    experiment = load_experiment(_experiment(tmp_path, corpus, _condition("dead", dead, retries=0), repeats=1))
    out = tmp_path / "runs"
    run_experiment(experiment, out, check_endpoints=False)
    assert run_experiment(experiment, out, retry_failed=True, check_endpoints=False).by_state == {"failed": 3}
    with pytest.raises(UsageError, match=r"retry rule \(max_retries = 1\) allows no retry of the 3 failed"):
        run_experiment(experiment, out, retry_failed=True, check_endpoints=False)
    current, history = _runs(out)
    assert {r.try_no for r in current} == {2} and len(history) == 3
    assert {r.failure_code for r in [*current, *history]} == {FailureCode.ENDPOINT_ERROR}


def test_retry_on_allows_only_the_registered_failure_codes(tmp_path, corpus):  # noqa: F811
    dead = '{ kind = "openai", base_url = "http://127.0.0.1:9/v1", model = "m", api_key_env = "" }'
    conditions = 'retry_on = ["outage_indicated"]\n' + _condition("dead", dead, retries=0)
    experiment = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=1))
    run_experiment(experiment, tmp_path / "runs", check_endpoints=False)
    with pytest.raises(UsageError, match="on = outage_indicated"):
        run_experiment(experiment, tmp_path / "runs", retry_failed=True, check_endpoints=False)


def test_a_retried_failure_stays_a_missing_review_in_completion(tmp_path, corpus):  # noqa: F811
    """3 cases x 1 repetition: every first attempt fails (HTTP 500, no retries), the retries
    all complete. By hand: 6 attempts, 3 completed -> completion 3/6 = 0.5, missing reviews
    3/6, 3 endpoint_error; without the history completion would read 3/3."""
    with FakeLLMServer() as server:
        server.default = Reply.server_error(500)
        experiment = load_experiment(_experiment(tmp_path, corpus, _condition("A", _openai(server), retries=0),
                                                 repeats=1))  # fmt: skip
        out = tmp_path / "runs"
        assert run_experiment(experiment, out).by_state == {"failed": 3}
        server.default = Reply.answer("app/a.py:2 high missing None guard")
        assert run_experiment(experiment, out, retry_failed=True).by_state == {"completed_findings": 3}
    completion = score_run(out, ScoreOptions(bootstrap=50, include_unvalidated=True)).as_json()
    completion = completion["conditions"]["A"]["metrics"]["completion"]
    assert (completion["num"], completion["den"], completion["value"]) == (3, 6, 0.5)
    assert completion["missing_reviews"] == {"value": 0.5, "num": 3, "den": 6}
    assert completion["retired"] == {"failed": 3} and completion["states"] == {"completed_findings": 3}
    assert completion["failure_codes"] == {"endpoint_error": 3}
    assert completion["failure_codes_by_stratum"] == {"fix_reversal": {"endpoint_error": 3}}
    board = run_cli("score", out, "--bootstrap", "100", "--include-unvalidated", "--details").stdout
    assert "missing reviews 3/6 attempts (3 retired by a retry and still counted); failure codes: endpoint_error 3" in board
    # runs and export show the attempts: the three retired ones marked so, with their codes.
    listed = json.loads(run_cli("runs", out, "--json", "--attempts").stdout)
    assert sorted((r["retired"], r["try_no"], r["state"], r["failure_code"]) for r in listed) == (
        [(False, 2, "completed_findings", None)] * 3 + [(True, 1, "failed", "endpoint_error")] * 3)
    assert len(json.loads(run_cli("runs", out, "--json").stdout)) == 3
    exported = [json.loads(line) for line in run_cli("export", out, "--attempts").stdout.splitlines()]
    assert sorted(r["retired"] for r in exported) == [False] * 3 + [True] * 3
    table = run_cli("export", out, "--format", "csv", "--attempts").stdout.splitlines()
    assert table[0].endswith(",try_no,failure_code,retired") and len(table) == 7


def test_an_interrupted_run_is_redone_and_its_attempt_kept(tmp_path, corpus):  # noqa: F811
    experiment = load_experiment(_experiment(tmp_path, corpus, _condition("silent", '{ kind = "silent" }'),
                                             repeats=1))  # fmt: skip
    out = tmp_path / "runs"
    run_experiment(experiment, out)
    store = RunStore(out / "runs.sqlite", create=True)
    try:
        victim = next(iter(store.runs()))
        store.record(victim.model_copy(update={"state": RunState.CANCELLED, "failure_code": FailureCode.OPERATOR_ERROR,
                                               "findings": []}), None)  # fmt: skip
    finally:
        store.close()
    assert run_experiment(experiment, out).by_state == {"completed_no_findings": 3}
    current, history = _runs(out)
    assert [(r.run_id, r.state, r.failure_code) for r in history] == [
        (victim.run_id, RunState.CANCELLED, FailureCode.OPERATOR_ERROR)]
    assert {r.run_id: r.try_no for r in current}[victim.run_id] == 2
    # An interruption is the operator's: not a missing review, and no retry spent.
    completion = score_run(out, ScoreOptions(bootstrap=50, include_unvalidated=True)).as_json()
    completion = completion["conditions"]["silent"]["metrics"]["completion"]
    assert (completion["num"], completion["den"]) == (3, 3) and "retired" not in completion


@pytest.mark.parametrize(("said", "key"), [
    ("app/a.py:2 high the config holds ghp_" + "A1b2" * 9, None),  # a GitHub token's shape
    ("app/a.py:2 high the key is rb-0123456789-not-a-pattern", "rb-0123456789-not-a-pattern"),  # the key in play
])  # fmt: skip
def test_a_credential_in_a_reviewer_s_output_stops_the_experiment_and_is_not_kept(tmp_path, corpus, monkeypatch,
                                                                                   said, key):  # noqa: F811
    monkeypatch.setenv("RB_LEAK_KEY", key or "unused-value")
    with FakeLLMServer() as server:
        server.default = Reply.answer(said)
        reviewer = _openai(server, key_env="RB_LEAK_KEY")
        experiment = load_experiment(_experiment(tmp_path, corpus, _condition("A", reviewer, concurrency=1),
                                                 repeats=1))  # fmt: skip
        with pytest.raises(SafetyStop, match="in the reviewer's output; the experiment stopped") as info:
            run_experiment(experiment, tmp_path / "runs")
        printed = run_cli("run", tmp_path / "experiment.toml", "--out", tmp_path / "again",
                          env={"RB_LEAK_KEY": key or "x"})  # fmt: skip
    secret = said.split()[-1]
    assert secret not in str(info.value)
    runs, _ = _runs(tmp_path / "runs")
    stopped = [r for r in runs if r.failure_code == FailureCode.SAFETY_STOP]
    assert len(stopped) == 1 and stopped[0].state is RunState.FAILED and stopped[0].raw_output is None
    assert secret.encode() not in (tmp_path / "runs" / "runs.sqlite").read_bytes()
    errors = [line for line in printed.stderr.splitlines() if line.startswith("reviewbench: error")]
    assert printed.returncode == 1 and len(errors) == 1 and "the experiment stopped" in errors[0]
    assert secret not in printed.stderr and "Traceback" not in printed.stderr
