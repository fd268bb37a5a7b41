"""Grading speed: ``tasks grade`` against the whole test suite per task, on the same tasks.

Mines fix tasks from REPO with ``reviewbench tasks mine`` (or reads ``--tasks DIR``), makes
two solutions per task (its gold patch, which must resolve it, and an empty patch, which
must not), and grades them twice in this one process:

- ``baseline``: one scratch clone, every solution in turn: check out the base, apply the
  patch and the test patch, run the **whole** test suite (pytest with JUnit XML) and read
  whether every FAIL_TO_PASS and PASS_TO_PASS test passed;
- ``reviewbench``: ``grade_solutions`` (what ``tasks grade`` runs): only the test files
  holding the task's tests, sandboxed, ``--jobs`` workers.

CPU time is ``getrusage`` user + system of this process and of every child it reaped, per
method. Prints graded runs per CPU-minute, the ratio and whether the verdicts are
identical. Target: ratio >= 4 with identical verdicts. Never fails on time.

    .venv/bin/python benchmarks/grade_speed.py REPO --test-cmd "PYTHONPATH=src .venv/bin/python -m pytest"
    .venv/bin/python benchmarks/grade_speed.py REPO --tasks TASKS_DIR   # skip mining
    .venv/bin/python benchmarks/grade_speed.py --smoke   # a tiny repo built here, seconds (the test suite runs it)
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reviewbench.config import ValidateConfig
from reviewbench.tasks.grade import test_selection
from reviewbench.tasks.grade_run import grade_solutions
from reviewbench.tasks.solutions import Solution
from reviewbench.tasks.store import read_tasks
from reviewbench.validate.testcmd import TestCommand, node_id, read_junit

TARGET = 4.0


def _cpu() -> float:
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _git(tree: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-C", str(tree), *args], input=input, capture_output=True, check=False
    )


def baseline(
    repo: Path, tasks, solutions: list[Solution], command: TestCommand, timeout: float
) -> dict[str, bool]:
    """The whole suite per solution, sequentially, in one scratch clone."""
    by_id = {t.instance_id: t for t in tasks}
    verdicts: dict[str, bool] = {}
    with tempfile.TemporaryDirectory(prefix="grade-baseline-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "clone", "-q", "--shared", "--no-checkout", str(repo), str(tree)], check=True
        )
        junit = Path(tmp) / "junit.xml"
        for s in solutions:
            task = by_id[s.instance_id]
            _git(tree, "checkout", "-q", "--force", "--detach", task.base_commit)
            _git(tree, "clean", "-ffdq")
            ok = True
            for patch in (s.patch, task.test_patch):
                if patch and patch.strip():
                    ok = ok and _git(tree, "apply", "-", input=patch.encode()).returncode == 0
            if not ok:
                verdicts[s.run_id] = False
                continue
            junit.unlink(missing_ok=True)
            env = {**os.environ, "HOME": tmp, "PYTHONDONTWRITEBYTECODE": "1"}
            try:
                subprocess.run(command.shell([], junit), shell=True, cwd=tree, env=env, timeout=timeout,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)  # fmt: skip
            except subprocess.TimeoutExpired:
                verdicts[s.run_id] = False
                continue
            _, passed = read_junit(junit)
            passed_nodes = {node_id(t, tree) or t for t in (passed or ())}
            verdicts[s.run_id] = all(
                t in passed_nodes for t in (*task.FAIL_TO_PASS, *task.PASS_TO_PASS)
            )
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("repo", type=Path, nargs="?", help="git repository (not needed with --smoke)")
    parser.add_argument(
        "--tasks", type=Path, help="An existing task directory of REPO (skip mining)."
    )
    parser.add_argument(
        "--test-cmd", help="pytest command (passed to tasks mine; default: detected)."
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--since", default=None, help="Mine fixes since this date (tasks mine --since)."
    )
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--min-tasks", type=int, default=20)
    parser.add_argument("--smoke", action="store_true",
                        help="mine and grade a tiny repository built in a temp dir (1 task), seconds: "
                             "checks that it runs; its figures mean nothing")  # fmt: skip
    args = parser.parse_args()
    if args.repo is None and not args.smoke:
        parser.error("REPO is required (or --smoke)")
    work = Path(tempfile.mkdtemp(prefix="grade-speed-"))
    if args.smoke:
        from _smoke import smoke_repo

        args.repo = smoke_repo(work / "smoke-repo")
        args.test_cmd = args.test_cmd or f"{shlex.quote(sys.executable)} -m pytest -q -p no:randomly -p no:cacheprovider"
        args.jobs, args.min_tasks, args.timeout = min(args.jobs, 2), 1, 60.0
    from _cpu import accountable_sandbox

    print(accountable_sandbox())
    repo = args.repo.resolve()
    try:
        tasks_dir = args.tasks
        if tasks_dir is None:
            tasks_dir = work / "tasks"
            cmd = [sys.executable, "-m", "reviewbench", "tasks", "mine", str(repo), "--out", str(tasks_dir),
                   "--jobs", str(args.jobs)]  # fmt: skip
            cmd += ["--test-cmd", args.test_cmd] if args.test_cmd else []
            cmd += ["--since", args.since] if args.since else []
            cmd += ["--limit", "1", "--reruns", "1"] if args.smoke else []
            print("mining:", " ".join(cmd), flush=True)
            subprocess.run(cmd, check=True)
        taskset = read_tasks(tasks_dir)
        tasks = taskset.tasks
        print(f"{len(tasks)} tasks from {repo}" + ("" if len(tasks) >= args.min_tasks else
              f" (fewer than {args.min_tasks}: widen the history)"))  # fmt: skip
        solutions = [Solution(f"{kind}-{t.instance_id}", t.instance_id, kind, 0, "patched", patch)
                     for t in tasks for kind, patch in (("gold", t.patch), ("empty", ""))]  # fmt: skip
        test_cmd = args.test_cmd or taskset.meta.test_cmd
        command = TestCommand(test_cmd)
        selected = sum(len(test_selection([*t.FAIL_TO_PASS, *t.PASS_TO_PASS])) for t in tasks)
        print(f"{len(solutions)} runs to grade (gold + empty per task); reviewbench runs {selected} test files "
              f"per {len(tasks)} tasks, the baseline the whole suite", flush=True)  # fmt: skip
        load = os.getloadavg()[0]

        cpu, wall = _cpu(), time.perf_counter()
        expected = baseline(repo, tasks, solutions, command, args.timeout)
        base_cpu, base_wall = _cpu() - cpu, time.perf_counter() - wall

        rundir = work / "run"
        rundir.mkdir()
        config = ValidateConfig(jobs=args.jobs, timeout=args.timeout, test_cmd=test_cmd)
        cpu, wall = _cpu(), time.perf_counter()
        summary = grade_solutions(rundir, taskset, solutions, config)
        ours_cpu, ours_wall = _cpu() - cpu, time.perf_counter() - wall
        got = {g.run_id: g.tests_pass for g in summary.grades}

        n = len(solutions)
        base_rate, ours_rate = n / (base_cpu / 60), n / (ours_cpu / 60)
        print(f"\nload average before: {load:.2f}, after: {os.getloadavg()[0]:.2f}")
        per_task = n / len(tasks)  # each task is graded once per solution kind
        print(
            f"{'method':<12} {'runs':>5} {'cpu s':>8} {'wall s':>8} {'runs/cpu-min':>13} {'tasks/cpu-min':>14}"
        )
        for label, cpu_s, wall_s, rate in (("baseline", base_cpu, base_wall, base_rate),
                                           ("reviewbench", ours_cpu, ours_wall, ours_rate)):  # fmt: skip
            print(
                f"{label:<12} {n:>5} {cpu_s:>8.1f} {wall_s:>8.1f} {rate:>13.1f} {rate / per_task:>14.1f}"
            )
        ratio = ours_rate / base_rate
        differ = sorted(r for r in expected if expected[r] != got.get(r))
        gold_ok = sum(got[s.run_id] for s in solutions if s.condition == "gold")
        empty_ok = sum(got[s.run_id] for s in solutions if s.condition == "empty")
        print(f"\nratio (runs per CPU-minute, reviewbench / baseline): {ratio:.2f}x "
              f"(target >= {TARGET:g}x: {'met' if ratio >= TARGET else 'MISSED'})")  # fmt: skip
        print(f"verdicts identical: {'yes' if not differ else 'NO: ' + ', '.join(differ)}")
        grades = {g.run_id: g for g in summary.grades}
        for run_id in differ:  # evidence for each disagreement; the logs go with the temp dir
            g = grades[run_id]
            print(f"  {run_id}: baseline {expected[run_id]}, reviewbench {g.tests_pass} ({g.status}, test run "
                  f"{g.test_verdict}, exit {g.exit_code}, {len(g.not_passed)} required tests not passed: "
                  f"{', '.join(g.not_passed[:3])})")  # fmt: skip
        print(
            f"gold patches resolved: {gold_ok}/{len(tasks)}; empty patches resolved: {empty_ok}/{len(tasks)}"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
