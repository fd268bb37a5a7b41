"""``tasks run`` with command solvers: a history-free tree, the patch they leave, run states,
resume without asking again, and ``read_solutions`` for the grader."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reviewbench.errors import CorpusError, GitError, UsageError
from reviewbench.store.runs import RunStore
from reviewbench.tasks.experiment import load_tasks_experiment
from reviewbench.tasks.export import export_base
from reviewbench.tasks.run import run_tasks
from reviewbench.tasks.solutions import read_solutions

from ..conftest import run_cli
from .test_run_support import FIX_CALC, command, condition, experiment_file, git_in, make_project


@pytest.fixture
def project(git_repo, tmp_path):
    return make_project(git_repo, tmp_path)


def _script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text("import json, os, pathlib, subprocess, sys\n"
                    "tree = pathlib.Path(os.environ['REVIEWBENCH_TREE'])\n" + body)  # fmt: skip
    return path


def _run(tmp_path, project, conditions: str, repeats: int = 1, **kwargs):
    experiment = load_tasks_experiment(experiment_file(tmp_path, project.tasks, conditions, repeats=repeats))
    return run_tasks(experiment, tmp_path / "runs", **kwargs)


def test_exported_tree_has_one_commit_and_none_of_the_fix(project):
    tree = export_base(project.repo, project.base, "proj-0001")
    try:
        assert git_in(tree.path, "log", "--all", "--format=%H").split() == [tree.commit]
        assert git_in(tree.path, "reflog", "--all").strip() == ""
        reachable = {line.split()[0] for line in git_in(tree.path, "rev-list", "--objects", "--all").splitlines()}
        assert tree.commit in reachable and _objects(tree.path) == reachable  # nothing else is stored
        assert git_in(tree.path, "tag").strip() == "" and git_in(tree.path, "remote").strip() == ""
        for obj in (project.fix, project.base, project.secret_blob):
            missing = subprocess.run(["git", "-C", str(tree.path), "cat-file", "-e", obj], capture_output=True)
            assert missing.returncode != 0, obj
        assert (tree.path / "calc.py").read_text() == "def clamp(v, lo, hi):\n    return max(lo, v)\n\n\ndef add(a, b):\n    return a + b\n"
        assert git_in(tree.path, "status", "--porcelain") == ""
        assert tree.patch() == ""
    finally:
        tree.remove()
    assert not tree.root.exists()


def _objects(tree: Path) -> set[str]:
    """Every object in the tree's repository (loose or packed)."""
    listing = git_in(tree, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(listing.split())


def test_missing_base_commit_is_a_git_error(project):
    with pytest.raises(GitError, match="proj-0001"):
        export_base(project.repo, "0" * 40, "proj-0001")


def test_gold_solver_noop_solver_and_tree_changes(tmp_path, project):
    # The packet on stdin is exactly {"instance_id", "problem_statement"}; the tree is the cwd.
    gold = _script(tmp_path, "gold", f"""
packet = json.load(sys.stdin)
assert set(packet) == {{"instance_id", "problem_statement"}}, packet
assert pathlib.Path.cwd() == tree
(tree / "calc.py").write_text({FIX_CALC!r})
print("fixed", packet["instance_id"])
""")
    noop = _script(tmp_path, "noop", "print('I looked and changed nothing')\n")
    # Adds, deletes, modifies, and commits its work: still measured against the base.
    busy = _script(tmp_path, "busy", """
(tree / "new_module.py").write_text("Y = 2\\n")
(tree / "other.py").unlink()
(tree / "README.md").write_text("A better calculator.\\n")
subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qam", "mine"], check=True)
""")
    conditions = (condition("gold", command(gold)) + condition("noop", command(noop))
                  + condition("busy", command(busy)))  # fmt: skip
    summary = _run(tmp_path, project, conditions, repeats=2)
    assert summary.by_state == {"completed_findings": 4, "completed_no_findings": 2}
    tasks_path, solutions = read_solutions(tmp_path / "runs")
    assert tasks_path == project.tasks.resolve()
    assert len(solutions) == 6 and {s.instance_id for s in solutions} == {"proj-0001"}
    by = {(s.condition, s.repetition): s for s in solutions}
    assert by["gold", 0].patch == project.gold and by["gold", 1].patch == project.gold
    assert by["noop", 0].patch == "" and by["noop", 0].state == "no_change"
    busy_patch = by["busy", 0].patch
    assert "+++ b/new_module.py" in busy_patch and "deleted file mode" in busy_patch
    assert "-A calculator." in busy_patch and "+A better calculator." in busy_patch
    # The patch applies to the base of the source repository.
    check = subprocess.run(["git", "-C", str(project.repo), "apply", "--check", "-"], input=busy_patch.encode(),
                           capture_output=True)  # fmt: skip
    assert check.returncode == 0, check.stderr
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    runs = {(r.condition, r.repetition): r for r in store.runs()}
    store.close()
    assert runs["gold", 0].raw_output == "fixed proj-0001\n"
    assert runs["gold", 0].model_requested == "command"
    assert runs["gold", 0].gold_sha256 != "" and len(runs["gold", 0].prompt_sha256) == 64


def test_failing_command_fails_its_run_and_resume_asks_nothing_again(tmp_path, project):
    counter = tmp_path / "calls.txt"
    counting = _script(tmp_path, "counting", f"""
with open({str(counter)!r}, "a") as f:
    f.write("x")
(tree / "calc.py").write_text({FIX_CALC!r})
""")
    broken = _script(tmp_path, "broken", "print('boom', file=sys.stderr)\nsys.exit(3)\n")
    # Unsandboxed: it counts its calls in a file outside its tree.
    conditions = condition("A", command(counting, sandbox=False)) + condition("bad", command(broken), retries=0)
    first = _run(tmp_path, project, conditions, repeats=2)
    assert first.by_state == {"completed_findings": 2, "failed": 2}
    assert counter.read_text() == "xx"
    again = _run(tmp_path, project, conditions, repeats=2)
    assert (again.already_done, again.requests) == (4, 0)
    assert counter.read_text() == "xx"
    retried = _run(tmp_path, project, conditions, repeats=2, retry_failed=True)
    assert retried.requests == 2 and counter.read_text() == "xx"
    _, solutions = read_solutions(tmp_path / "runs")
    failed = [s for s in solutions if s.condition == "bad"]
    assert all(s.state == "failed" and s.patch is None for s in failed)
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    errors = [r.error for r in store.runs() if r.state == "failed"]
    store.close()
    assert all("exited with code 3" in e and "boom" in e for e in errors)


def test_timeout_kills_the_solver_and_leaves_no_tree(tmp_path, project):
    marker = tmp_path / "late.txt"
    slow = _script(tmp_path, "slow", f"""
import time
print(tree, flush=True)
pathlib.Path({str(tmp_path / 'tree_was.txt')!r}).write_text(str(tree))
pathlib.Path({str(tmp_path / 'pid.txt')!r}).write_text(str(os.getpid()))
time.sleep(30)
pathlib.Path({str(marker)!r}).write_text("survived")
""")
    # Unsandboxed: it reports its pid and tree in files outside its tree.
    summary = _run(tmp_path, project, condition("slow", command(slow, sandbox=False), timeout_s=1, retries=0))
    assert summary.by_state == {"timed_out": 1}
    tree = Path((tmp_path / "tree_was.txt").read_text())
    assert not tree.exists()
    _, solutions = read_solutions(tmp_path / "runs")
    assert solutions[0].state == "timed_out" and solutions[0].patch is None
    assert not _alive(int((tmp_path / "pid.txt").read_text())) and not marker.exists()


def test_changed_task_set_or_experiment_is_refused(tmp_path, project):
    noop = _script(tmp_path, "noop", "pass\n")
    _run(tmp_path, project, condition("A", command(noop)))
    with pytest.raises(UsageError, match="different experiment"):
        _run(tmp_path, project, condition("A", command(noop)), repeats=2)


def test_missing_task_directory_is_one_clear_error(tmp_path):
    path = experiment_file(tmp_path, tmp_path / "nowhere", condition("A", '{ kind = "command", command = "true" }'))
    with pytest.raises(CorpusError, match="does not exist"):
        run_tasks(load_tasks_experiment(path), tmp_path / "runs")


def test_read_solutions_refuses_review_run_directories(tmp_path):
    with pytest.raises(CorpusError):
        read_solutions(tmp_path)  # no runs.sqlite
    RunStore(tmp_path / "runs.sqlite", create=True).close()
    with pytest.raises(CorpusError, match="no fix-task runs"):
        read_solutions(tmp_path)


def test_cli_runs_and_prints_json(tmp_path, project):
    noop = _script(tmp_path, "noop", "pass\n")
    path = experiment_file(tmp_path, project.tasks, condition("A", command(noop)), repeats=2)
    cmd = ["tasks", "run", path, "--out", tmp_path / "runs", "--json"]
    proc = run_cli(*cmd)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["planned"] == 2 and data["by_state"] == {"no_change": 2}
    plain = run_cli(*cmd[:-1])
    assert plain.returncode == 0 and "2 already done" in plain.stdout


def test_cli_takes_the_task_directory_first_as_in_tasks_run_TASKS_EXPERIMENT(tmp_path, project):
    noop = _script(tmp_path, "noop", "pass\n")
    path = experiment_file(tmp_path, tmp_path / "nowhere", condition("A", command(noop)), repeats=1)
    proc = run_cli("tasks", "run", project.tasks, path, "--out", tmp_path / "runs", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["planned"] == 1
    three = run_cli("tasks", "run", project.tasks, path, path, "--out", tmp_path / "runs", "--json")
    assert three.returncode == 2 and "at most two paths" in three.stderr


@pytest.mark.parametrize(("text", "message"), [
    ('tasks = "t"\n[[condition]]\nname = "A"\nsolver = { kind = "silent" }\n', "unknown solver kind 'silent'"),
    ('tasks = "t"\n[[condition]]\nname = "A"\nsolver = { kind = "openai" }\n', "condition A: solver.model"),
    ('corpus = "c"\n[[condition]]\nname = "A"\nreviewer = { kind = "silent" }\n', "review experiment"),
    ('tasks = "t"\n[[condition]\n', "invalid TOML"),
    ('tasks = "t"\n[[condition]]\nname = "A"\nsolver = { kind = "command", command = "x" }\ncontext = "all"\n',
     "condition A: context"),
])  # fmt: skip
def test_malformed_experiment_is_one_line_and_exit_2(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_tasks_experiment(path)
    proc = run_cli("tasks", "run", str(path), "--out", str(tmp_path / "runs"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_missing_task_dir_at_the_cli_is_one_line(tmp_path):
    path = experiment_file(tmp_path, tmp_path / "nowhere", condition("A", '{ kind = "command", command = "true" }'))
    proc = run_cli("tasks", "run", str(path), "--out", str(tmp_path / "runs"))
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1
    assert "does not exist" in proc.stderr


def test_init_writes_a_template_that_loads_and_matches_the_schema(tmp_path):
    import tomllib

    import jsonschema

    path = tmp_path / "t.toml"
    proc = run_cli("tasks", "init", str(path))
    assert proc.returncode == 0, proc.stderr
    experiment = load_tasks_experiment(path)
    assert experiment.config.condition[0].solver.kind == "openai" and experiment.config.condition[0].context == "bm25"
    schema = json.loads(run_cli("schema", "tasks-experiment").stdout)
    jsonschema.validate(tomllib.loads(path.read_text()), schema)
    again = run_cli("tasks", "init", str(path))
    assert again.returncode == 1 and "exists" in again.stderr


def test_run_then_grade_end_to_end(tmp_path, project):
    """The grader reads what the runner wrote: the gold solver resolves, the no-op does not."""
    from reviewbench.tasks.grade_run import grade_rundir

    gold = _script(tmp_path, "gold", f"(tree / 'calc.py').write_text({FIX_CALC!r})\n")
    noop = _script(tmp_path, "noop", "pass\n")
    _run(tmp_path, project, condition("gold", command(gold)) + condition("noop", command(noop)))
    summary = grade_rundir(tmp_path / "runs", {"jobs": 1, "timeout": 120, "test_cmd": f"{sys.executable} -m pytest -q"})
    verdicts = {g.condition: (g.applies_clean, g.tests_pass) for g in summary.grades}
    assert verdicts == {"gold": (True, True), "noop": (True, False)}


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper that a container may not have is dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def test_ctrl_c_cancels_kills_the_solver_removes_its_tree_and_resume_redoes_it(git_repo, tmp_path):
    import signal
    import time

    from ..conftest import default_sigint

    project = make_project(git_repo, tmp_path / "p", n_tasks=2)
    seen = tmp_path / "seen"
    seen.mkdir()
    flag = tmp_path / "go-fast"
    slow = _script(tmp_path, "slow", f"""
import time
(pathlib.Path({str(seen)!r}) / str(os.getpid())).write_text(str(tree))
while not pathlib.Path({str(flag)!r}).exists():
    time.sleep(0.05)
(tree / "calc.py").write_text({FIX_CALC!r})
""")
    # Unsandboxed: it talks to the test through files outside its tree.
    path = experiment_file(tmp_path, project.tasks, condition("A", command(slow, sandbox=False), concurrency=2))
    cmd = [sys.executable, "-m", "reviewbench", "tasks", "run", str(path), "--out", str(tmp_path / "runs")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    deadline = time.monotonic() + 60
    while len(list(seen.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip().splitlines() == ["reviewbench: error: interrupted"]
    _, solutions = read_solutions(tmp_path / "runs")
    assert {s.state for s in solutions} == {"cancelled"} and len(solutions) == 2
    for marker in seen.iterdir():
        assert not _alive(int(marker.name))
        assert not Path(marker.read_text()).exists()
    flag.write_text("")
    resumed = subprocess.run(cmd + ["--json"], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    _, solutions = read_solutions(tmp_path / "runs")
    assert {s.state for s in solutions} == {"patched"}


def test_tasks_run_TASKS_EXPERIMENT_works_without_a_tasks_line_in_the_file(tmp_path, project, cli):
    # Regression: "tasks: Field required" although TASKS was given on the command line.
    noop = _script(tmp_path, "noop", "pass\n")
    path = tmp_path / "no-tasks-line.toml"
    path.write_text("repeats = 1\n" + condition("A", command(noop)))
    result = cli("tasks", "run", project.tasks, path, "--out", tmp_path / "runs", "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["planned"] == 1, result
    alone = cli("tasks", "run", path, "--out", tmp_path / "runs2")
    assert alone.code == 2 and alone.stderr.count("\n") == 1
    assert "no task directory" in alone.stderr and "TASKS" in alone.stderr
