"""Warm pytest runs give the verdicts cold runs give, and never reuse stale code."""

from __future__ import annotations

import os
import re
import shlex
import sys
import time
from pathlib import Path

import pytest

from reviewbench.config import ValidateConfig
from reviewbench.validate.testcmd import TestCommand, VerdictKind
from reviewbench.validate.warm import parse_launch
from reviewbench.validate.worker import ScratchTree

PYTEST = f"{shlex.quote(sys.executable)} -m pytest"


@pytest.mark.parametrize("command", [
    PYTEST,
    f"{PYTEST} -q -x -p no:cacheprovider --deselect 'tests/test_a.py::test_x[1]'",
    f"PYTHONPATH=src {PYTEST} -q",
])  # fmt: skip
def test_plain_pytest_commands_run_warm(command, tmp_path):
    launch = parse_launch(command, tmp_path)
    assert launch is not None
    assert launch.python == sys.executable
    assert launch.argv0.endswith(os.path.join("pytest", "__main__.py"))


@pytest.mark.parametrize("command", [
    f"{PYTEST} $EXTRA",
    f"cd sub && {PYTEST}",
    f"{PYTEST} tests/*.py",
    f"{PYTEST} > out.txt",
    f"{PYTEST}; true",
    f"{sys.executable} -X dev -m pytest",
    "make test",
])  # fmt: skip
def test_commands_a_shell_would_interpret_run_cold(command, tmp_path):
    assert parse_launch(command, tmp_path) is None


def _tree(repo, tmp_path: Path, timeout: float = 60) -> ScratchTree:
    (tmp_path / "scratch").mkdir(parents=True)
    tree = ScratchTree(
        repo.path, tmp_path / "scratch" / "tree", ValidateConfig(jobs=1, timeout=timeout)
    )
    tree.checkout(repo.git("rev-parse", "HEAD"))
    return tree


def _warm_then_cold(repo, tmp_path: Path, monkeypatch):
    """A scratch tree with warm runs ("1"), then one with cold runs ("0"): (mode, tree)."""
    for mode in ("1", "0"):
        monkeypatch.setenv("REVIEWBENCH_WARM_PYTEST", mode)
        tree = _tree(repo, tmp_path / mode)
        try:
            yield mode, tree
        finally:
            tree.close()


def _run(tree: ScratchTree, command: TestCommand, selection: list[str], log: Path):
    junit = tree.home / "junit.xml"
    junit.unlink(missing_ok=True)
    outcome, warm = tree.run_tests(command, command.shell(selection, junit, tree.home / "probe.json"), log)
    return command.verdict(outcome, junit), warm


def test_warm_verdicts_match_cold_ones(git_repo, tmp_path, monkeypatch):
    repo = git_repo()
    repo.commit("init", {
        "pkg/__init__.py": "",
        "pkg/a.py": "def a():\n    return 1\n",
        "tests/test_pass.py": "from pkg.a import a\n\ndef test_ok():\n    assert a() == 1\n",
        "tests/test_fail.py": "from pkg.a import a\n\ndef test_bad():\n    assert a() == 2\n",
        "tests/test_lies.py": "import os\n\ndef test_lies():\n    print('PASSED')\n    os._exit(1)\n",
        "tests/test_none.py": "",
    })  # fmt: skip
    command = TestCommand(PYTEST)
    log = tmp_path / "case.log"
    selections = [
        ["tests/test_pass.py"],
        ["tests/test_fail.py"],
        ["tests/test_lies.py"],
        ["tests/test_none.py"],
        [],
    ]
    results = {}
    for mode, tree in _warm_then_cold(repo, tmp_path, monkeypatch):
        results[mode] = [_run(tree, command, s, log) for s in selections]
    assert all(warm for _, warm in results["1"]) and not any(warm for _, warm in results["0"])
    warm, cold = ([(v.kind, v.exit_code, v.failing) for v, _ in results[m]] for m in ("1", "0"))
    assert warm == cold
    assert [k for k, _, _ in warm] == [VerdictKind.PASS, VerdictKind.FAIL, VerdictKind.FAIL,
                                        VerdictKind.NO_TESTS, VerdictKind.FAIL]  # fmt: skip
    assert warm[1][2] == {"tests.test_fail::test_bad"}


