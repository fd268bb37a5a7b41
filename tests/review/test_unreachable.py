"""An endpoint that is not there costs seconds, not minutes (issue 27, item 4): the check
before planning, the stop after consecutive connection failures, and the last error shown.
Real closed loopback ports, a real loopback server, a real run store."""

from __future__ import annotations

import json

from reviewbench.review.experiment import load_experiment
from reviewbench.review.runner import run_experiment
from reviewbench.store.runs import RunStore, last_errors

from ..reviewers.servers import FakeLLMServer, Reply, closed_port
from .test_runner import _condition, _experiment, _openai, corpus  # noqa: F401 (fixture)


def _dead(port: int) -> str:
    return f'{{ kind = "openai", base_url = "http://127.0.0.1:{port}/v1", model = "m", api_key_env = "" }}'


def test_a_closed_port_is_refused_before_anything_is_planned(tmp_path, corpus, cli):  # noqa: F811
    port = closed_port()
    conditions = _condition("silent", '{ kind = "silent" }') + _condition("A", _dead(port))
    result = cli("run", _experiment(tmp_path, corpus, conditions), "--out", tmp_path / "runs")
    assert result.code == 1, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "condition A" in result.stderr and f"127.0.0.1:{port}" in result.stderr
    assert "connection refused" in result.stderr
    assert not (tmp_path / "runs").exists()  # nothing planned, nothing recorded


def test_a_host_that_does_not_resolve_is_refused_before_planning(tmp_path, corpus, cli):  # noqa: F811
    reviewer = '{ kind = "openai", base_url = "http://no-such-host.invalid/v1", model = "m", api_key_env = "" }'
    result = cli("run", _experiment(tmp_path, corpus, _condition("A", reviewer)), "--out", tmp_path / "runs")
    assert result.code == 1 and "host not found" in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "runs").exists()


def test_a_rejected_key_is_refused_before_planning_and_the_key_never_shown(tmp_path, corpus, cli,  # noqa: F811
                                                                           monkeypatch):  # fmt: skip
    monkeypatch.setenv("RB_TEST_KEY", "sk-test-secret-value")
    with FakeLLMServer() as server:
        server.models_status = 401
        path = _experiment(tmp_path, corpus, _condition("A", _openai(server, "RB_TEST_KEY")))
        result = cli("run", path, "--out", tmp_path / "runs")
        assert server.probes == 1 and server.count == 0  # no review was asked for
    assert result.code == 1 and result.stderr.count("\n") == 1
    assert "rejected the key in RB_TEST_KEY" in result.stderr and "HTTP 401" in result.stderr
    assert "sk-test-secret-value" not in result.stderr
    assert not (tmp_path / "runs").exists()


def test_a_running_endpoint_is_asked_once_however_many_conditions_share_it(tmp_path, corpus):  # noqa: F811
    with FakeLLMServer() as server:
        server.default = Reply.answer("NO_ISSUES")
        conditions = _condition("A", _openai(server)) + _condition("B", _openai(server))
        summary = run_experiment(load_experiment(_experiment(tmp_path, corpus, conditions, repeats=1)),
                                 tmp_path / "runs")  # fmt: skip
        assert server.probes == 1
    assert summary.by_state == {"completed_no_findings": 6} and not summary.stopped


def test_consecutive_connection_failures_stop_the_condition_and_the_others_go_on(tmp_path, corpus):  # noqa: F811
    """3 cases x 3 repetitions, one at a time, no retries: the default 5 failures stop the
    condition; its 4 other runs are not started (resumed later); the silent one runs all 9."""
    conditions = _condition("A", _dead(closed_port()), retries=0, concurrency=1) + _condition(
        "silent", '{ kind = "silent" }')  # fmt: skip
    experiment = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=3))
    seen: list[str | None] = []
    summary = run_experiment(experiment, tmp_path / "runs", check_endpoints=False,
                             on_update=lambda counts, done, total, last: seen.append(last))  # fmt: skip
    assert summary.by_state == {"completed_no_findings": 9, "failed": 5}
    assert summary.stopped.keys() == {"A"} and summary.not_started == {"A": 4}
    assert "stopped after 5 consecutive connection failures" in summary.stopped["A"]
    assert "connection refused" in summary.stopped["A"]
    assert any(last and last.startswith("A: ") and "connection refused" in last for last in seen)  # progress line


def test_the_stop_is_configurable_and_cuts_the_backoff_short(tmp_path, corpus):  # noqa: F811
    conditions = _condition("A", _dead(closed_port()), retries=4, concurrency=1, stop_after_connection_failures=2)
    experiment = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=1))
    summary = run_experiment(experiment, tmp_path / "runs", check_endpoints=False)
    assert summary.by_state == {"failed": 1} and summary.not_started == {"A": 2}
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    try:
        (run,) = store.runs()
    finally:
        store.close()
    assert run.attempts == 2  # stopped at the second failure, not retried four times


def test_zero_never_stops(tmp_path, corpus):  # noqa: F811
    conditions = _condition("A", _dead(closed_port()), retries=0, concurrency=1, stop_after_connection_failures=0)
    summary = run_experiment(load_experiment(_experiment(tmp_path, corpus, conditions, repeats=3)),
                             tmp_path / "runs", check_endpoints=False)  # fmt: skip
    assert summary.by_state == {"failed": 9} and not summary.stopped


def test_the_cli_names_the_stop_in_one_line_and_runs_show_the_last_error(tmp_path, corpus, cli):  # noqa: F811
    port = closed_port()
    conditions = _condition("A", _dead(port), retries=0, concurrency=1)
    path = _experiment(tmp_path, corpus, conditions, repeats=3)
    result = cli("run", path, "--out", tmp_path / "runs", "--no-endpoint-check")
    assert result.code == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "condition A stopped after 5 consecutive connection failures" in result.stderr
    assert f"127.0.0.1:{port}" in result.stderr and "4 of its runs not started" in result.stderr
    listed = cli("runs", tmp_path / "runs")
    assert listed.code == 0 and "last error of A (failed" in listed.stdout and "connection refused" in listed.stdout
    rows = json.loads(cli("runs", tmp_path / "runs", "--json").stdout)
    assert len(rows) == 5 and all("connection refused" in row["error"] for row in rows)
    last = last_errors(tmp_path / "runs")
    assert last.keys() == {"A"} and "connection refused" in last["A"].error and last["A"].state == "failed"
