"""The review runner end to end: real corpus, real loopback endpoint, real SQLite store."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.errors import UsageError
from reviewbench.review.experiment import load_experiment
from reviewbench.review.runner import plan_runs, run_experiment
from reviewbench.store.runs import RunStore

from ..conftest import default_sigint, run_cli
from ..reviewers.servers import FakeLLMServer, Reply


@pytest.fixture
def corpus(git_repo, tmp_path) -> Path:
    """A corpus of three fix reversals (no controls, no mirrors: the tests count its runs)."""
    repo = git_repo()
    repo.commit("init", {"app/a.py": "def a(x):\n    return x\n", "app/b.py": "def b(x):\n    return x\n",
                         "app/c.py": "def c(x):\n    return x\n"})  # fmt: skip
    repo.commit("fix a", {"app/a.py": "def a(x):\n    if x is None:\n        return 0\n    return x\n"})
    repo.commit("fix b", {"app/b.py": "def b(x):\n    return x + 1\n"})
    repo.commit("fix c", {"app/c.py": "def c(x):\n    return abs(x)\n"})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), out)
    return out


def _experiment(tmp_path: Path, corpus: Path, conditions: str, repeats: int = 2, seed: int = 7) -> Path:
    path = tmp_path / "experiment.toml"
    path.write_text(f'corpus = "{corpus}"\nrepeats = {repeats}\nseed = {seed}\n{conditions}')
    return path


def _condition(name: str, reviewer: str, **extra) -> str:
    lines = ["[[condition]]", f'name = "{name}"', f"reviewer = {reviewer}"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def _openai(server: FakeLLMServer, key_env: str | None = None) -> str:
    key = f'"{key_env}"' if key_env else '""'
    return (f'{{ kind = "openai", base_url = "{server.openai_base_url}", model = "m-requested", '
            f"api_key_env = {key} }}")  # fmt: skip


def _states(out: Path) -> dict[tuple[str, str, int], str]:
    store = RunStore(out / "runs.sqlite")
    try:
        return {(r.case_id, r.condition, r.repetition): r.state for r in store.runs()}
    finally:
        store.close()


def test_plan_is_complete_interleaved_and_seeded(tmp_path, corpus):
    conditions = _condition("A", '{ kind = "silent" }') + _condition("B", '{ kind = "flag_all" }')
    experiment = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=3))
    data = read_corpus(corpus)
    plan = plan_runs(experiment, data)
    assert len(plan) == 3 * 2 * 3
    assert len({r.run_id for r in plan}) == len(plan)
    assert [r.run_id for r in plan] == [r.run_id for r in plan_runs(experiment, data)]
    other = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=3, seed=8))
    assert [r.run_id for r in plan] != [r.run_id for r in plan_runs(other, data)]
    # Interleaved: the conditions alternate somewhere in the first half, not in blocks.
    first_half = {r.condition.name for r in plan[: len(plan) // 2]}
    assert first_half == {"A", "B"}


def test_baselines_end_to_end_and_resume_sends_nothing(tmp_path, corpus):
    conditions = _condition("silent", '{ kind = "silent" }') + _condition("all", '{ kind = "flag_all" }')
    experiment = load_experiment(_experiment(tmp_path, corpus, conditions))
    out = tmp_path / "runs"
    summary = run_experiment(experiment, out)
    assert summary.by_state == {"completed_findings": 6, "completed_no_findings": 6}
    again = run_experiment(experiment, out)
    assert (again.already_done, again.requests) == (12, 0)
    store = RunStore(out / "runs.sqlite")
    runs = list(store.runs())
    store.close()
    flagged = [r for r in runs if r.condition == "all"]
    assert all(len(r.findings) == 1 for r in flagged)  # one hunk per case
    assert all(r.gold_sha256 == read_corpus(corpus).meta.gold_sha256 for r in runs)


def test_openai_runs_with_retries_timeouts_and_provenance(tmp_path, corpus):
    with FakeLLMServer() as server:
        server.default = Reply.answer("app/a.py:2 high missing None guard", model="m-served")
        # The first requests meet a 429 with Retry-After and a 500: both are retried.
        server.script(Reply.rate_limited(retry_after="0"), Reply.server_error(500))
        conditions = _condition("A", _openai(server), concurrency=2, timeout_s=5, retries=3)
        experiment = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=1))
        summary = run_experiment(experiment, tmp_path / "runs")
        assert summary.by_state == {"completed_findings": 3}
        assert server.count == 5 and summary.requests == 5
        assert server.max_in_flight <= 2
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    runs = list(store.runs())
    store.close()
    assert sum(r.attempts for r in runs) == 5
    for run in runs:
        assert run.model_requested == "m-requested" and run.model_returned == "m-served"
        assert run.params["temperature"] == 0.0
        assert len(run.prompt_sha256) == 64 and run.started_at.endswith("+00:00")
        assert run.findings[0].path == "app/a.py" and run.findings[0].line == 2
        assert run.raw_output == "app/a.py:2 high missing None guard"


def test_timeout_malformed_and_garbage_each_get_one_state(tmp_path, corpus):
    with FakeLLMServer() as server:
        server.script(Reply.slow(5), Reply.malformed(), Reply.answer("Sure! Here is my review of it."))
        conditions = _condition("A", _openai(server), concurrency=1, timeout_s=1, retries=0)
        experiment = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=1))
        summary = run_experiment(experiment, tmp_path / "runs")
    assert summary.by_state == {"failed": 1, "invalid": 1, "timed_out": 1}
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    runs = {r.state: r for r in store.runs()}
    store.close()
    assert "1s" in runs["timed_out"].error
    assert runs["invalid"].unparsed == ["Sure! Here is my review of it."]


def test_unreachable_endpoint_fails_its_runs_and_the_experiment_continues(tmp_path, corpus):
    dead = '{ kind = "openai", base_url = "http://127.0.0.1:9/v1", model = "m", api_key_env = "" }'
    conditions = _condition("dead", dead, retries=0) + _condition("silent", '{ kind = "silent" }')
    experiment = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=1))
    summary = run_experiment(experiment, tmp_path / "runs", check_endpoints=False)  # the runs themselves fail
    assert summary.by_state == {"completed_no_findings": 3, "failed": 3}
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    errors = {r.error for r in store.runs() if r.state == "failed"}
    store.close()
    assert errors and all(e for e in errors)


def test_missing_key_variable_is_a_usage_error_before_any_run(tmp_path, corpus, monkeypatch):
    # Regression: it was N `failed` runs, exit 0 and "N requests sent" although none were.
    monkeypatch.delenv("RB_TEST_NO_SUCH_KEY", raising=False)
    with FakeLLMServer() as server:
        conditions = _condition("A", _openai(server, "RB_TEST_NO_SUCH_KEY"), retries=0)
        experiment = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=1))
        with pytest.raises(UsageError, match="condition A: environment variable RB_TEST_NO_SUCH_KEY is not set"):
            run_experiment(experiment, tmp_path / "runs")
        assert server.count == 0
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(("reviewer", "context", "message"), [
    ('{ kind = "openai", base_url = "ftp://x/v1", model = "m", api_key_env = "" }', "diff", "http:// or https://"),
    ('{ kind = "openai", base_url = "not a url", model = "m", api_key_env = "" }', "diff", "base_url"),
    ('{ kind = "sarif", command = "ruff check --output-format sarif ." }', "diff", 'context = "tree"'),
    ('{ kind = "anthropic", model = "m", api_key_env = "", headers = { "x-note" = "caf\u00e9" } }', "diff",
     "printable ASCII"),
    # A credential written into the experiment is recorded with it (run store, report): refused.
    ('{ kind = "openai", model = "m", api_key_env = "", headers = { "api-key" = "abc123" } }', "diff",
     'header_env = { "api-key" = "VARIABLE" }'),
    ('{ kind = "anthropic", model = "m", api_key_env = "", headers = { "Authorization" = "Bearer x" } }', "diff",
     "header_env"),
    ('{ kind = "openai", base_url = "https://me:pw@proxy.example/v1", model = "m", api_key_env = "" }', "diff",
     "base_url carries a credential"),
    ('{ kind = "openai", base_url = "https://proxy.example/v1?api-version=1&key=abc", model = "m", '
     'api_key_env = "" }', "diff", "base_url carries a credential"),
])  # fmt: skip
def test_config_mistakes_are_usage_errors_before_any_run(tmp_path, corpus, cli, reviewer, context, message):
    conditions = _condition("A", reviewer, context=context)
    path = _experiment(tmp_path, corpus, conditions, repeats=1)
    result = cli("run", path, "--out", tmp_path / "runs")
    assert result.code == 2 and message in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "runs").exists()


def test_requests_that_never_left_are_not_counted_as_sent(tmp_path, corpus):
    dead = '{ kind = "openai", base_url = "http://127.0.0.1:9/v1", model = "m", api_key_env = "" }'
    experiment = load_experiment(_experiment(tmp_path, corpus, _condition("dead", dead, retries=1), repeats=1))
    summary = run_experiment(experiment, tmp_path / "runs", check_endpoints=False)
    assert summary.by_state == {"failed": 3} and summary.requests == 0


def test_key_value_never_reaches_disk_or_output(tmp_path, corpus):
    secret = "sk-test-" + os.urandom(12).hex()
    with FakeLLMServer() as server:
        conditions = _condition("A", _openai(server, "RB_TEST_KEY"))
        path = _experiment(tmp_path, corpus, conditions, repeats=1)
        env = {**os.environ, "RB_TEST_KEY": secret}
        outputs = []
        for args in (["run", str(path), "--out", str(tmp_path / "runs")], ["runs", str(tmp_path / "runs"), "--json"],
                     ["export", str(tmp_path / "runs")], ["export", str(tmp_path / "runs"), "--format", "csv"]):  # fmt: skip
            proc = subprocess.run([sys.executable, "-m", "reviewbench", *args], capture_output=True, text=True, env=env)
            assert proc.returncode == 0, proc.stderr
            outputs.append(proc.stdout + proc.stderr)
        assert any(r.headers.get("authorization") == f"Bearer {secret}" for r in server.requests)
    assert all(secret not in text for text in outputs)
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert secret.encode() not in file.read_bytes(), file


def test_a_header_read_from_the_environment_is_sent_and_never_written(tmp_path, corpus):
    """Azure-style endpoints take the key in their own header (``api-key``): ``header_env``
    names the variable, as ``api_key_env`` does for the bearer token."""
    secret = "azure-" + os.urandom(12).hex()
    with FakeLLMServer() as server:
        reviewer = (f'{{ kind = "openai", base_url = "{server.openai_base_url}", model = "m", api_key_env = "", '
                    'headers = { "x-note" = "plain" }, header_env = { "api-key" = "RB_TEST_HEADER_KEY" } }')  # fmt: skip
        path = _experiment(tmp_path, corpus, _condition("A", reviewer), repeats=1)
        env = {k: v for k, v in os.environ.items() if k != "RB_TEST_HEADER_KEY"}
        proc = subprocess.run([sys.executable, "-m", "reviewbench", "run", str(path), "--out", str(tmp_path / "no")],
                              capture_output=True, text=True, env=env)  # fmt: skip
        assert proc.returncode == 2 and "RB_TEST_HEADER_KEY is not set" in proc.stderr and server.count == 0
        env["RB_TEST_HEADER_KEY"] = secret
        outputs = []
        for args in (["run", str(path), "--out", str(tmp_path / "runs")], ["runs", str(tmp_path / "runs"), "--json"],
                     ["export", str(tmp_path / "runs")], ["report", str(tmp_path / "runs")]):  # fmt: skip
            proc = subprocess.run([sys.executable, "-m", "reviewbench", *args], capture_output=True, text=True, env=env)
            assert proc.returncode == 0, proc.stderr
            outputs.append(proc.stdout + proc.stderr)
        assert server.requests and all(r.headers.get("api-key") == secret for r in server.requests)
        assert all(r.headers.get("x-note") == "plain" and "authorization" not in r.headers for r in server.requests)
    assert all(secret not in text for text in outputs)
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert secret.encode() not in file.read_bytes(), file


def test_changed_corpus_or_experiment_is_refused(tmp_path, corpus):
    conditions = _condition("A", '{ kind = "silent" }')
    experiment = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=1))
    run_experiment(experiment, tmp_path / "runs")
    other = load_experiment(_experiment(tmp_path, corpus, conditions, repeats=2))
    with pytest.raises(UsageError, match="different experiment"):
        run_experiment(other, tmp_path / "runs")
    gold = corpus / "gold.jsonl"
    gold.write_text(gold.read_text().replace('"fix_reversal"', '"fix_reversal" ', 1))
    meta = json.loads((corpus / "corpus.json").read_text())
    import hashlib

    meta["gold_sha256"] = hashlib.sha256(gold.read_bytes()).hexdigest()
    (corpus / "corpus.json").write_text(json.dumps(meta))
    with pytest.raises(UsageError, match="gold.jsonl changed"):
        run_experiment(experiment, tmp_path / "runs")


def test_export_formats_and_runs_listing(tmp_path, corpus):
    conditions = _condition("all", '{ kind = "flag_all" }')
    path = _experiment(tmp_path, corpus, conditions, repeats=2)
    out = tmp_path / "runs"
    assert run_cli("run", path, "--out", out).returncode == 0
    listed = json.loads(run_cli("runs", out, "--json").stdout)
    assert len(listed) == 6
    required = {"run_id", "case_id", "condition", "repetition", "variant", "state", "model_requested",
                "model_returned", "tokens_in", "tokens_out", "latency_s", "findings"}  # fmt: skip
    assert all(required <= set(row) for row in listed)
    assert {row["findings"] for row in listed} == {1}
    lines = run_cli("export", out).stdout.splitlines()
    records = [json.loads(line) for line in lines]
    assert all({"task", "model", "repeat", "text"} <= set(r) for r in records)
    assert {r["repeat"] for r in records} == {0, 1}
    csv_text = run_cli("export", out, "--format", "csv").stdout
    assert csv_text.splitlines()[0].startswith("run_id,case_id,condition")
    assert len(csv_text.splitlines()) == 7


def test_kill_and_resume_completes_every_run_exactly_once(tmp_path, corpus):
    """A real subprocess killed mid-run, then run again: every run once, none asked twice."""
    with FakeLLMServer(latency=0.3) as server:
        conditions = _condition("A", _openai(server), concurrency=2)
        path = _experiment(tmp_path, corpus, conditions, repeats=4)  # 12 runs
        out = tmp_path / "runs"
        cmd = [sys.executable, "-m", "reviewbench", "run", str(path), "--out", str(out)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if (out / "runs.sqlite").exists():
                db = sqlite3.connect(out / "runs.sqlite")
                try:
                    done = db.execute("SELECT count(*) FROM runs").fetchone()[0]
                except sqlite3.OperationalError:
                    done = 0
                db.close()
                if done >= 3:
                    break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        first = server.count
        done_before = len(_states(out))
        assert 0 < done_before < 12
        resumed = subprocess.run(cmd + ["--json"], capture_output=True, text=True)
        assert resumed.returncode == 0, resumed.stderr
        summary = json.loads(resumed.stdout)
        states = _states(out)
        assert len(states) == 12 and set(states.values()) == {"completed_findings"}
        assert summary["already_done"] == done_before
        # Only runs not recorded before the kill were asked again; at most the ones then in
        # flight (concurrency 2) were asked twice.
        assert summary["requests"] == 12 - done_before
        assert server.count - 12 <= 2
        assert first >= done_before
        again = subprocess.run(cmd + ["--json"], capture_output=True, text=True)
        assert json.loads(again.stdout)["requests"] == 0


def test_ctrl_c_records_cancelled_runs_and_resume_redoes_them(tmp_path, corpus):
    with FakeLLMServer(latency=2.0) as server:
        conditions = _condition("A", _openai(server), concurrency=3)
        path = _experiment(tmp_path, corpus, conditions, repeats=1)
        out = tmp_path / "runs"
        cmd = [sys.executable, "-m", "reviewbench", "run", str(path), "--out", str(out)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=default_sigint)  # fmt: skip
        deadline = time.monotonic() + 30
        while server.in_flight < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130
        assert err.strip().splitlines() == ["reviewbench: error: interrupted"]
        assert set(_states(out).values()) == {"cancelled"}
        server.latency = 0.0
        resumed = subprocess.run(cmd + ["--json"], capture_output=True, text=True)
        assert resumed.returncode == 0, resumed.stderr
    assert set(_states(out).values()) == {"completed_findings"}


def test_cli_exits_non_zero_when_every_run_of_a_condition_failed(tmp_path, corpus, cli):
    dead = '{ kind = "openai", base_url = "http://127.0.0.1:9/v1", model = "m", api_key_env = "" }'
    conditions = _condition("dead", dead, retries=0) + _condition("silent", '{ kind = "silent" }')
    path = _experiment(tmp_path, corpus, conditions, repeats=1)
    result = cli("run", path, "--out", tmp_path / "runs", "--json", "--no-endpoint-check")
    assert result.code == 1
    assert json.loads(result.stdout)["unanswered_conditions"].keys() == {"dead"}  # the summary is still printed
    assert result.stderr.count("\n") == 1 and "every run of condition dead failed" in result.stderr
    ok = cli("run", _experiment(tmp_path, corpus, _condition("silent", '{ kind = "silent" }'), repeats=1),
             "--out", tmp_path / "runs2")  # fmt: skip
    assert ok.code == 0, ok.stderr


def test_guidance_files_reach_a_prompted_reviewer_as_the_text_that_applies(tmp_path, corpus):
    """Files under app/ apply to the corpus's app/*.py changes; one under docs/ never does."""
    (tmp_path / "root.md").write_text("Root rule.\n")
    (tmp_path / "app.md").write_text("R-02: app code checks None.\n")
    (tmp_path / "docs.md").write_text("Docs rule.\n")
    placed = ('[{ path = "AGENTS.md", file = "root.md" }, { path = "app/AGENTS.md", file = "app.md" }, '
              '{ path = "docs/AGENTS.md", file = "docs.md" }]')  # fmt: skip
    with FakeLLMServer() as server:
        server.default = Reply.answer("NO_ISSUES")
        nearest = _condition("near", _openai(server), guidance_scope="nearest").replace(
            "guidance_scope", f"guidance_files = {placed}\nguidance_scope")  # fmt: skip
        text = _condition("all", _openai(server)) + f"guidance_files = {placed}\n" + nearest
        summary = run_experiment(load_experiment(_experiment(tmp_path, corpus, text, repeats=1)), tmp_path / "runs")
        systems = [r.json["messages"][0]["content"] for r in server.requests]
    assert summary.by_state == {"completed_no_findings": 6}
    both = [s for s in systems if "Root rule." in s]
    near = [s for s in systems if "Root rule." not in s]
    assert len(both) == 3 and all("### AGENTS.md" in s and "### app/AGENTS.md" in s and "R-02" in s for s in both)
    assert len(near) == 3 and all("R-02" in s for s in near)
    assert not any("Docs rule." in s for s in systems)
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    try:
        runs = list(store.runs())
    finally:
        store.close()
    blob = {name: subprocess.run(["git", "hash-object", str(tmp_path / f"{name}.md")], capture_output=True,
                                 text=True, check=True).stdout.strip() for name in ("root", "app")}  # fmt: skip
    assert {r.condition: r.guidance_blobs for r in runs} == {
        "all": {"AGENTS.md": blob["root"], "app/AGENTS.md": blob["app"]}, "near": {"app/AGENTS.md": blob["app"]}}


