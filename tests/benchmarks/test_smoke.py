"""Every benchmark runs, at toy sizes, in the test suite: none can silently rot.

Each script in ``benchmarks/`` is started as a user would start it
(``python benchmarks/X.py --smoke``), in its own process. The test checks that it exits 0
and prints the figures it promises, as finite numbers. It never asserts a time or a
ratio's size: at toy sizes those mean nothing. Where the figure is a count the smoke
repository fixes (two fix commits, gold patches that resolve), the count is checked.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_"))


def _smoke(script: str) -> str:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, f"benchmarks/{script}.py", "--smoke"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, f"{script} --smoke exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def _figures(out: str, pattern: str) -> tuple[float, ...]:
    """The numbers ``pattern`` captures on its (one) line of ``out``; each must be finite."""
    found = re.findall(pattern, out, re.MULTILINE)
    assert len(found) == 1, f"expected one line matching {pattern!r} in:\n{out}"
    values = found[0] if isinstance(found[0], tuple) else (found[0],)
    numbers = tuple(float(v) for v in values)
    assert all(math.isfinite(v) for v in numbers), f"{pattern!r}: {numbers}"
    return numbers


def _skipped_or_figure(out: str, module: str, pattern: str) -> None:
    """An optional baseline: a line saying it was skipped, or its figure (never neither)."""
    if f"smoke: skipped the {module}" in out:
        assert not re.search(pattern, out, re.MULTILINE)
    else:
        _figures(out, pattern)


def _cpu_accounted(out: str) -> None:
    """CPU benchmarks read getrusage, which sees sandboxed work only where the sandbox's
    first process is reaped (benchmarks/_cpu.py): the script says which sandbox it used,
    and a fixed CPU loop inside it must be seen whole. This is CPU time, not wall time."""
    (seen,) = _figures(out, r"^CPU measured with the \w+ sandbox \(REVIEWBENCH_SANDBOX\); a 0\.3 CPU-s loop "
                            r"inside reads ([0-9.]+) s$")  # fmt: skip
    assert seen >= 0.3 * 0.8, out
    assert "WARNING" not in out


def test_every_benchmark_has_a_smoke_test():
    assert SCRIPTS == sorted(name.removeprefix("test_") for name in globals() if name.startswith("test_")
                             and name.removeprefix("test_") in SCRIPTS)  # fmt: skip
    assert len(SCRIPTS) == 12


def test_score_speed():
    out = _smoke("score_speed")
    runs, _findings, cases, repeats = _figures(out, r"^synthetic store: (\d+) runs x (\d+) findings \((\d+) cases, "
                                                   r"2 conditions, (\d+) repetitions\)")  # fmt: skip
    assert runs == cases * 2 * repeats > 0
    _figures(out, r"^score_run, \d+ resamples: wall (\S+) s, CPU (\S+) s; peak RSS of this process \(--smoke\) (\S+) MiB")
    num, den, value, lo, hi = _figures(out, r"^  A defect_recall (\d+)/(\d+) = (\S+) \[(\S+), (\S+)\]")
    assert 0 < den and value == pytest.approx(num / den, abs=1e-4) and lo <= value <= hi
    _figures(out, r"^  ratio loop/vectorised = (\S+)x")


def test_unreachable_stop():
    out = _smoke("unreachable_stop")
    _figures(out, r"^check before planning: stopped in ([0-9.]+) s, exit 1, 1 stderr line\(s\)$")
    _figures(out, r"^--no-endpoint-check: stopped in ([0-9.]+) s, exit 1, 1 stderr line\(s\)$")


def test_runner_overhead():
    out = _smoke("runner_overhead")
    _figures(out, r"^first run : wall (\S+) s, ideal (\S+) s, ratio (\S+) \(target")
    _figures(out, r"^plain httpx: wall (\S+) s, ratio (\S+) to ideal; reviewbench / bare = (\S+)$")
    _figures(out, r"harness CPU (\S+) ms per run")
    (again,) = _figures(out, r"^re-run .*requests reaching the server: (\d+) \(target 0\)")
    assert again == 0  # every answer of the re-run comes from the run store


def test_candidate_recall():
    out = _smoke("candidate_recall")
    # The smoke repository's two fix commits, found under the message alone and by default.
    assert _figures(out, r"^  select message: recall (\d+)/(\d+)") == (2.0, 2.0)
    assert _figures(out, r"^  select message,test_coedit: recall (\d+)/(\d+)") == (2.0, 2.0)
    assert "sample of 2 cases" in out


def test_default_mine_speed():
    out = _smoke("default_mine_speed")
    base, ours, ratio = _figures(out, r"^baseline/this tree best CPU = (\S+) / (\S+) = (\S+)x$")
    assert ratio == pytest.approx(base / ours, rel=0.01)  # the figures are printed rounded
    cases, differ = _figures(out, r"^corpora identical: yes \((\d+) cases; (\d+) files differ\)$")
    assert cases > 0 and differ == 0  # the same code on both sides writes the same corpus


def test_mine_speed():
    out = _smoke("mine_speed")
    _figures(out, r"^  per-commit/reviewbench\s+=\s+(\S+)x")
    _figures(out, r"^  reviewbench/floor\s+=\s+(\S+)x")
    _figures(out, r"^  reviewbench/floor-all\s+=\s+(\S+)x")
    _skipped_or_figure(out, "pydriller method", r"^  pydriller/reviewbench\s+=\s+(\S+)x")
    assert "reviewbench: 2 " in out  # the smoke repository's two fix commits


def test_mutate_speed():
    out = _smoke("mutate_speed")
    _cpu_accounted(out)
    _rate, observed, made = _figures(out, r"^reviewbench observed per CPU-minute: (\S+) \((\d+) of (\d+) made\)")
    assert made == 2 and observed >= 1
    _skipped_or_figure(out, "mutmut baseline", r"^reviewbench/mutmut observed per CPU-minute: (\S+)x")


def test_validate_speed():
    out = _smoke("validate_speed")
    _cpu_accounted(out)
    _figures(out, r"^throughput ratio reviewbench/naive: CPU (\S+)x, wall (\S+)x")
    _figures(out, r"^naive +1 +\S+ +\S+ +\S+ +\S+ +(\S+) +(\S+)$")
    _figures(out, r"^reviewbench +1 +\S+ +\S+ +\S+ +\S+ +(\S+) +(\S+)$")
    agree, total = _figures(out, r"^statuses agree on (\d+)/(\d+) cases")
    assert agree == total == 1
    assert "reviewbench statuses: observed 1" in out  # the fix's own test observes its reversal
    (runs,) = _figures(out, r"^reviewbench: (\d+) fix_tests runs")  # read back from its case logs
    assert runs >= 1


def test_grade_speed():
    out = _smoke("grade_speed")
    _cpu_accounted(out)
    _figures(out, r"^baseline +2 +(\S+) +(\S+) +(\S+) +(\S+)$")
    _figures(out, r"^reviewbench +2 +(\S+) +(\S+) +(\S+) +(\S+)$")
    _figures(out, r"^ratio \(runs per CPU-minute, reviewbench / baseline\): (\S+)x")
    assert "verdicts identical: yes" in out
    gold, tasks, empty, tasks_again = _figures(out, r"^gold patches resolved: (\d+)/(\d+); "
                                                    r"empty patches resolved: (\d+)/(\d+)")  # fmt: skip
    assert gold == tasks == tasks_again == 1 and empty == 0


def test_report_speed():
    out = _smoke("report_speed")
    _figures(out, r"^build_report, one run: 50 findings (\S+) s, 200 findings (\S+) s; ratio (\S+) \(linear")


def test_sandbox_overhead():
    out = _smoke("sandbox_overhead")
    _figures(out, r"^bare\s+(\S+) ms  \((\S+)x bare")
    # Each mechanism that works here prints both sandboxes against the bare start.
    assert re.search(r"^test run sandbox, \w+\s+\S+ ms", out, re.MULTILINE), out
    assert re.search(r"^agent \+ network list, \w+\s+\S+ ms", out, re.MULTILINE), out  # the egress relay starts


def test_node_coverage_cost():
    out = _smoke("node_coverage_cost")
    _cpu_accounted(out)
    assert re.search(r"^runs: 2 pairs of whole-suite runs at \w+; verdicts with \['pass'\], without \['pass'\]$", out,
                     re.MULTILINE), out  # fmt: skip
    ratio, num, den = _figures(out, r"^wall: with coverage \S+ s, without \S+ s \(medians\); ratio (\S+) = (\S+) / (\S+)$")
    # The ratio is of the unrounded medians; the figures beside it are rounded to 0.01 s.
    assert (num - 0.005) / (den + 0.005) - 0.0005 <= ratio <= (num + 0.005) / (den - 0.005) + 0.0005
    _figures(out, r"^CPU: with coverage \S+ s, without \S+ s \(medians\); ratio (\S+) = (\S+) / (\S+)$")
    _size, named = _figures(out, r"^coverage records: (\S+) MB per run \(median\); tree files named: (\d+)$")
    assert named == 2  # the smoke project's test and the module it loads
