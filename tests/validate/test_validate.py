"""The validity gate on real repositories with real pytest suites."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config import ValidateConfig
from reviewbench.errors import CorpusError, UsageError
from reviewbench.store.corpus import sha256_file
from reviewbench.validate import validate_corpus

from ..conftest import default_sigint, run_cli

RANGE_OK = "def contains(size, index):\n    return 0 <= index < size\n"
RANGE_BUG = "def contains(size, index):\n    return 0 <= index <= size\n"


def _statuses(corpus: Path) -> dict[str, str]:
    """Subject of the fix commit → validation status."""
    return {
        g.provenance.subject: g.validation.status.value if g.validation else None
        for g in read_corpus(corpus).gold
    }


def _config(**values) -> ValidateConfig:
    values.setdefault("jobs", 2)
    values.setdefault("timeout", 60)
    return ValidateConfig(**values)


@pytest.fixture
def project(git_repo):
    """A pytest project whose history holds one fix of each validation outcome."""
    repo = git_repo("project")
    repo.commit("init", {
        "pkg/__init__.py": "",
        "pkg/ranges.py": RANGE_BUG,
        "pkg/text.py": "def shout(s):\n    return s.upper()\n",
        "pkg/loop.py": "def count(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n",
        "pkg/unused.py": "def helper(x):\n    return x * 2\n",
        "tests/test_text.py": "from pkg.text import shout\n\ndef test_shout():\n    assert shout('a') == 'A'\n",
        "tests/test_loop.py": "from pkg.loop import count\n\ndef test_count():\n    assert count(3) == 3\n",
        "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n",
    })  # fmt: skip
    # observed: the fix comes with a test that catches the bug.
    repo.commit("Fix off-by-one in contains", {
        "pkg/ranges.py": RANGE_OK,
        "tests/test_ranges.py": "from pkg.ranges import contains\n\ndef test_edge():\n    assert not contains(3, 3)\n\ndef test_inside():\n    assert contains(3, 1)\n",
    })  # fmt: skip
    # not_observed: no test exercises the changed code.
    repo.commit("fix helper factor", {"pkg/unused.py": "def helper(x):\n    return x * 3\n"})
    # not_observed too: the fix only added a constant no test reads (a comment alone is docs_only).
    repo.commit("fix loop increment", {"pkg/loop.py": "def count(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\nCHECKED = True\n"})
    return repo


def _mine(repo, out: Path) -> Path:
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), out)  # fix reversals only
    return out


def test_observed_not_observed_and_failing_ids(project, tmp_path):
    corpus = _mine(project, tmp_path / "corpus")
    summary = validate_corpus(corpus, _config())
    statuses = _statuses(corpus)
    assert statuses["Fix off-by-one in contains"] == "observed"
    # pkg/unused.py: no test imports it, so passing tests say nothing about the change.
    assert statuses["fix helper factor"] == "not_exercised"
    # pkg/loop.py: imported by a test, which passes with the patch.
    assert statuses["fix loop increment"] == "not_observed"
    gold = {g.provenance.subject: g for g in read_corpus(corpus).gold}
    assert gold["fix helper factor"].validation.reason == "no test imported pkg/unused.py from the tree"
    observed = gold["Fix off-by-one in contains"].validation
    assert observed.failing_tests == ["tests/test_ranges.py::test_edge"]
    assert observed.selection == "fix_tests"
    assert observed.exit_code == 1
    assert gold["fix helper factor"].validation.selection == "suite"
    assert summary.attempted == 3
    # corpus.json is updated: counts by status and the hash of the new gold.jsonl.
    meta = json.loads((corpus / "corpus.json").read_text())
    assert meta["gold_sha256"] == sha256_file(corpus / "gold.jsonl")
    assert sum(meta["counts"]["by_validation"].values()) == 3
    for case in read_corpus(corpus).cases:
        assert (corpus / "logs" / f"{case.case_id}.log").is_file()


def test_timeout_kills_the_whole_process_group(git_repo, tmp_path):
    repo = git_repo()
    sleeper = f"{300 + os.getpid() % 1000}.{time.time_ns() % 10**6}"
    repo.commit("init", {
        "pkg/__init__.py": "",
        "pkg/loop.py": "def count(n):\n    i = 0\n    while i < n:\n        pass\n    return i\n",
        "tests/test_loop.py": "import os, subprocess\nfrom pkg.loop import count\n\n"
                              "def test_count():\n"
                              f"    p = subprocess.Popen(['sleep', {sleeper!r}])\n"
                              "    print('child started', p.pid, flush=True)\n"
                              "    assert count(3) == 3\n",
    })  # fmt: skip
    repo.commit("fix loop increment", {"pkg/loop.py": "def count(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"})
    corpus = _mine(repo, tmp_path / "corpus")
    # -s: the child's start is printed to the case log (tests cannot write outside their scratch tree).
    validate_corpus(corpus, _config(timeout=3, test_cmd=f"{sys.executable} -m pytest -s"))
    assert _statuses(corpus) == {"fix loop increment": "timeout"}
    assert any("child started" in log.read_text() for log in (corpus / "logs").iterdir())
    assert _running(f"sleep {sleeper}") == [], "a process started by the tests survived"


def _running(pattern: str) -> list[str]:
    """Live (non-zombie) processes whose command line contains ``pattern``.

    Tests run in their own PID namespace, so the pids they see mean nothing here: they
    mark their processes with a unique argument instead.
    """
    found = []
    for stat in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmdline = stat.read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (stat.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if pattern in cmdline and state != "Z":
            found.append(cmdline)
    return found


def test_apply_failed(project, tmp_path):
    corpus = _mine(project, tmp_path / "corpus")
    case = next(c for c in read_corpus(corpus).cases if "ranges" in c.paths[0])
    patch = corpus / case.patch
    patch.write_text(patch.read_text().replace(" def contains(size, index):", " def contains(sz, index):"))
    validate_corpus(corpus, _config())
    assert _statuses(corpus)["Fix off-by-one in contains"] == "apply_failed"


def test_base_failing(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/a.py": "X = 1\n",
                         "tests/test_a.py": "def test_broken():\n    assert False\n"})  # fmt: skip
    repo.commit("fix X", {"pkg/a.py": "X = 2\n"})
    corpus = _mine(repo, tmp_path / "corpus")
    validate_corpus(corpus, _config())
    gold = read_corpus(corpus).gold[0]
    assert gold.validation.status == "base_failing"
    assert gold.validation.failing_tests == ["tests/test_a.py::test_broken"]


def test_a_fixture_beside_the_fix_tests_is_not_given_to_pytest(git_repo, tmp_path):
    """The fix edits a test and a JSON fixture under tests/: both are the fix's test files,
    but pytest given the JSON file on its command line stops ("found no collectors"), so
    only the Python file is selected and the case is observed by the fix's own test."""
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/ranges.py": RANGE_BUG, "tests/data/edges.json": "[2]\n",
                         "tests/test_ranges.py": "def test_inside():\n    assert True\n"})  # fmt: skip
    test = ("import json, pathlib\nfrom pkg.ranges import contains\n\ndef test_edges():\n"
            "    for n in json.loads((pathlib.Path(__file__).parent / 'data' / 'edges.json').read_text()):\n"
            "        assert not contains(n, n)\n")  # fmt: skip
    repo.commit("Fix the edge of contains", {"pkg/ranges.py": RANGE_OK, "tests/data/edges.json": "[3]\n",
                                             "tests/test_ranges.py": test})  # fmt: skip
    corpus = _mine(repo, tmp_path / "corpus")
    validate_corpus(corpus, _config())
    gold = read_corpus(corpus).gold[0]
    assert "tests/data/edges.json" in gold.provenance.test_paths
    assert gold.validation.status == "observed", gold.validation.reason
    assert gold.validation.selection == "fix_tests"
    assert gold.validation.failing_tests == ["tests/test_ranges.py::test_edges"]