def test_same_size_same_mtime_edit_is_seen(git_repo, tmp_path):
    """Regression: a changed module with the size and mtime of the old one must not run
    old code (timestamp-checked bytecode would); the warm caches are keyed by content."""
    repo = git_repo()
    repo.commit("init", {
        "pkg/__init__.py": "",
        "pkg/a.py": "def a():\n    return 1\n",
        "tests/test_a.py": "from pkg.a import a\n\ndef test_a():\n    assert a() == 1\n",
    })  # fmt: skip
    tree = _tree(repo, tmp_path)
    command = TestCommand(PYTEST)
    log = tmp_path / "case.log"
    module, test = tree.path / "pkg" / "a.py", tree.path / "tests" / "test_a.py"
    try:
        stamps = [(p, p.stat().st_mtime_ns) for p in (module, test)]
        first, warm = _run(tree, command, [], log)
        assert warm and first.kind is VerdictKind.PASS
        module.write_text("def a():\n    return 2\n")
        for path, stamp in stamps:
            os.utime(path, ns=(stamp, stamp))
        second, _ = _run(tree, command, [], log)
        assert second.kind is VerdictKind.FAIL
        test.write_text(test.read_text().replace("== 1", "== 2"))
        for path, stamp in stamps:
            os.utime(path, ns=(stamp, stamp))
        third, _ = _run(tree, command, [], log)
        assert third.kind is VerdictKind.PASS
    finally:
        tree.close()


def test_a_hung_warm_run_times_out_and_the_next_run_starts_afresh(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {
        "tests/test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(60)\n",
        "tests/test_fast.py": "def test_fast():\n    assert True\n",
    })  # fmt: skip
    tree = _tree(repo, tmp_path, timeout=5)  # the hung run waits it out in full
    command = TestCommand(PYTEST)
    log = tmp_path / "case.log"
    try:
        _run(tree, command, ["tests/test_fast.py"], log)  # the server is up
        hung, _ = _run(tree, command, ["tests/test_slow.py"], log)
        assert hung.kind is VerdictKind.TIMEOUT
        after, warm = _run(tree, command, ["tests/test_fast.py"], log)
        assert after.kind is VerdictKind.PASS and warm
    finally:
        tree.close()


def test_a_non_daemon_thread_left_running_hangs_a_warm_run_as_it_hangs_a_cold_one(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {
        "tests/test_thread.py": "import threading, time\n\ndef test_t():\n"
                                "    threading.Thread(target=time.sleep, args=(60,)).start()\n",
    })  # fmt: skip
    tree = _tree(repo, tmp_path, timeout=3)
    command = TestCommand(PYTEST)
    try:
        verdict, warm = _run(tree, command, ["tests/test_thread.py"], tmp_path / "case.log")
        assert warm and verdict.kind is VerdictKind.TIMEOUT
    finally:
        tree.close()


def test_processes_a_run_leaves_behind_are_killed(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {
        "tests/test_daemon.py": (
            "import subprocess, sys\n\n"
            "def test_daemon():\n"
            "    proc = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
            "    print('daemon pid', proc.pid)\n"
        ),
    })  # fmt: skip
    tree = _tree(repo, tmp_path)
    command = TestCommand(PYTEST)
    try:
        verdict, warm = _run(tree, command, [], tmp_path / "case.log")
        assert verdict.kind is VerdictKind.PASS and warm
        pid = "(see case.log)"
        # The pid is in the sandbox's namespace when it has one: look for the sleeper by
        # its command line instead.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _sleepers():
            time.sleep(0.1)
        assert not _sleepers(), pid
    finally:
        tree.close()


def _sleepers() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if b"time.sleep(120)" in cmdline and b"-c" in cmdline:
                found.append(entry.name)
    return found


