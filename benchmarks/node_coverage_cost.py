#!/usr/bin/env python3
"""What telling ``not_exercised`` costs on a Node project: its suite with and without V8's coverage.

A Node runner's test runs in ``validate`` carry ``NODE_V8_COVERAGE`` (``validate/node_coverage.py``):
every Node process then writes, as it exits, the scripts it compiled, which is how a case
whose changed module no test loaded becomes ``not_exercised``. This script measures that
cost where it is paid, on REPO's whole suite at HEAD, run the way ``validate`` runs it (a
scratch clone, the corpus-style shared ``node_modules`` linked in, the test sandbox, the
runner's report): ``--repeats`` pairs of runs, with and without the variable, in
alternating order (with first, then without first) so that a warm file cache favours
neither. The "with" side includes reading and deleting the records.

Printed: each side's median wall seconds and CPU seconds (``getrusage`` of the sandboxed
runs; see ``_cpu.py``), the ratio with/without of each (numerator and denominator shown),
the bytes of coverage records per run, and how many of the tree's own files (node_modules
aside) the records name: what ``not_exercised`` is decided from. Nothing about time is asserted.

    .venv/bin/python benchmarks/node_coverage_cost.py /path/to/ufo --repeats 5
    .venv/bin/python benchmarks/node_coverage_cost.py /path/to/ufo --envs /path/to/corpus/envs  # reuse an install
    .venv/bin/python benchmarks/node_coverage_cost.py --smoke   # a tiny node:test project, seconds

REPO's dependencies are installed as ``validate --setup auto`` installs them, under
``--envs`` (default: the work directory; an install made there by ``validate`` for the
same HEAD and lockfile is reused), which needs the network the first time.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _cpu import accountable_sandbox

from reviewbench.config import ValidateConfig
from reviewbench.validate.node_coverage import COVERAGE_DIR, read_coverage
from reviewbench.validate.npm import build_node_modules
from reviewbench.validate.testcmd import TestCommand, detect_test_command
from reviewbench.validate.worker import ScratchTree

SMOKE_RANGE = "exports.clamp = (x, lo, hi) => (x < lo ? lo : x > hi ? hi : x);\n"
SMOKE_TEST = ("const test = require('node:test');\nconst assert = require('node:assert');\n"
              "const { clamp } = require('../lib/range');\n"
              "test('clamp', () => {\n  assert.strictEqual(clamp(11, 0, 10), 10);\n});\n")  # fmt: skip


def _smoke_repo(dest: Path) -> Path:
    """A real git repository: a node:test project with no dependencies (nothing to download)."""
    files = {"package.json": json.dumps({"name": "smoke", "version": "1.0.0", "scripts": {"test": "node --test test/"}}),
             "lib/range.js": SMOKE_RANGE, "test/range.test.js": SMOKE_TEST}  # fmt: skip
    for name, text in files.items():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_text(text)
    env = ["-c", "user.name=Bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(dest), *env, "commit", "-q", "-m", "init"], check=True)
    return dest


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _head(repo: Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip


def _one(tree: ScratchTree, command: TestCommand, covered: bool, log: Path) -> tuple[float, float, int, int, str]:
    """One whole-suite run: wall s, CPU s, coverage bytes, tree files named, verdict."""
    junit, coverage = tree.home / "junit.xml", tree.home / COVERAGE_DIR
    junit.unlink(missing_ok=True)
    if covered:
        coverage.mkdir(parents=True, exist_ok=True)
    shell = command.shell([], junit, None, coverage if covered else None)
    cpu0, wall0 = _children_cpu(), time.perf_counter()
    outcome, _ = tree.run_tests(command, shell, log)
    verdict = command.verdict(outcome, junit, "")
    size = named = 0
    if covered:
        size = sum(p.stat().st_size for p in coverage.iterdir())
        prefix = str(tree.path) + "/"
        named = sum(1 for p in read_coverage(coverage, tree.path) or {}
                    if p.startswith(prefix) and "/node_modules/" not in p[len(prefix) - 1:])  # fmt: skip
        for record in coverage.iterdir():
            record.unlink()
    return time.perf_counter() - wall0, _children_cpu() - cpu0, size, named, str(verdict.kind)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("repo", nargs="?", type=Path, help="a git repository of a Node project")
    parser.add_argument("--repeats", type=int, default=5, help="pairs of runs (default 5)")
    parser.add_argument("--test-cmd", help="default: the package.json test script, as validate resolves it")
    parser.add_argument("--envs", type=Path, help="where node_modules is installed or reused (a corpus's envs/)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run (default 600)")
    parser.add_argument("--smoke", action="store_true", help="a tiny node:test project, 2 pairs: checks that it runs")
    args = parser.parse_args()
    if not args.smoke and args.repo is None:
        parser.error("REPO is required (or --smoke)")
    sandbox_line = accountable_sandbox()
    with tempfile.TemporaryDirectory(prefix="rb-node-coverage-") as tmp:
        work = Path(tmp)
        repo = _smoke_repo(work / "repo") if args.smoke else args.repo.resolve()
        repeats = 2 if args.smoke else args.repeats
        head = _head(repo)
        installed = None if args.smoke else build_node_modules(args.envs or work / "envs", repo, head)
        tree = ScratchTree(repo, work / "tree", ValidateConfig(timeout=args.timeout))
        tree.checkout(head)
        tree.use_node_modules(installed.path if installed else None)
        command = TestCommand(args.test_cmd or detect_test_command(tree.path))
        if not command.node_probed:
            raise SystemExit(f"not a Node runner command whose runs take V8's coverage: {command.command!r}")
        log = work / "runs.log"
        log.touch()
        runs: dict[bool, list[tuple[float, float, int, int, str]]] = {True: [], False: []}
        for pair in range(repeats):
            for covered in ((True, False) if pair % 2 == 0 else (False, True)):
                runs[covered].append(_one(tree, command, covered, log))
    kinds = {covered: sorted({r[4] for r in results}) for covered, results in runs.items()}
    print(sandbox_line)
    print(f"command: {command.command}")
    print(f"runs: {repeats} pairs of whole-suite runs at {head[:12]}; verdicts with {kinds[True]}, without {kinds[False]}")
    wall = {c: statistics.median(r[0] for r in runs[c]) for c in runs}
    cpu = {c: statistics.median(r[1] for r in runs[c]) for c in runs}
    print(f"wall: with coverage {wall[True]:.2f} s, without {wall[False]:.2f} s (medians); "
          f"ratio {wall[True] / wall[False]:.3f} = {wall[True]:.2f} / {wall[False]:.2f}")  # fmt: skip
    if cpu[False] > 0:
        print(f"CPU: with coverage {cpu[True]:.2f} s, without {cpu[False]:.2f} s (medians); "
              f"ratio {cpu[True] / cpu[False]:.3f} = {cpu[True]:.2f} / {cpu[False]:.2f}")  # fmt: skip
    size = statistics.median(r[2] for r in runs[True])
    named = statistics.median(r[3] for r in runs[True])
    print(f"coverage records: {size / 1e6:.2f} MB per run (median); tree files named: {named:.0f}")


if __name__ == "__main__":
    main()