def test_flaky_when_the_failure_does_not_reproduce(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {
        "pkg/__init__.py": "", "pkg/a.py": "def value():\n    return 1\n",
        "tests/test_a.py": "import os\nfrom pathlib import Path\nfrom pkg.a import value\n\n"
                           "def test_value():\n"
                           "    p = Path(os.environ['HOME'], 'runs.txt')  # the scratch HOME outlives a run\n"
                           "    n = int(p.read_text()) if p.exists() else 0\n"
                           "    p.write_text(str(n + 1))\n"
                           "    # only the first run (with the bug) fails\n"
                           "    assert value() == 2 or n != 0\n",
    })  # fmt: skip
    repo.commit("fix value", {"pkg/a.py": "def value():\n    return 2\n"})
    corpus = _mine(repo, tmp_path / "corpus")
    validate_corpus(corpus, _config(reruns=2))
    assert _statuses(corpus) == {"fix value": "flaky"}


def test_reruns_must_all_fail_for_observed(project, tmp_path):
    corpus = _mine(project, tmp_path / "corpus")
    validate_corpus(corpus, _config(reruns=3))
    log = next((corpus / "logs").iterdir())
    gold = {g.case_id: g for g in read_corpus(corpus).gold}
    observed = [cid for cid, g in gold.items() if g.validation.status == "observed"]
    text = (corpus / "logs" / f"{observed[0]}.log").read_text()
    assert text.count("patched (fix_tests) run ") == 6  # three runs, two notes each
    assert log.is_file()