@pytest.mark.parametrize(("extra", "message"), [
    ('guidance = "a.md"\nguidance_files = [{ path = "AGENTS.md", file = "a.md" }]', "not both"),
    ('guidance_files = [{ path = "../AGENTS.md", file = "a.md" }]', "must be a relative path inside"),
    ('guidance_files = [{ path = "AGENTS.md", file = "a.md" }, { path = "AGENTS.md", file = "b.md" }]', "given twice"),
])  # fmt: skip
def test_bad_guidance_files_are_one_line_on_load(tmp_path, extra, message):
    path = tmp_path / "experiment.toml"
    path.write_text(f'corpus = "c"\n[[condition]]\nname = "A"\nreviewer = {{ kind = "silent" }}\n{extra}\n')
    printed = run_cli("run", path, "--out", tmp_path / "runs")
    assert printed.returncode == 2 and message in printed.stderr
    assert len(printed.stderr.strip().splitlines()) == 1 and "Traceback" not in printed.stderr


def test_retry_failed_beyond_the_rule_is_one_line_from_the_cli(tmp_path, corpus):
    dead = '{ kind = "openai", base_url = "http://127.0.0.1:9/v1", model = "m", api_key_env = "" }'
    experiment = _experiment(tmp_path, corpus, "max_retries = 0\n" + _condition("dead", dead, retries=0), repeats=1)
    run_cli("run", experiment, "--out", tmp_path / "runs", "--no-endpoint-check")  # every run failed (exit 1)
    printed = run_cli("run", experiment, "--out", tmp_path / "runs", "--retry-failed", "--no-endpoint-check")
    assert printed.returncode == 2 and "allows no retry of the 3 failed or timed-out run(s)" in printed.stderr
    assert len(printed.stderr.strip().splitlines()) == 1
