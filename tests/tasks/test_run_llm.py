"""``tasks run`` with chat solvers against the real loopback endpoint: prompts and contexts,
diff extraction into run states, cache, unreachable endpoints, and keys never written."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from reviewbench.store.runs import RunStore
from reviewbench.tasks.experiment import load_tasks_experiment
from reviewbench.tasks.run import run_tasks
from reviewbench.tasks.solutions import read_solutions

from ..reviewers.servers import FakeLLMServer, Reply
from .test_run_support import (
    BASE_FILES,
    FIX_CALC,
    STATEMENT,
    condition,
    experiment_file,
    make_project,
)


@pytest.fixture
def project(git_repo, tmp_path):
    return make_project(git_repo, tmp_path)


def _openai(server: FakeLLMServer, key_env: str = "") -> str:
    return (f'{{ kind = "openai", base_url = "{server.openai_base_url}", model = "m-requested", '
            f'api_key_env = "{key_env}" }}')  # fmt: skip


def _anthropic(server: FakeLLMServer) -> str:
    return f'{{ kind = "anthropic", base_url = "{server.anthropic_base_url}", model = "claude-x", api_key_env = "" }}'


def _answer(project) -> str:
    return f"The upper bound is ignored; here is the fix.\n\n```diff\n{project.gold}```\n\nHope this helps!"


def _user(request) -> str:
    body = request.json
    if request.api == "anthropic":
        return body["messages"][0]["content"]
    return body["messages"][1]["content"]


def _system(request) -> str:
    body = request.json
    return body["system"] if request.api == "anthropic" else body["messages"][0]["content"]


def _run(tmp_path, project, conditions: str, repeats: int = 1, **kwargs):
    experiment = load_tasks_experiment(experiment_file(tmp_path, project.tasks, conditions, repeats=repeats))
    return run_tasks(experiment, tmp_path / "runs", **kwargs)


def test_contexts_prompt_extraction_and_cache(tmp_path, project):
    with FakeLLMServer() as server:
        server.default = Reply.answer(_answer(project), model="m-served")
        conditions = (condition("oracle", _openai(server), context="oracle")
                      + condition("bm25", _anthropic(server), context="bm25", top_k=1)
                      + condition("none", _openai(server), context="none"))  # fmt: skip
        summary = _run(tmp_path, project, conditions, repeats=2)
        assert summary.by_state == {"completed_findings": 6}
        assert server.count == 6 and summary.requests == 6
        requests = {(r.api, "### calc.py" in _user(r), "### " in _user(r)) for r in server.requests}
        assert requests == {("openai", True, True), ("anthropic", True, True), ("openai", False, False)}
        for request in server.requests:
            assert STATEMENT.strip() in _user(request)
            assert "unified diff" in _system(request)
            assert project.fix not in json.dumps(request.json) and "min(v, hi)" not in json.dumps(request.json)
        oracle = next(r for r in server.requests if r.api == "openai" and "### calc.py" in _user(r))
        assert BASE_FILES["calc.py"] in _user(oracle) and "### other.py" not in _user(oracle)
        again = _run(tmp_path, project, conditions, repeats=2)
        assert (again.already_done, again.requests, server.count) == (6, 0, 6)
    _, solutions = read_solutions(tmp_path / "runs")
    plain = "".join(line for line in project.gold.splitlines(keepends=True)
                    if not line.startswith(("diff --git", "index ")))  # fmt: skip
    assert {s.patch for s in solutions} == {plain}  # the extracted diff, re-written
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    runs = list(store.runs())
    store.close()
    assert all(r.raw_output == _answer(project) for r in runs)
    assert {r.model_returned for r in runs if r.condition != "bm25"} == {"m-served"}
    assert all(r.params["kind"] in ("openai", "anthropic") and len(r.prompt_sha256) == 64 for r in runs)


def test_no_diff_is_invalid_and_an_empty_diff_is_no_change(tmp_path, project):
    with FakeLLMServer() as server:
        server.script(Reply.answer("I would need to see the code first."), Reply.answer("No change is needed:\n```diff\n```"))
        summary = _run(tmp_path, project, condition("A", _openai(server), context="none", concurrency=1), repeats=2)
    assert summary.by_state == {"completed_no_findings": 1, "invalid": 1}
    _, solutions = read_solutions(tmp_path / "runs")
    by_state = {s.state: s for s in solutions}
    assert by_state["no_diff"].patch is None and by_state["no_change"].patch == ""
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    invalid = next(r for r in store.runs() if r.state == "invalid")
    store.close()
    assert invalid.raw_output == "I would need to see the code first."


def test_a_patch_the_model_gets_slightly_wrong_still_applies(tmp_path, project):
    sloppy = project.gold.replace("a/calc.py", "calc.py").replace("b/calc.py", "calc.py")
    sloppy = sloppy.replace("@@ -1,6 +1,6 @@", "@@ -1,4 +1,4 @@")
    with FakeLLMServer() as server:
        server.default = Reply.answer(f"Sure.\n```diff\n{sloppy}```")
        _run(tmp_path, project, condition("A", _openai(server), context="oracle"))
    _, [solution] = read_solutions(tmp_path / "runs")
    tree = tmp_path / "check"
    subprocess.run(["git", "clone", "-q", str(project.repo), str(tree)], check=True)
    subprocess.run(["git", "-C", str(tree), "checkout", "-q", project.base], check=True)
    proc = subprocess.run(["git", "-C", str(tree), "apply", "-"], input=solution.patch.encode(), capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert (tree / "calc.py").read_text() == FIX_CALC


def test_unreachable_endpoint_fails_runs_without_a_traceback(tmp_path, project):
    dead = '{ kind = "openai", base_url = "http://127.0.0.1:9/v1", model = "m", api_key_env = "" }'
    path = experiment_file(tmp_path, project.tasks, condition("dead", dead, retries=0, context="none"), repeats=2)
    proc = subprocess.run([sys.executable, "-m", "reviewbench", "tasks", "run", str(path), "--out",
                           str(tmp_path / "runs"), "--json"], capture_output=True, text=True)  # fmt: skip
    # Every run of the only condition failed: exit 1 with one line, the summary still printed.
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "every run of condition dead failed" in proc.stderr
    assert json.loads(proc.stdout)["by_state"] == {"failed": 2}
    assert "Traceback" not in proc.stderr
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    errors = [r.error for r in store.runs()]
    store.close()
    assert all("127.0.0.1:9" in e for e in errors)


def test_key_value_never_reaches_disk_or_output(tmp_path, project):
    secret = "sk-test-" + os.urandom(12).hex()
    with FakeLLMServer() as server:
        server.default = Reply.answer(_answer(project))
        path = experiment_file(tmp_path, project.tasks, condition("A", _openai(server, "RB_TEST_TASK_KEY")))
        env = {**os.environ, "RB_TEST_TASK_KEY": secret}
        outputs = []
        for args in (["tasks", "run", str(path), "--out", str(tmp_path / "runs")],
                     ["runs", str(tmp_path / "runs"), "--json"], ["export", str(tmp_path / "runs")]):  # fmt: skip
            proc = subprocess.run([sys.executable, "-m", "reviewbench", *args], capture_output=True, text=True, env=env)
            assert proc.returncode == 0, proc.stderr
            outputs.append(proc.stdout + proc.stderr)
        assert any(r.headers.get("authorization") == f"Bearer {secret}" for r in server.requests)
    assert all(secret not in text for text in outputs)
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert secret.encode() not in file.read_bytes(), file


def test_kill_and_resume_completes_every_run_exactly_once(git_repo, tmp_path):
    """A real subprocess killed mid-run, then run again: every run once, none asked twice."""
    import signal
    import sqlite3
    import time

    project = make_project(git_repo, tmp_path, n_tasks=3)
    with FakeLLMServer() as server:
        server.default = Reply.answer(_answer(project), delay=0.3)
        path = experiment_file(tmp_path, project.tasks, condition("A", _openai(server), context="oracle",
                                                                      concurrency=2), repeats=4)  # fmt: skip
        out = tmp_path / "runs"
        cmd = [sys.executable, "-m", "reviewbench", "tasks", "run", str(path), "--out", str(out)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done = 0
            if (out / "runs.sqlite").exists():
                db = sqlite3.connect(out / "runs.sqlite")
                try:
                    done = db.execute("SELECT count(*) FROM runs").fetchone()[0]
                except sqlite3.OperationalError:
                    pass
                db.close()
            if done >= 3:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        _, before = read_solutions(out)
        assert 0 < len(before) < 12
        resumed = subprocess.run(cmd + ["--json"], capture_output=True, text=True)
        assert resumed.returncode == 0, resumed.stderr
        summary = json.loads(resumed.stdout)
        assert summary["already_done"] == len(before) and summary["requests"] == 12 - len(before)
        assert server.count - 12 <= 2  # at most the requests in flight at the kill were asked twice
    _, after = read_solutions(out)
    assert len(after) == 12 and {s.state for s in after} == {"patched"}