class _Server:
    """A loopback TCP server that answers one byte to each connection."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.sendall(b"x")
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("network, expected", [("deny", "base_failing"), ("allow", "observed")])
def test_network_is_denied_by_default(git_repo, tmp_path, network, expected):
    server = _Server()
    try:
        repo = git_repo()
        repo.commit("init", {
            "pkg/__init__.py": "", "pkg/a.py": "def value():\n    return 1\n",
            "tests/test_net.py": "import socket\nfrom pkg.a import value\n\n"
                                 "def test_net():\n"
                                 f"    s = socket.create_connection(('127.0.0.1', {server.port}), timeout=2)\n"
                                 "    assert s.recv(1) == b'x'\n"
                                 "    assert value() == 2\n",
        })  # fmt: skip
        repo.commit("fix value", {"pkg/a.py": "def value():\n    return 2\n"})
        corpus = _mine(repo, tmp_path / "corpus")
        validate_corpus(corpus, _config(network=network))
        assert _statuses(corpus) == {"fix value": expected}
    finally:
        server.close()


def _cli(*args: str, env: dict | None = None, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "reviewbench", *args], stdout=subprocess.PIPE, preexec_fn=default_sigint,
                            stderr=subprocess.PIPE, text=True, env=env, **kwargs)  # fmt: skip


def _isolated_env(tmp_path: Path) -> dict[str, str]:
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    return {**os.environ, "HOME": str(home), "TMPDIR": str(tmp)}


def test_writes_outside_the_tree_leave_nothing_behind(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {
        "pkg/__init__.py": "", "pkg/a.py": "def value():\n    return 1\n",
        "tests/test_a.py": "import os, tempfile\nfrom pathlib import Path\nfrom pkg.a import value\n\n"
                           "def test_value():\n"
                           "    Path(os.path.expanduser('~/leak.txt')).write_text('x')\n"
                           "    Path(tempfile.gettempdir(), 'leak.txt').write_text('x')\n"
                           "    tempfile.mkdtemp()\n"
                           "    assert value() == 2\n",
    })  # fmt: skip
    repo.commit("fix value", {"pkg/a.py": "def value():\n    return 2\n"})
    corpus = _mine(repo, tmp_path / "corpus")
    env = _isolated_env(tmp_path)
    proc = _cli("validate", str(corpus), "--json", env=env)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert json.loads(out)["by_status"] == {"observed": 1}
    assert list((tmp_path / "home").iterdir()) == []
    assert list((tmp_path / "tmp").iterdir()) == []
    assert subprocess.run(["git", "-C", str(repo.path), "status", "--porcelain"],
                          capture_output=True, text=True).stdout == ""  # fmt: skip
    assert subprocess.run(["git", "-C", str(repo.path), "worktree", "list"],
                          capture_output=True, text=True).stdout.count("\n") == 1  # fmt: skip


@pytest.mark.parametrize(("signum", "code", "message"), [
    (signal.SIGINT, 130, "interrupted"),
    (signal.SIGTERM, 143, "terminated"),  # kill, a CI runner's cancel, systemd: the same clean-up
])  # fmt: skip
def test_ctrl_c_leaves_nothing_behind_and_resumes(git_repo, tmp_path, signum, code, message):
    repo = git_repo()
    sleeper = f"{300 + os.getpid() % 1000}.{time.time_ns() % 10**6}"
    repo.commit("init", {
        "pkg/__init__.py": "", "pkg/a.py": "def value():\n    return 1\n",
        "tests/test_a.py": "import os, subprocess, time\nfrom pkg.a import value\n\n"
                           "def test_value():\n"
                           f"    p = subprocess.Popen(['sleep', {sleeper!r}])\n"
                           "    time.sleep(300)\n",
    })  # fmt: skip
    repo.commit("fix value", {"pkg/a.py": "def value():\n    return 2\n"})
    corpus = _mine(repo, tmp_path / "corpus")
    gold_before = (corpus / "gold.jsonl").read_bytes()
    env = _isolated_env(tmp_path)
    proc = _cli("validate", str(corpus), env=env)
    deadline = time.monotonic() + 60
    # Tests cannot write outside their scratch tree: their sleeper shows they started.
    while not _running(f"sleep {sleeper}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _running(f"sleep {sleeper}"), "the test never started"
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code
    assert err.strip().splitlines() == [f"reviewbench: error: {message}"]
    assert _running(f"sleep {sleeper}") == []
    assert list((tmp_path / "tmp").iterdir()) == []
    assert list((tmp_path / "home").iterdir()) == []
    assert (corpus / "gold.jsonl").read_bytes() == gold_before  # nothing half-recorded
    assert not (corpus / "validation.journal.jsonl").exists()


def test_resume_skips_validated_cases_unless_forced(project, tmp_path):
    corpus = _mine(project, tmp_path / "corpus")
    first = validate_corpus(corpus, _config(timeout=5))
    again = validate_corpus(corpus, _config(timeout=5))
    assert (first.attempted, again.attempted, again.skipped) == (3, 0, 3)
    assert first.by_status == again.by_status
    forced = validate_corpus(corpus, _config(timeout=5, force=True))
    assert forced.attempted == 3 and forced.by_status == first.by_status


def test_journal_from_an_interrupted_run_is_used(project, tmp_path):
    corpus = _mine(project, tmp_path / "corpus")
    case = read_corpus(corpus).cases[0]
    entry = {"case_id": case.case_id, "validation": {"status": "error", "test_cmd": "x"}}
    (corpus / "validation.journal.jsonl").write_text(json.dumps(entry) + "\n{torn")
    summary = validate_corpus(corpus, _config(timeout=5))
    assert summary.attempted == 2
    gold = {g.case_id: g for g in read_corpus(corpus).gold}
    assert gold[case.case_id].validation.status == "error"


def test_reviewbench_toml_settings(project, tmp_path):
    project.commit("settings", {"reviewbench.toml": "[validate]\ntest_cmd = 'no-such-runner --x'\n"})
    corpus = _mine(project, tmp_path / "corpus")
    from reviewbench.validate import resolve_config

    config = resolve_config(corpus, {})
    assert config.test_cmd == "no-such-runner --x"
    with pytest.raises(UsageError, match="test command not found: no-such-runner"):
        validate_corpus(corpus, config)
    assert resolve_config(corpus, {"test_cmd": "true"}).test_cmd == "true"


def test_base_commit_missing_since_mining(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"pkg/a.py": "X = 1\n", "tests/test_a.py": "def test_a():\n    pass\n"})
    repo.commit("fix X", {"pkg/a.py": "X = 2\n"})
    corpus = _mine(repo, tmp_path / "corpus")
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    with pytest.raises(CorpusError, match="moved or rewritten since mining"):
        validate_corpus(corpus, _config())


def test_non_pytest_command_graded_by_exit_code(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"lib/a.sh": "echo 1\n", "check.sh": "out=$(sh lib/a.sh)\necho PASSED\n[ \"$out\" = 2 ]\n"})
    repo.commit("fix a", {"lib/a.sh": "echo 2\n"})
    corpus = _mine(repo, tmp_path / "corpus")
    validate_corpus(corpus, _config(test_cmd="sh check.sh"))
    gold = read_corpus(corpus).gold[0]
    # It prints PASSED, but exits 1 with the bug: observed, on the exit code alone.
    assert gold.validation.status == "observed"
    assert gold.validation.failing_tests == []


def test_show_reports_yield_per_stratum(project, tmp_path):
    corpus = _mine(project, tmp_path / "corpus")
    validate_corpus(corpus, _config(timeout=5))
    proc = run_cli("show", str(corpus), "--json")
    report = json.loads(proc.stdout)
    assert report["yield"] == {"fix_reversal": {"observed": 1, "attempted": 3}}
    assert report["by_validation"] == {"not_exercised": 1, "not_observed": 1, "observed": 1}
    table = run_cli("show", str(corpus)).stdout  # fmt: skip
    assert "1/3" in table


def test_a_flaky_base_is_flaky_not_base_failing(git_repo, tmp_path):
    """The patched run fails, the first reference run fails too, the second passes."""
    repo = git_repo()
    repo.commit("init", {
        "pkg/__init__.py": "", "pkg/a.py": "def value():\n    return 1\n",
        "tests/test_a.py": "import os\nfrom pathlib import Path\nfrom pkg.a import value\n\n"
                           "def test_value():\n"
                           "    p = Path(os.environ['HOME'], 'runs.txt')  # the scratch HOME outlives a run\n"
                           "    n = int(p.read_text()) if p.exists() else 0\n"
                           "    p.write_text(str(n + 1))\n"
                           "    assert value() == 2 and n != 1\n",
    })  # fmt: skip
    repo.commit("fix value", {"pkg/a.py": "def value():\n    return 2\n"})
    corpus = _mine(repo, tmp_path / "corpus")
    validate_corpus(corpus, _config(reruns=2))
    gold = read_corpus(corpus).gold[0]
    assert gold.validation.status == "flaky"
    log = (corpus / "logs" / f"{gold.case_id}.log").read_text()
    assert "reference (suite) run 2" in log


def test_failing_junit_ids_become_node_ids(tmp_path):
    from reviewbench.validate.worker import _node_ids

    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "unit" / "test_x.py").write_text("")
    ids = frozenset({"tests.unit.test_x::test_a[1-2]", "tests.unit.test_x.TestK::test_b"})
    assert _node_ids(ids, tmp_path) == ["tests/unit/test_x.py::TestK::test_b", "tests/unit/test_x.py::test_a[1-2]"]
    assert _node_ids(frozenset({"test_b"}), tmp_path) is None  # a collection error: no module
    assert _node_ids(frozenset({"tests.gone::test_c"}), tmp_path) is None


def test_reruns_of_the_suite_only_run_the_failing_tests(project, tmp_path):
    corpus = _mine(project, tmp_path / "corpus")
    # Drop the fix's own test file from the selection so the whole suite observes the bug.
    gold = (corpus / "gold.jsonl").read_text().replace('"test_paths":["tests/test_ranges.py"]', '"test_paths":[]')
    (corpus / "gold.jsonl").write_text(gold)
    meta = json.loads((corpus / "corpus.json").read_text())
    meta["gold_sha256"] = sha256_file(corpus / "gold.jsonl")
    (corpus / "corpus.json").write_text(json.dumps(meta))
    validate_corpus(corpus, _config())
    [case] = [g for g in read_corpus(corpus).gold if g.provenance.subject == "Fix off-by-one in contains"]
    assert case.validation.status == "observed" and case.validation.selection == "suite"
    log = (corpus / "logs" / f"{case.case_id}.log").read_text()
    assert "reference (suite) run 1: " in log and "tests/test_ranges.py::test_edge" in log


def test_a_stopped_validation_leaves_later_commands_free_to_start(git_repo, tmp_path):
    """Ctrl-C stops every sandboxed command of the run and refuses new ones while it
    stops; once the run is over, the same process (a notebook, a library caller) may run
    commands again without starting another validation first."""
    from reviewbench.config.pipeline import Network
    from reviewbench.sandbox import Sandbox, cancelled
    from reviewbench.validate.executors import run_jobs
    from reviewbench.validate.testcmd import TestCommand

    repo = git_repo()
    repo.commit("init", {"a.py": "x = 1\n"})

    def interrupted(tree, command, job):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_jobs(repo.path, TestCommand("true"), ValidateConfig(jobs=1), ["job"], lambda job, result: None,
                 handler=interrupted)  # fmt: skip
    assert not cancelled()
    outcome = Sandbox(Network.DENY, None, tmp_path / "home").run(["true"], tmp_path, timeout=60)
    assert outcome.exit_code == 0


def test_case_validates_only_the_cases_named_again(project, tmp_path):
    """``--case ID`` (repeatable) validates those cases again and leaves the others' results
    alone: a user trying another environment on the few cases that failed (a helper had to
    rewrite a copy's gold hash to do it)."""
    corpus = _mine(project, tmp_path / "corpus")
    validate_corpus(corpus, _config())
    gold = {g.provenance.subject: g for g in read_corpus(corpus).gold}
    again = gold["fix loop increment"].case_id
    other = gold["Fix off-by-one in contains"].case_id
    before = (corpus / "logs" / f"{other}.log").read_text()
    proc = run_cli("validate", corpus, "--case", again, "--jobs", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["attempted"] == 1
    assert (corpus / "logs" / f"{other}.log").read_text() == before
    assert _statuses(corpus)["fix loop increment"] == "not_observed"
    assert (corpus / "logs" / f"{again}.log").read_text().count("=== status:") == 1  # its log starts afresh
    unknown = run_cli("validate", corpus, "--case", "case-000000000000")
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1
    assert "no case case-000000000000 in" in unknown.stderr
