#!/usr/bin/env python3
"""Throughput of the validity gate: ``reviewbench validate`` against the naive seed loop.

One run of this script mines a real repository into a corpus and then validates that same
corpus twice, in the same Python process, one method after the other:

``naive``
    The "Validity gate" loop of the seed article, extended just enough to produce
    reviewbench's status vocabulary. For each case, one at a time:
    ``git worktree add --detach WT BASE``; run the test command (the WHOLE suite) on the
    unpatched base (non-zero exit: ``base_failing``); ``git -C WT apply PATCH``
    (failure: ``apply_failed``); run the whole suite ``--reruns`` times with the patch
    (every run fails: ``observed``; all pass: ``not_observed``; mixed: ``flaky``; a run
    that exceeds ``--timeout``: ``timeout``, unless another run failed, then ``flaky``);
    ``git worktree remove --force WT``. A fresh worktree per case, the whole suite every
    time, sequential, no network isolation, verdicts from exit codes only (0 = pass).
    Output of each case goes to ``WORK/naive-logs/<case_id>.log``.
``reviewbench``
    ``validate_corpus(COPY, ValidateConfig(test_cmd=..., jobs=--jobs, timeout=--timeout,
    reruns=--reruns, force=True))`` on a copy of the mined corpus: reusable scratch clones,
    the fix's own test files first and the whole suite only if they do not observe the
    bug, ``--jobs`` workers (default: the number of cores), tests in a network-denying
    sandbox. Its logs are ``COPY/logs/<case_id>.log``.

Mining makes no mirrors (``MineConfig(mirrors=False)``; by default every fix reversal gets
one, a clean case whose base is the reversal's patched tree, given as a base patch): the
naive loop applies a case's patch to its base alone and has no notion of a base patch, and
the measured figures in benchmarks/README.md were taken on fix reversals only.

Measured for each method, as deltas around the method only (mining is excluded):

* CPU time: ``resource.getrusage`` user+sys of ``RUSAGE_SELF`` (this process, all threads)
  plus ``RUSAGE_CHILDREN`` (every child process waited for, including their waited-for
  descendants: git, the shell, pytest, unshare). A process that is killed and not
  reaped by its parent is not counted, for either method.
* wall time: ``time.perf_counter``.

Printed: cases per CPU-minute and per wall-minute of each method, reviewbench's
throughput divided by naive's (target: >= 4x), the status counts of each method, and
every case whose statuses disagree, with both statuses and both log paths. Because the
naive loop always runs every patched rerun while reviewbench stops at the first passing
run, an extra line gives the naive CPU throughput as it would have been had it stopped
there too (computed from the per-run CPU deltas of the naive loop, which runs one child at
a time, so each delta is exact). Nothing about time is asserted.

To keep the user's repository untouched, REPO is first cloned (``git clone --bare
--shared``) into the work directory; mining, the worktrees and the scratch clones all use
that clone. The work directory (``--workdir``, default a new ``/tmp/validate-speed-*``)
is kept so that the logs can be read afterwards.

Example (click is installed in the venv, so the tree's own ``src`` must come first)::

    .venv/bin/python benchmarks/validate_speed.py /path/to/click --limit 30 \\
        --test-cmd "PYTHONPATH=src $PWD/.venv/bin/python -m pytest -x -q -p no:randomly"
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from reviewbench.config import MineConfig, ValidateConfig
from reviewbench.mine import mine_corpus
from reviewbench.records import Validation
from reviewbench.store.corpus import read_corpus
from reviewbench.validate import validate_corpus

DEFAULT_TEST_CMD = f"PYTHONPATH=src {shlex.quote(sys.executable)} -m pytest -x -q -p no:randomly"
TARGET_RATIO = 4.0
MIN_CASES = 20


# --------------------------------------------------------------------------- measuring


@dataclass
class Clock:
    """CPU (self, children) and wall time elapsed since ``start``."""

    wall: float = 0.0
    self_cpu: float = 0.0
    child_cpu: float = 0.0

    @staticmethod
    def _now() -> tuple[float, float, float]:
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.perf_counter(), me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime

    def __enter__(self) -> Self:
        self._start = self._now()
        return self

    def __exit__(self, *exc: object) -> None:
        end = self._now()
        self.wall = end[0] - self._start[0]
        self.self_cpu = end[1] - self._start[1]
        self.child_cpu = end[2] - self._start[2]

    @property
    def cpu(self) -> float:
        return self.self_cpu + self.child_cpu


def children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def per_minute(cases: int, seconds: float) -> float:
    return cases * 60.0 / seconds if seconds > 0 else float("inf")


# --------------------------------------------------------------------------- naive loop


@dataclass
class Run:
    """One naive test run."""

    label: str
    kind: str  # pass | fail | timeout
    exit_code: int | None
    wall: float
    cpu: float


@dataclass
class NaiveResult:
    status: str
    runs: list[Run] = field(default_factory=list)
    log: Path | None = None

    @property
    def avoidable_cpu(self) -> float:
        """CPU of patched reruns after the first passing one (reviewbench skips those)."""
        patched = [r for r in self.runs if r.label.startswith("patched")]
        for index, run in enumerate(patched):
            if run.kind != "fail":
                return sum(r.cpu for r in patched[index + 1 :])
        return 0.0


def _note(log: Path, text: str) -> None:
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"\n=== {text}\n")


def naive_run(command: str, cwd: Path, timeout: float, log: Path, label: str) -> Run:
    """Run the whole suite once with the shell; 0 = pass, anything else = fail."""
    _note(log, f"{label}: {command}")
    cpu0, start = children_cpu(), time.perf_counter()
    with log.open("ab") as sink:
        proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    run = Run(label, "timeout" if code is None else ("pass" if code == 0 else "fail"), code,
              time.perf_counter() - start, children_cpu() - cpu0)  # fmt: skip
    _note(log, f"{label}: {run.kind} (exit {code}, {run.wall:.2f}s, cpu {run.cpu:.2f}s)")
    return run


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], capture_output=True, check=False)


def naive_case(repo: Path, base: str, patch: Path, wt: Path, command: str, timeout: float,
               reruns: int, log: Path) -> NaiveResult:  # fmt: skip
    log.write_text(f"case at {base}\n", encoding="utf-8")
    added = _git("-C", str(repo), "worktree", "add", "--detach", str(wt), base)
    if added.returncode != 0:
        _note(log, f"worktree add failed: {added.stderr.decode(errors='replace').strip()}")
        return NaiveResult("error", log=log)
    result = NaiveResult("error", log=log)
    try:
        reference = naive_run(command, wt, timeout, log, "base (suite)")
        result.runs.append(reference)
        if reference.kind == "timeout":
            result.status = "timeout"
            return result
        if reference.kind == "fail":
            result.status = "base_failing"
            return result
        applied = _git("-C", str(wt), "apply", str(patch))
        if applied.returncode != 0:
            _note(log, f"apply failed: {applied.stderr.decode(errors='replace').strip()}")
            result.status = "apply_failed"
            return result
        kinds = []
        for attempt in range(reruns):
            run = naive_run(command, wt, timeout, log, f"patched (suite) run {attempt + 1}")
            result.runs.append(run)
            kinds.append(run.kind)
        if all(k == "fail" for k in kinds):
            result.status = "observed"
        elif all(k == "pass" for k in kinds):
            result.status = "not_observed"
        elif "fail" in kinds:
            result.status = "flaky"
        else:
            result.status = "timeout"
        return result
    finally:
        _note(log, f"status: {result.status}")
        _git("-C", str(repo), "worktree", "remove", "--force", str(wt))


def run_naive(repo: Path, corpus: Path, command: str, timeout: float, reruns: int,
              work: Path) -> dict[str, NaiveResult]:  # fmt: skip
    loaded = read_corpus(corpus)
    logs = work / "naive-logs"
    trees = work / "naive-worktrees"
    logs.mkdir(parents=True, exist_ok=True)
    trees.mkdir(parents=True, exist_ok=True)
    results: dict[str, NaiveResult] = {}
    for number, case in enumerate(loaded.cases, start=1):
        result = naive_case(repo, case.base, (corpus / case.patch).resolve(), trees / case.case_id,
                            command, timeout, reruns, logs / f"{case.case_id}.log")  # fmt: skip
        results[case.case_id] = result
        spent = sum(r.wall for r in result.runs)
        print(f"  naive {number}/{len(loaded.cases)} {case.case_id}: {result.status} "
              f"({len(result.runs)} suite runs, {spent:.1f}s)", file=sys.stderr, flush=True)  # fmt: skip
    _git("-C", str(repo), "worktree", "prune")
    return results


# --------------------------------------------------------------------------- reviewbench


_RUN_LINE = re.compile(
    r"^=== (?P<phase>reference|patched) \((?P<sel>[\w-]+)\)(?: run (?P<n>\d+))?(?: [^:]*)?: "
    r"(?P<kind>\w+) \(exit [^,]*, (?P<secs>[\d.]+)s[,)]"
)


@dataclass(frozen=True)
class LoggedRun:
    phase: str  # reference | patched
    selection: str
    attempt: int
    kind: str
    seconds: float


def reviewbench_runs(log: Path) -> list[LoggedRun]:
    """The test runs a reviewbench case log reports (its "=== label: verdict" lines)."""
    if not log.is_file():
        return []
    runs = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        match = _RUN_LINE.match(line)
        if match:
            runs.append(LoggedRun(match["phase"], match["sel"], int(match["n"] or 0), match["kind"],
                                  float(match["secs"])))  # fmt: skip
    return runs


def reference_before_pass(runs: list[LoggedRun]) -> float:
    """Seconds of reference runs whose selection then passed its first patched run.

    Such a reference run decided nothing: the selection did not observe the bug anyway.
    """
    wasted = 0.0
    for ref in (r for r in runs if r.phase == "reference"):
        first = [
            r
            for r in runs
            if r.phase == "patched" and r.selection == ref.selection and r.attempt == 1
        ]
        if first and first[0].kind == "pass":
            wasted += ref.seconds
    return wasted


def failed_tests(log: Path) -> list[str]:
    """Test ids in pytest's short summary ("FAILED id - ...") of a naive log, deduplicated."""
    if not log.is_file():
        return []
    seen: dict[str, None] = {}
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            seen[line.split(" ", 1)[1].split(" - ", 1)[0].strip()] = None
    return list(seen)