def _patch(repo, tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    repo.write(files)
    diff = repo.git("diff")
    repo.git("checkout", "--", ".")
    patch = tmp_path / f"{name}.patch"
    patch.write_text(diff + "\n")
    return patch


def test_cases_on_one_base_share_its_reference_runs(git_repo, tmp_path):
    from reviewbench.validate.worker import CaseJob, validate_case

    repo = git_repo()
    base = repo.commit("init", {
        "pkg/__init__.py": "",
        "pkg/a.py": "def a():\n    return 1\n\n\ndef b():\n    return 2\n",
        "tests/test_a.py": "from pkg.a import a, b\n\ndef test_a():\n    assert a() == 1\n\n"
                           "def test_b():\n    assert b() == 2\n\ndef test_sum():\n    assert a() + b() == 3\n",
    })  # fmt: skip
    jobs = [
        CaseJob("one", base, _patch(repo, tmp_path, "one", {"pkg/a.py": "def a():\n    return 0\n\n\ndef b():\n    return 2\n"}),
                ("tests/test_a.py",), tmp_path / "one.log"),
        CaseJob("two", base, _patch(repo, tmp_path, "two", {"pkg/a.py": "def a():\n    return 5\n\n\ndef b():\n    return 2\n"}),
                ("tests/test_a.py::test_a", "tests/test_a.py::test_sum"), tmp_path / "two.log"),
    ]  # fmt: skip
    (tmp_path / "scratch").mkdir()
    trees = [ScratchTree(repo.path, tmp_path / "scratch" / f"tree-{i}", ValidateConfig(jobs=2, timeout=60, reruns=1))
             for i in range(2)]  # fmt: skip
    command = TestCommand(PYTEST)
    try:
        results = [validate_case(tree, command, job) for tree, job in zip(trees, jobs, strict=True)]
    finally:
        for tree in trees:
            tree.close()
    assert [r.status.value for r in results] == ["observed", "observed"]
    assert results[1].failing_tests == ["tests/test_a.py::test_a", "tests/test_a.py::test_sum"]
    first, second = (job.log.read_text() for job in jobs)
    assert "whole selection at base" in first
    assert "reference (fix_tests) run" not in second and "seen in this run's base runs" in second
    # Node ids ran as the cheap selection, not the whole file.
    assert "tests/test_a.py::test_a tests/test_a.py::test_sum" in second


def test_a_node_id_pytest_cannot_find_falls_back_to_the_suite(git_repo, tmp_path):
    """Regression: a stale or wrong node id made pytest exit 4 (usage error) and the case
    ``error``; the cheap selection decides nothing then, and the suite runs."""
    from reviewbench.validate.worker import CaseJob, validate_case

    repo = git_repo()
    base = repo.commit("init", {
        "pkg/__init__.py": "",
        "pkg/a.py": "def a():\n    return 1\n",
        "tests/test_a.py": "from pkg.a import a\n\ndef test_a():\n    assert a() == 1\n",
    })  # fmt: skip
    patch = _patch(repo, tmp_path, "p", {"pkg/a.py": "def a():\n    return 0\n"})
    job = CaseJob("c", base, patch, ("tests/test_a.py::test_gone",), tmp_path / "c.log")
    (tmp_path / "scratch").mkdir()
    tree = ScratchTree(
        repo.path, tmp_path / "scratch" / "tree", ValidateConfig(jobs=1, timeout=60, reruns=1)
    )
    try:
        result = validate_case(tree, TestCommand(PYTEST), job)
    finally:
        tree.close()
    assert (result.status.value, result.selection) == ("observed", "suite")


def test_a_project_shadowing_what_pytest_imports_runs_cold(git_repo, tmp_path):
    """The server never keeps project code imported: a project module named like one
    pytest imports (here the stdlib's pprint, found first on sys.path) makes it refuse,
    and the runs are cold, with the verdicts a cold run gives."""
    repo = git_repo()
    repo.commit("init", {
        "pprint.py": (
            "import importlib.util, os, sysconfig\n"
            "_spec = importlib.util.spec_from_file_location("
            "'pprint', os.path.join(sysconfig.get_paths()['stdlib'], 'pprint.py'))\n"
            "_real = importlib.util.module_from_spec(_spec)\n"
            "_spec.loader.exec_module(_real)\n"
            "globals().update({k: v for k, v in vars(_real).items() if not k.startswith('__')})\n"
        ),
        "tests/test_ok.py": "def test_ok():\n    assert True\n",
    })  # fmt: skip
    tree = _tree(repo, tmp_path)
    command = TestCommand(PYTEST)
    log = tmp_path / "case.log"
    try:
        verdict, warm = _run(tree, command, [], log)
        assert (verdict.kind, warm) == (VerdictKind.PASS, False)
        assert "imported project code" in log.read_text()
        again, warm = _run(tree, command, [], log)
        assert (again.kind, warm) == (VerdictKind.PASS, False)
    finally:
        tree.close()


def test_the_server_ends_a_run_when_its_client_is_gone(git_repo, tmp_path):
    """Regression: a server whose validate process died (SIGTERM, SIGKILL) sat in waitpid
    behind a hung test forever, since only the client enforces the timeout."""
    import threading

    from reviewbench.validate.warm import WarmPytest

    repo = git_repo()
    repo.commit(
        "init", {"tests/test_hang.py": "import pathlib, time\n\ndef test_hang():\n"
                                       "    pathlib.Path('started').write_text('1')\n    time.sleep(300)\n"}
    )
    tree = _tree(repo, tmp_path, timeout=300)
    launch = parse_launch(PYTEST, tree.path)
    assert launch is not None
    warm = WarmPytest(tree.sandbox, tree.path, launch, tree.home)
    log = tmp_path / "case.log"
    results = []
    runner = threading.Thread(
        target=lambda: results.append(warm.run(["tests/test_hang.py"], 300, log))
    )
    runner.start()
    try:
        deadline = time.monotonic() + 60
        while not (tree.path / "started").exists():  # the hung test is running
            assert time.monotonic() < deadline, "the test never started"
            time.sleep(0.1)
        proc = warm._proc
        assert proc is not None and proc.stdin is not None
        proc.stdin.close()  # what the client's death does to the server's stdin
        proc.wait(timeout=30)
        runner.join(timeout=30)
        assert results == [None]  # the server died: the caller falls back to a cold run
    finally:
        warm.close()
        tree.close()


_STATE_TEST = (
    "import json, os, sys\n\n"
    "def test_state():\n"
    "    root = os.getcwd()\n"
    "    state = {\n"
    "        'path': [p.replace(root, 'ROOT') for p in sys.path],\n"
    "        'foreign': sorted(m for m, mod in list(sys.modules.items())\n"
    "                          if (m.startswith('test_') or m == 'conftest')\n"
    "                          and not str(getattr(mod, '__file__', '')).startswith(root)),\n"
    "        'meta_path': [type(f).__name__ for f in sys.meta_path],\n"
    "        'addopts': os.environ.get('PYTEST_ADDOPTS'),\n"
    "    }\n"
    "    with open(os.path.join(root, 'state.json'), 'w') as handle:\n"
    "        json.dump(state, handle)\n"
)


def test_the_warm_up_leaves_nothing_a_test_can_see(git_repo, tmp_path, monkeypatch):
    """The server runs one throw-away pytest session of its own before it serves (lazy
    imports, compiled patterns): a test must see the process a cold run gives it."""
    import json

    repo = git_repo()
    repo.commit("init", {
        "conftest.py": "def pytest_addoption(parser):\n    parser.addoption('--runslow', action='store_true')\n",
        "tests/test_state.py": _STATE_TEST,
    })  # fmt: skip
    command = TestCommand(f"PYTEST_ADDOPTS=--runslow {PYTEST} -p no:cacheprovider")
    states = {}
    for mode, tree in _warm_then_cold(repo, tmp_path, monkeypatch):
        verdict, warm = _run(tree, command, ["tests/test_state.py"], tmp_path / "case.log")
        assert (verdict.kind, warm) == (VerdictKind.PASS, mode == "1")
        states[mode] = json.loads((tree.path / "state.json").read_text())
        if mode == "1":
            server = tree._warm[command.command]
            assert server is not None and server.warmed  # --runslow did not break it
    assert states["1"] == states["0"]
    assert states["1"]["addopts"] == "--runslow"


def test_a_plugin_that_breaks_the_warm_up_still_gets_warm_runs(git_repo, tmp_path, monkeypatch):
    """A third-party plugin that fails outside the project makes the server start again
    without the warm-up, not fall back to cold runs."""
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")  # the plugin is the point
    plugins = tmp_path / "plugins"
    (plugins / "fussy_plugin-1.0.dist-info").mkdir(parents=True)
    (plugins / "fussy_plugin-1.0.dist-info" / "METADATA").write_text("Name: fussy-plugin\nVersion: 1.0\n")
    (plugins / "fussy_plugin-1.0.dist-info" / "entry_points.txt").write_text("[pytest11]\nfussy = fussy\n")
    (plugins / "fussy.py").write_text(
        "def pytest_configure(config):\n"
        "    if not (config.rootpath / 'marker.txt').exists():\n"
        "        raise RuntimeError('not my project')\n"
    )
    repo = git_repo()
    repo.commit("init", {"marker.txt": "", "tests/test_ok.py": "def test_ok():\n    assert True\n"})
    tree = _tree(repo, tmp_path)
    command = TestCommand(f"PYTHONPATH={shlex.quote(str(plugins))} {PYTEST}")
    log = tmp_path / "case.log"
    try:
        for _ in range(2):
            verdict, warm = _run(tree, command, [], log)
            assert (verdict.kind, warm) == (VerdictKind.PASS, True)
        server = tree._warm[command.command]
        assert server is not None and not server.warmed and server.starts == 1
    finally:
        tree.close()


def _failures(log: Path) -> str:
    """The FAILURES section of a run's output, without timings."""
    text = log.read_text()
    section = text[text.index("FAILURES"):text.index("short test summary")] if "FAILURES" in text else ""
    return re.sub(r"\d+\.\d+s", "", section)


def test_failure_tracebacks_read_the_same_warm_and_cold(git_repo, tmp_path, monkeypatch):
    """Warm runs remember where the statements in a traceback start and end (keyed by the
    file's content): the report a person reads must not change."""
    repo = git_repo()
    repo.commit("init", {
        "pkg/__init__.py": "",
        "pkg/deep.py": "def outer(x):\n    # a comment\n    return middle(\n        x,\n    )\n\n\n"
                       "def middle(x):\n    if x:\n        return inner(x)\n    return 0\n\n\n"
                       "def inner(x):\n    values = [x,\n              x + 1]\n    assert sum(values) < 3, values\n"
                       "    return values\n",
        "tests/test_deep.py": "from pkg.deep import outer\n\n\ndef test_one():\n    assert outer(5)\n\n\n"
                              "def test_two():\n    assert outer(7) == [7, 8]\n",
    })  # fmt: skip
    command = TestCommand(f"{PYTEST} -p no:cacheprovider")
    reports = {}
    for mode, tree in _warm_then_cold(repo, tmp_path, monkeypatch):
        for attempt in range(3):  # warm: the second and third runs read the cache
            log = tmp_path / f"{mode}-{attempt}.log"
            verdict, warm = _run(tree, command, [], log)
            assert (verdict.kind, warm) == (VerdictKind.FAIL, mode == "1")
            reports[mode, attempt] = _failures(log).replace(str(tree.path), "TREE")
    assert "def inner(x):" in reports["0", 0] and "assert sum(values) < 3" in reports["0", 0]
    assert len({text for text in reports.values()}) == 1


_METADATA_TEST = (
    "import importlib.metadata as m, json, os\n\n"
    "def test_metadata():\n"
    "    tree = m.distribution('treepkg')\n"
    "    state = {'tree': [tree.version, sorted(e.name for e in tree.entry_points)], 'pytest': m.version('pytest'),\n"
    "             'plugins': sorted(e.name for e in m.entry_points(group='pytest11')),\n"
    "             'files': len(m.files('pytest') or [])}\n"
    "    with open(os.path.join(os.getcwd(), 'metadata.json'), 'w') as handle:\n"
    "        json.dump(state, handle)\n"
)


def test_installed_metadata_reads_the_same_warm_and_cold_and_the_trees_is_read_afresh(
        git_repo, tmp_path, monkeypatch):  # fmt: skip
    """The server remembers installed packages' metadata files (read-only to the runs);
    a package's metadata in the tree is read each time: an edit keeping its size and
    modification time is seen by the next warm run."""
    import json

    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")  # pytest then reads every package's entry points
    repo = git_repo()
    repo.commit("init", {
        "treepkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: treepkg\nVersion: 1.0\n",
        "treepkg-1.0.dist-info/entry_points.txt": "[console_scripts]\ntreetool1.0 = os:getcwd\n",
        "tests/test_metadata.py": _METADATA_TEST,
    })  # fmt: skip
    command = TestCommand(f"{PYTEST} -p no:cacheprovider")
    states = {}
    for mode, tree in _warm_then_cold(repo, tmp_path, monkeypatch):
        info = tree.path / "treepkg-1.0.dist-info"
        seen = []
        for version in ("1.0", "2.0"):
            for metadata in (info / "METADATA", info / "entry_points.txt"):
                stamp = metadata.stat().st_mtime_ns
                metadata.write_text(metadata.read_text().replace("1.0", version))
                os.utime(metadata, ns=(stamp, stamp))
            verdict, warm = _run(tree, command, ["tests/test_metadata.py"], tmp_path / "case.log")
            assert (verdict.kind, warm) == (VerdictKind.PASS, mode == "1")
            seen.append(json.loads((tree.path / "metadata.json").read_text()))
        assert [s["tree"] for s in seen] == [["1.0", ["treetool1.0"]], ["2.0", ["treetool2.0"]]]
        states[mode] = seen
    assert states["1"] == states["0"]
    assert states["1"][0]["pytest"] == pytest.__version__ and states["1"][0]["files"] > 10


def test_a_project_with_its_own_packaging_still_runs_warm_and_imports_its_own(git_repo, tmp_path, monkeypatch):
    """The server imports what pytest imports lazily (``packaging.version``, ``tomllib``)
    once, for every fork; never a module the project's tree holds (pypa/packaging's own)."""
    monkeypatch.setenv("REVIEWBENCH_WARM_PYTEST", "1")
    repo = git_repo()
    repo.commit("init", {
        "packaging/__init__.py": "",
        "packaging/version.py": "WHERE = 'tree'\n",
        "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
        "tests/test_own.py": "import packaging.version\n\ndef test_own():\n    assert packaging.version.WHERE == 'tree'\n",
    })  # fmt: skip
    tree = _tree(repo, tmp_path)
    try:
        verdict, warm = _run(tree, TestCommand(PYTEST), [], tmp_path / "run.log")
    finally:
        tree.close()
    log = (tmp_path / "run.log").read_text()
    assert warm, log
    assert verdict.kind is VerdictKind.PASS, log


def test_the_server_imports_what_pytest_imports_lazily_outside_the_project(tmp_path):
    import subprocess

    from reviewbench.validate.warm import SERVER

    own = tmp_path / "project"
    (own / "packaging").mkdir(parents=True)
    (own / "packaging" / "__init__.py").write_text("")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2]); import _warm_server as s; "
            "print(sorted(s._import_lazy(sys.argv[2])), 'packaging' in sys.modules)")  # fmt: skip
    elsewhere = subprocess.run([sys.executable, "-c", code, str(SERVER.parent), str(tmp_path / "empty")],
                               capture_output=True, text=True, check=True, cwd=tmp_path)  # fmt: skip
    assert elsewhere.stdout.split() == ["['packaging',", "'tomllib']", "True"]
    inside = subprocess.run([sys.executable, "-c", code, str(SERVER.parent), str(own)],
                            capture_output=True, text=True, check=True, cwd=own)  # fmt: skip
    assert inside.stdout.split() == ["['tomllib']", "False"]
