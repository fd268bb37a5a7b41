"""Cases sharing a base (every mutation and control case: HEAD) run its suite once, up
front: its passing tests spare every case a reference run, and its duration bounds how
long a patched run at that base may take."""

from __future__ import annotations

import math
import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path

from reviewbench.config import ValidateConfig
from reviewbench.validate.testcmd import TestCommand
from reviewbench.validate.worker import (
    ADAPTIVE_CPU_FLOOR_S,
    ADAPTIVE_FACTOR,
    ADAPTIVE_FLOOR_S,
    CaseJob,
    ScratchTree,
    validate_case,
)

PYTEST = f"{shlex.quote(sys.executable)} -m pytest -p no:cacheprovider"

_MODULE = "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n"
_TESTS = (
    "from pkg.m import a, b, c\n\n"
    "def test_a():\n    assert a() == 1\n\n"
    "def test_b():\n    assert b() == 2\n\n"
    "def test_c():\n    assert c() == 3\n"
)


def _patch(repo, tmp_path: Path, name: str, old: str, new: str) -> Path:
    repo.write({"pkg/m.py": _MODULE.replace(old, new)})
    patch = tmp_path / f"{name}.patch"
    patch.write_bytes(subprocess.run(["git", "-C", str(repo.path), "diff"], capture_output=True, check=True).stdout)
    repo.git("checkout", "--", ".")
    return patch