def run_reviewbench(
    corpus: Path, command: str, jobs: int, timeout: float, reruns: int
) -> dict[str, Validation]:
    config = ValidateConfig(test_cmd=command, jobs=jobs, timeout=timeout, reruns=reruns, force=True)
    results: dict[str, Validation] = {}

    def on_case(case_id: str, validation: Validation, done: int, total: int) -> None:
        results[case_id] = validation
        print(f"  reviewbench {done}/{total} {case_id}: {validation.status.value} "
              f"(selection {validation.selection}, {validation.duration_s or 0:.1f}s)",
              file=sys.stderr, flush=True)  # fmt: skip

    validate_corpus(corpus, config, on_case=on_case)
    return results


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Mine REPO, then validate the corpus the naive way (seed loop: fresh worktree, "
        "whole suite, sequential) and with reviewbench's validate_corpus, and compare "
        "throughput (cases per CPU-minute and per wall-minute) and statuses.",
        epilog="The work directory is kept: naive logs in WORK/naive-logs, reviewbench logs in "
        "WORK/corpus-reviewbench/logs.",
    )
    parser.add_argument("repo", type=Path, nargs="?",
                        help="Git repository to mine (bare or not); it is not modified. Not needed with --smoke.")  # fmt: skip
    parser.add_argument(
        "--limit", type=int, default=30, help="Cases to mine (newest first; default 30)."
    )
    parser.add_argument("--since", help="Only mine fix commits after this date (YYYY-MM-DD).")
    parser.add_argument("--test-cmd", default=DEFAULT_TEST_CMD,
                        help=f"Shell command running the test suite in the tree root (default: {DEFAULT_TEST_CMD!r}).")  # fmt: skip
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="Seconds per test run, both methods (default 300).",
    )
    parser.add_argument(
        "--reruns",
        type=int,
        default=2,
        help="Patched runs per case (default 2, reviewbench's default).",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="reviewbench workers (default: number of cores, %(default)s here).")  # fmt: skip
    parser.add_argument(
        "--workdir",
        type=Path,
        help="Where clone, corpora, worktrees and logs go (default: a new temp dir); its "
        "repo.git, corpus-*, naive-logs and naive-worktrees are replaced.",
    )
    parser.add_argument("--only", choices=("both", "naive", "reviewbench"), default="both",
                        help="Run one method only (for debugging; no comparison then).")  # fmt: skip
    parser.add_argument("--smoke", action="store_true",
                        help="Mine and validate a tiny repository built in the work directory (1 case, "
                             "--reruns 1), seconds: checks that the script runs; its figures mean nothing. "
                             "The work directory is removed afterwards unless --workdir is given.")  # fmt: skip
    args = parser.parse_args(argv)
    if args.repo is None and not args.smoke:
        parser.error("REPO is required (or --smoke)")
    if args.smoke:
        args.limit, args.reruns, args.jobs, args.timeout = 1, 1, min(args.jobs, 2), 60.0
    if args.limit < 1 or args.reruns < 1 or args.jobs < 1 or args.timeout <= 0:
        parser.error("--limit, --reruns and --jobs must be >= 1, --timeout > 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work = (args.workdir or Path(tempfile.mkdtemp(prefix="validate-speed-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    if not args.smoke:
        return compare(args, work)
    from _smoke import smoke_repo

    shutil.rmtree(work / "smoke-repo", ignore_errors=True)
    args.repo = smoke_repo(work / "smoke-repo")
    try:
        return compare(args, work)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


def compare(args: argparse.Namespace, work: Path) -> int:
    """Mine, validate both ways, print the comparison (the work directory is kept)."""
    clone = work / "repo.git"
    mined = work / "corpus-mined"
    naive_corpus = work / "corpus-naive"
    rb_corpus = work / "corpus-reviewbench"
    for stale in (
        clone,
        mined,
        naive_corpus,
        rb_corpus,
        work / "naive-logs",
        work / "naive-worktrees",
    ):
        shutil.rmtree(stale, ignore_errors=True)

    from _cpu import accountable_sandbox

    print(f"work directory: {work}")
    print(accountable_sandbox())
    subprocess.run(
        ["git", "clone", "--quiet", "--bare", "--shared", str(args.repo.resolve()), str(clone)],
        check=True,
    )
    head = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip
    with Clock() as mining:
        summary = mine_corpus(
            MineConfig(repo=clone, limit=args.limit, since=args.since, controls_ratio=0, mirrors=False),
            mined,
            force=True,
        )
    cases = read_corpus(mined).cases
    n = len(cases)
    with_tests = sum(1 for g in read_corpus(mined).gold if g.provenance.test_paths)
    print(f"repository: {args.repo} (HEAD {head[:12]}, cloned to {clone})")
    print(f"mined: {n} cases ({with_tests} whose fix changed test files) from "
          f"{summary.meta.counts.matched_commits} matching commits in {mining.wall:.1f}s")  # fmt: skip
    if n < MIN_CASES:
        print(
            f"warning: only {n} cases (< {MIN_CASES}); raise --limit or widen --since",
            file=sys.stderr,
        )
    print(f"test command: {args.test_cmd}")
    print(f"timeout {args.timeout:g}s per run, reruns {args.reruns}, reviewbench jobs {args.jobs}, "
          f"cores {os.cpu_count()}")  # fmt: skip
    shutil.copytree(mined, naive_corpus)
    shutil.copytree(mined, rb_corpus)
    sys.stdout.flush()

    naive: dict[str, NaiveResult] = {}
    rb: dict[str, Validation] = {}
    clocks: dict[str, Clock] = {}
    if args.only in ("both", "naive"):
        print("running naive loop ...", file=sys.stderr, flush=True)
        with Clock() as clocks["naive"]:
            naive = run_naive(clone, naive_corpus, args.test_cmd, args.timeout, args.reruns, work)
    if args.only in ("both", "reviewbench"):
        print("running reviewbench validate ...", file=sys.stderr, flush=True)
        with Clock() as clocks["reviewbench"]:
            rb = run_reviewbench(rb_corpus, args.test_cmd, args.jobs, args.timeout, args.reruns)

    # ---- throughput
    print()
    print(f"{'method':<12} {'cases':>5} {'self CPU s':>10} {'child CPU s':>11} {'CPU s':>8} {'wall s':>8} "
          f"{'cases/CPU-min':>13} {'cases/wall-min':>14}")  # fmt: skip
    for name, clock in clocks.items():
        print(f"{name:<12} {n:>5} {clock.self_cpu:>10.1f} {clock.child_cpu:>11.1f} {clock.cpu:>8.1f} "
              f"{clock.wall:>8.1f} {per_minute(n, clock.cpu):>13.2f} {per_minute(n, clock.wall):>14.2f}")  # fmt: skip
    if "naive" in clocks:
        avoidable = sum(r.avoidable_cpu for r in naive.values())
        suite_runs = sum(len(r.runs) for r in naive.values())
        print(f"naive loop: {suite_runs} whole-suite runs; had it stopped at the first passing patched run "
              f"(as reviewbench does), {avoidable:.1f} CPU s fewer: "
              f"{per_minute(n, clocks['naive'].cpu - avoidable):.2f} cases/CPU-min")  # fmt: skip
    if "reviewbench" in clocks:
        by_sel: Counter[str] = Counter()
        secs: Counter[str] = Counter()
        undecided = 0.0
        for case in cases:
            runs = reviewbench_runs(rb_corpus / "logs" / f"{case.case_id}.log")
            undecided += reference_before_pass(runs)
            for run in runs:
                by_sel[run.selection] += 1
                secs[run.selection] += run.seconds
        detail = ", ".join(f"{by_sel[s]} {s} runs ({secs[s]:.0f}s)" for s in sorted(by_sel))
        print(f"reviewbench: {detail or 'no test runs found in logs'} (summed run times, from its logs); "
              f"{undecided:.0f}s of them were reference runs of a selection whose first patched run "
              "then passed")  # fmt: skip
    if len(clocks) == 2:
        cpu_ratio = clocks["naive"].cpu / clocks["reviewbench"].cpu
        wall_ratio = clocks["naive"].wall / clocks["reviewbench"].wall
        print()
        print(f"throughput ratio reviewbench/naive: CPU {cpu_ratio:.2f}x, wall {wall_ratio:.2f}x "
              f"(target >= {TARGET_RATIO:g}x): CPU target {'met' if cpu_ratio >= TARGET_RATIO else 'NOT met'}, "
              f"wall target {'met' if wall_ratio >= TARGET_RATIO else 'NOT met'}")  # fmt: skip

    # ---- statuses
    print()
    for name, statuses in (("naive", {k: v.status for k, v in naive.items()}),
                           ("reviewbench", {k: v.status.value for k, v in rb.items()})):  # fmt: skip
        if statuses:
            counts = Counter(statuses.values())
            print(f"{name} statuses: " + ", ".join(f"{s} {counts[s]}" for s in sorted(counts)))
    if naive and rb:
        print()
        print(
            f"{'case':<18} {'naive':<13} {'naive s':>7} {'reviewbench':<13} {'selection':<10} {'rb s':>6}  agree"
        )
        disagreements = []
        for case in cases:
            r = naive.get(case.case_id)
            a = r.status if r else "missing"
            v = rb.get(case.case_id)
            b = v.status.value if v else "missing"
            print(f"{case.case_id:<18} {a:<13} {sum(x.wall for x in r.runs) if r else 0:>7.1f} {b:<13} "
                  f"{(v.selection if v else '') or '-':<10} {(v.duration_s if v else 0) or 0:>6.1f}  "
                  f"{'yes' if a == b else 'NO'}")  # fmt: skip
            if a != b:
                disagreements.append((case.case_id, a, b, v))
        agree = n - len(disagreements)
        print()
        print(f"statuses agree on {agree}/{n} cases; {len(disagreements)} disagreement(s)")
        for case_id, a, b, v in disagreements:
            failing = ", ".join(v.failing_tests) if v and v.failing_tests else "-"
            naive_failing = ", ".join(failed_tests(work / "naive-logs" / f"{case_id}.log")) or "-"
            print(f"  {case_id}: naive {a}, reviewbench {b}")
            print(f"    naive runs: {', '.join(f'{x.label} {x.kind}' for x in naive[case_id].runs) or '-'}; "
                  f"failed in some run: {naive_failing}")  # fmt: skip
            print(
                f"    reviewbench decided by selection {v.selection if v else '-'}; failing: {failing}"
            )
            print(f"    reviewbench log: {rb_corpus / 'logs' / f'{case_id}.log'}")
            print(f"    naive log:       {work / 'naive-logs' / f'{case_id}.log'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
