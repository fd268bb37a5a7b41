"""``tasks mine``: candidates from history, FAIL_TO_PASS / PASS_TO_PASS from real sandboxed runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from reviewbench.cli.schema import json_schema
from reviewbench.config import MineConfig, ValidateConfig
from reviewbench.errors import NoCases, NoMatchingCommits, OutputExists, UsageError
from reviewbench.records import SelectionSignal
from reviewbench.tasks import mine_tasks, read_tasks
from reviewbench.tasks.mine import problem_statement

from ..conftest import run_cli

PYTEST = f"{sys.executable} -m pytest -q -p no:randomly"

CALC = "def add(a, b):\n    return a - b\n\n\ndef half(n):\n    return n // 2\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n\n\ndef half(n):\n    return n // 2\n"
TEST_CALC = (
    "from pkg.calc import add, half\n\n\n"
    "def test_half():\n    assert half(4) == 2\n\n\n"
    "def test_known_broken():\n    assert half(3) == 1.5\n"
)
TEST_CALC_FIXED = TEST_CALC + "\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FLAKY_TEST = (
    "from pathlib import Path\n\n\n"
    "def test_flip():\n"
    "    marker = Path(__file__).with_name('marker')\n"
    "    if marker.exists():\n        marker.unlink()\n        assert False\n"
    "    marker.write_text('x')\n"
)


def _settings(**extra) -> ValidateConfig:
    return ValidateConfig(**{"test_cmd": PYTEST, "jobs": 2, "timeout": 120, **extra})


@pytest.fixture
def history(git_repo):
    """Four fix commits: a real task, one without tests, one whose test already passed, a flaky one."""
    repo = git_repo("proj")
    repo.commit("initial", {"pkg/__init__.py": "", "pkg/calc.py": CALC, "pkg/text.py": "def up(s):\n    return s\n",
                            "tests/test_calc.py": TEST_CALC, "tests/test_text.py": "def test_nothing():\n    pass\n"})  # fmt: skip
    shas = {}
    shas["task"] = repo.commit(
        "Fix add subtracting (#12)\n\nadd() returned a - b. Fixes #12, see 1a2b3c4d5e.\n\nSigned-off-by: Dev <d@x>\n",
        {"pkg/calc.py": CALC_FIXED, "tests/test_calc.py": TEST_CALC_FIXED},
    )
    shas["no_tests"] = repo.commit("fix up() to upper-case", {"pkg/text.py": "def up(s):\n    return s.upper()\n"})
    shas["already_passing"] = repo.commit(
        "fix half's rounding note",
        {"pkg/calc.py": CALC_FIXED.replace("def half(n):\n", 'def half(n):\n    """Half, rounded down."""\n'),
         "tests/test_text.py": "def test_nothing():\n    pass\n\n\ndef test_more():\n    pass\n"},
    )  # fmt: skip
    shas["flaky"] = repo.commit(
        "fix text module and add a flaky test",
        {"pkg/text.py": "def up(s):\n    return str(s).upper()\n", "tests/test_flaky.py": FLAKY_TEST},
    )
    repo.commit("docs: readme", {"README.md": "hello\n"})
    return repo, shas


def test_tasks_fail_to_pass_and_pass_to_pass(history, tmp_path):
    repo, shas = history
    summary = mine_tasks(MineConfig(repo=repo.path), tmp_path / "tasks", _settings())
    loaded = read_tasks(tmp_path / "tasks")
    assert [t.fix_commit for t in loaded.tasks] == [shas["task"]]
    task = loaded.tasks[0]
    assert task.base_commit == repo.git("rev-parse", f"{shas['task']}^")
    assert task.FAIL_TO_PASS == ["tests/test_calc.py::test_add"]
    # test_known_broken fails before and after: in neither list.
    assert task.PASS_TO_PASS == ["tests/test_calc.py::test_half"]
    assert task.gold_files == ["pkg/calc.py"] and task.test_files == ["tests/test_calc.py"]
    assert "pkg/calc.py" in task.patch and "tests/" not in task.patch
    assert task.test_patch.startswith("diff --git a/tests/test_calc.py b/tests/test_calc.py")
    assert task.patch_lines == 2
    assert task.problem_statement == "Fix add subtracting\n\nadd() returned a - b."
    assert task.instance_id.startswith("proj-") and shas["task"][:7] not in task.instance_id
    counts = summary.meta.counts
    assert counts.tasks == 1 and counts.matched_commits == 4 and counts.candidates == 3
    assert counts.dropped["no_test_change"] == 1
    assert counts.dropped["no_fail_to_pass"] == 1
    assert counts.dropped["flaky"] == 1
    assert sum(counts.dropped.values()) + counts.tasks == counts.matched_commits
    assert (tmp_path / "tasks" / "logs" / f"{task.instance_id}.log").is_file()


def test_every_line_validates_against_the_shipped_schema(history, tmp_path):
    repo, _ = history
    mine_tasks(MineConfig(repo=repo.path), tmp_path / "tasks", _settings())
    schema = json_schema("tasks")
    lines = (tmp_path / "tasks" / "tasks.jsonl").read_text().splitlines()
    assert lines
    for line in lines:
        jsonschema.validate(json.loads(line), schema)
    jsonschema.validate(json.loads((tmp_path / "tasks" / "tasks.json").read_text()), json_schema("tasks-meta"))
    swe_fields = {"instance_id", "base_commit", "patch", "test_patch", "problem_statement",
                  "FAIL_TO_PASS", "PASS_TO_PASS", "created_at", "repo"}  # fmt: skip
    assert swe_fields <= set(json.loads(lines[0]))


def test_gold_and_test_patch_apply_at_the_base(history, tmp_path):
    repo, _ = history
    mine_tasks(MineConfig(repo=repo.path), tmp_path / "tasks", _settings())
    task = read_tasks(tmp_path / "tasks").tasks[0]
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "checkout", "-q", task.base_commit], check=True)
    for text in (task.test_patch, task.patch):
        subprocess.run(["git", "-C", str(work), "apply", "-"], input=text.encode(), check=True)
    assert (work / "pkg" / "calc.py").read_text() == CALC_FIXED


def test_limit_and_max_lines(history, tmp_path):
    repo, _ = history
    with pytest.raises(NoCases, match="too_large 3"):
        mine_tasks(MineConfig(repo=repo.path, max_lines=1), tmp_path / "tasks", _settings())
    with pytest.raises(NoCases):
        mine_tasks(MineConfig(repo=repo.path, limit=1, grep=("fix text",)), tmp_path / "t2", _settings())
    meta = json.loads((tmp_path / "t2" / "tasks.json").read_text())
    assert meta["counts"]["candidates"] == 1 and meta["counts"]["dropped"]["flaky"] == 1


def test_refusals(history, tmp_path, git_repo):
    repo, _ = history
    with pytest.raises(UsageError, match="pytest"):
        mine_tasks(MineConfig(repo=repo.path), tmp_path / "t", ValidateConfig(test_cmd="make test"))
    with pytest.raises(NoMatchingCommits):
        # The message alone (a source edit with its test edit would still take the fixes).
        mine_tasks(MineConfig(repo=repo.path, grep=("nothing-matches-this",), select=(SelectionSignal.MESSAGE,)),
                   tmp_path / "t", _settings())
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(OutputExists):
        mine_tasks(MineConfig(repo=repo.path), tmp_path / "full", _settings(), force=True)
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Fix crash on empty input (#431)", "Fix crash on empty input"),
        ("Fix parse()\n\nCloses https://github.com/o/r/issues/9\n", "Fix parse()"),
        ("fix: handle None\n\nReverts abc1234 and fixes gh-77.\nCo-authored-by: X <x@y>", "fix: handle None\n\nReverts."),
        ("Fix facade decoding; see owner/repo#3", "Fix facade decoding"),
        ("Fixed\n\n(cherry picked from commit 0123456789abcdef0123456789abcdef01234567)", "Fixed"),
    ],
)
def test_problem_statement_strips_ids_and_links(message, expected):
    assert problem_statement(message) == expected


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd)


def test_cli_mine_json_and_errors(history, tmp_path):
    repo, _ = history
    done = _cli("tasks", "mine", str(repo.path), "--out", "tasks", "--test-cmd", PYTEST, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["tasks"] == 1 and summary["dropped"]["flaky"] == 1
    (tmp_path / "plain").mkdir()
    bad = _cli("tasks", "mine", "plain", "--out", "t", cwd=tmp_path)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "not a git repository" in bad.stderr


def test_a_hanging_test_is_dropped_as_timeout_without_running_the_gold_patch(git_repo, tmp_path):
    repo = git_repo("hang")
    repo.commit("initial", {"pkg/__init__.py": "", "pkg/calc.py": CALC, "tests/test_calc.py": TEST_CALC})
    hang = "import threading, time\n\n\ndef test_hang():\n    threading.Thread(target=time.sleep, args=(600,)).start()\n"
    repo.commit("fix add, with a test that leaves a thread behind",
                {"pkg/calc.py": CALC_FIXED, "tests/test_hang.py": hang})  # fmt: skip
    with pytest.raises(NoCases, match="timeout 1"):
        mine_tasks(MineConfig(repo=repo.path), tmp_path / "tasks", _settings(timeout=3))
    log = next((tmp_path / "tasks" / "logs").glob("*.log")).read_text()
    assert "before (tests only) run 1: timeout" in log and "after" not in log


def test_a_test_run_without_any_outcome_is_an_error_not_a_missing_fail_to_pass(git_repo, tmp_path):
    repo = git_repo("crash")
    repo.commit("initial", {"pkg/__init__.py": "", "pkg/calc.py": CALC, "tests/test_calc.py": TEST_CALC})
    crash = "import os\n\nos._exit(1)  # pytest dies before writing any report\n"
    repo.commit("fix add, with a test module that kills pytest",
                {"pkg/calc.py": CALC_FIXED, "tests/test_crash.py": crash})  # fmt: skip
    with pytest.raises(NoCases, match="error 1"):
        mine_tasks(MineConfig(repo=repo.path), tmp_path / "tasks", _settings())


def test_node_ids_keep_double_colons_inside_parameters(tmp_path):
    from reviewbench.validate.testcmd import node_id

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_url.py").write_text("")
    junit = "tests.test_url::test_parse[https://[::1]:80/?a=b]"
    assert node_id(junit, tmp_path) == "tests/test_url.py::test_parse[https://[::1]:80/?a=b]"
    assert node_id("tests.test_url.TestK::test_a[x::y]", tmp_path) == "tests/test_url.py::TestK::test_a[x::y]"
    assert node_id("tests.test_url", tmp_path) is None  # a collection error: no test name


def test_sigterm_while_testing_leaves_no_output_no_work_dir_and_no_process(git_repo, tmp_path):
    import signal
    import time

    repo = git_repo("term")
    repo.commit("initial", {"pkg/__init__.py": "", "pkg/calc.py": CALC, "tests/test_calc.py": TEST_CALC})
    # Tests cannot write outside their scratch tree: a sleeper of a unique length shows it started.
    sleeper = f"{600 + os.getpid() % 1000}.{time.time_ns() % 10**6}"
    hang = (f"import subprocess, time\n\n\ndef test_hang():\n    subprocess.Popen(['sleep', {sleeper!r}])\n"
            "    time.sleep(600)\n")
    repo.commit("fix add, with a slow test", {"pkg/calc.py": CALC_FIXED, "tests/test_hang.py": hang})
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "reviewbench", "tasks", "mine", str(repo.path), "--out", "tasks",
                             "--test-cmd", PYTEST], cwd=out, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    deadline = time.monotonic() + 60
    def started() -> bool:
        return bool(subprocess.run(["pgrep", "-f", f"sleep {sleeper}"], capture_output=True).stdout.strip())

    while not started() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert started(), "the test never started"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert err.strip().splitlines() == ["reviewbench: error: terminated"]
    assert list(out.iterdir()) == []  # neither tasks/ nor the hidden work directory
    leftover = subprocess.run(["pgrep", "-f", "test_hang"], capture_output=True, text=True).stdout.split()
    assert leftover == [] and not started()