def _validate(repo, tmp_path: Path, jobs: list[CaseJob], timeout: float = 120):
    (tmp_path / "scratch").mkdir()
    config = ValidateConfig(jobs=2, timeout=timeout, reruns=1)
    trees = [ScratchTree(repo.path, tmp_path / "scratch" / f"tree-{i}", config) for i in range(2)]
    results: dict[str, object] = {}

    def work(tree: ScratchTree, mine: list[CaseJob]) -> None:
        for job in mine:
            results[job.case_id] = validate_case(tree, TestCommand(PYTEST), job)

    threads = [threading.Thread(target=work, args=(tree, jobs[i::2])) for i, tree in enumerate(trees)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for tree in trees:
            tree.close()
    return results


def test_the_suite_runs_once_at_a_shared_base_and_spares_every_reference_run(git_repo, tmp_path):
    repo = git_repo()
    base = repo.commit("init", {"pkg/__init__.py": "", "pkg/m.py": _MODULE, "tests/test_m.py": _TESTS})
    jobs = [
        CaseJob(name, base, _patch(repo, tmp_path, name, old, new), ("tests/test_m.py",),
                tmp_path / f"{name}.log", shared_base=True)
        for name, old, new in [("one", "return 1", "return 0"), ("two", "return 2", "return 0"),
                               ("three", "return 3", "return 0"), ("four", "return 1", "return -1")]
    ]  # fmt: skip
    results = _validate(repo, tmp_path, jobs)
    assert {k: r.status.value for k, r in results.items()} == dict.fromkeys(["one", "two", "three", "four"], "observed")
    logs = [job.log.read_text() for job in jobs]
    assert sum(log.count("whole suite at base, once per run: pass (") for log in logs) == 1
    assert not any("reference (fix_tests) run" in log or "whole selection at base" in log for log in logs)


def _timed_out_case(git_repo, tmp_path: Path, body: str) -> str:
    """Validate one shared-base case whose patch makes ``c()`` run ``body`` first, with a
    ``--timeout`` far above any adaptive limit; it must time out. Its log."""
    repo = git_repo()
    base = repo.commit("init", {"pkg/__init__.py": "", "pkg/m.py": _MODULE, "tests/test_m.py": _TESTS})
    patch = _patch(repo, tmp_path, "slow", "return 3", f"{body}\n    return 3")
    job = CaseJob("slow", base, patch, ("tests/test_m.py",), tmp_path / "slow.log", shared_base=True)
    results = _validate(repo, tmp_path, [job], timeout=600)
    assert results["slow"].status.value == "timeout"
    return job.log.read_text()


def test_a_patched_run_that_hangs_stops_at_the_adaptive_limit(git_repo, tmp_path):
    log = _timed_out_case(git_repo, tmp_path, "import time\n    time.sleep(600)")
    limit = re.search(r"runs at this base stop after ([0-9.]+)s", log)
    assert limit, log
    suite = float(re.search(r"whole suite at base, once per run: pass \(exit 0, ([0-9.]+)s", log).group(1))
    assert abs(float(limit.group(1)) - max(ADAPTIVE_FLOOR_S, ADAPTIVE_FACTOR * suite)) <= 0.1


def test_cases_on_bases_of_their_own_keep_the_configured_timeout(git_repo, tmp_path):
    repo = git_repo()
    base = repo.commit("init", {"pkg/__init__.py": "", "pkg/m.py": _MODULE, "tests/test_m.py": _TESTS})
    job = CaseJob("one", base, _patch(repo, tmp_path, "one", "return 1", "return 0"), ("tests/test_m.py",),
                  tmp_path / "one.log")  # fmt: skip
    results = _validate(repo, tmp_path, [job])
    assert results["one"].status.value == "observed"
    log = job.log.read_text()
    assert "once per run" not in log and "stop after" not in log
    assert "whole selection at base" in log


def test_a_test_module_that_fails_to_import_needs_no_reference_run_when_it_ran_at_base(git_repo, tmp_path):
    """A collection error is reported under the module's id: its tests passing at base
    show that the module imported there."""
    repo = git_repo()
    base = repo.commit("init", {"pkg/__init__.py": "", "pkg/m.py": _MODULE, "tests/test_m.py": _TESTS})
    broken = _patch(repo, tmp_path, "broken", "def a():", "raise ImportError('no')\n\n\ndef a():")
    other = _patch(repo, tmp_path, "other", "return 1", "return 0")
    jobs = [CaseJob("broken", base, broken, ("tests/test_m.py",), tmp_path / "broken.log", shared_base=True),
            CaseJob("other", base, other, ("tests/test_m.py",), tmp_path / "other.log", shared_base=True)]  # fmt: skip
    results = _validate(repo, tmp_path, jobs)
    assert results["broken"].status.value == "observed"
    assert results["broken"].failing_tests == ["tests/test_m.py"]
    log = jobs[0].log.read_text()
    assert "reference (fix_tests)" not in log.replace("reference (fix_tests): the failing tests pass", "")


def test_a_patched_run_that_spins_stops_at_its_cpu_limit(git_repo, tmp_path):
    """A mutant that loops forever burns CPU: a warm run has a CPU limit of a few times the
    suite's own CPU time at that base (the wall-clock limit stays for sleeping hangs)."""
    log = _timed_out_case(git_repo, tmp_path, "while True:\n        pass")
    cpu = float(re.search(r"whole suite at base, once per run: pass \(exit 0, [0-9.]+s, ([0-9.]+) CPU s", log).group(1))
    limit = re.search(r"and after (\d+) CPU s", log)
    assert limit, log
    expected = {max(ADAPTIVE_CPU_FLOOR_S, math.ceil(ADAPTIVE_FACTOR * c)) for c in (cpu - 0.005, cpu + 0.005)}
    assert int(limit.group(1)) in expected
    assert "stopped at its CPU limit" in log


def test_a_rename_variant_of_a_hanging_case_stops_at_its_original_bases_limit(git_repo, tmp_path):
    """A rename variant's base is the original's plus the rename (an overlay of its own),
    so no other case shares it; its runs are bounded by the original base's suite time
    all the same (renaming changes names, not running time), not by --timeout."""
    repo = git_repo()
    base = repo.commit("init", {"pkg/__init__.py": "", "pkg/m.py": _MODULE, "tests/test_m.py": _TESTS})
    rename = _patch(repo, tmp_path, "rename", "def b():\n    return 2", "def b():\n    two = 2\n    return two")
    hang = _patch(repo, tmp_path, "slow", "return 3", "import time\n    time.sleep(600)\n    return 3")
    jobs = [  # one thread validates the original, then its variant; the other a second case
        CaseJob("slow", base, hang, ("tests/test_m.py",), tmp_path / "slow.log", shared_base=True),
        CaseJob("other", base, _patch(repo, tmp_path, "other", "return 1", "return 0"), ("tests/test_m.py",),
                tmp_path / "other.log", shared_base=True),
        CaseJob("variant", base, hang, ("tests/test_m.py",), tmp_path / "variant.log", overlays=(rename,),
                bounds_base=base),
    ]  # fmt: skip
    results = _validate(repo, tmp_path, jobs, timeout=60)
    assert results["slow"].status.value == results["variant"].status.value == "timeout"
    log = jobs[2].log.read_text()
    limit = re.search(r"runs at this base stop after ([0-9.]+)s", log)
    assert limit and "measured at the original base" in log, log
    assert float(limit.group(1)) < 60
    assert "whole suite at base, once per run" not in log  # borrowed, not run again
