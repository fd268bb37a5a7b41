#!/usr/bin/env python3
"""Observed mutants per CPU-minute: reviewbench (mine --mutations + validate) beside mutmut.

Both tools run on scratch clones of the same repository in the same invocation:

``reviewbench``
    ``reviewbench mine CLONE --no-fixes --mutations N --controls-ratio 0 --no-mirrors`` and
    then ``reviewbench validate CORPUS --test-cmd CMD --jobs J --reruns R``. The figure is the
    mutation cases validation marks ``observed`` (tests pass at HEAD, fail on every rerun
    with the patch), per CPU-minute of both commands. Mining makes no mirrors (the clean
    un-mutation paired with each mutant, a default of ``mine``): mutmut makes none, and the
    measured figures in benchmarks/README.md were taken without them, so ``made`` stays the
    N mutants and CPU is spent on them alone. A ``--baseline-src`` older than
    ``--no-mirrors`` makes none anyway and is run without the option.
``mutmut``
    ``mutmut run --max-children J`` with a ``[mutmut]`` section written into the clone's
    ``setup.cfg`` (source paths, test selection, the same deselected tests). The figure is
    the mutants mutmut reports killed, per CPU-minute of the run.

CPU time is ``getrusage(RUSAGE_CHILDREN)`` user + system, before and after each command:
it covers every process the command started and reaped (git, pytest, sandboxes, mutmut's
forks), and, unlike wall-clock time, it is fair on a shared machine. Wall time is
printed beside it.

The two do different work, which the table states rather than hides: mutmut generates
and tests every mutant it can make, forking an already-warm test process for each;
reviewbench makes N chosen, realistic mutants and proves each in a sandboxed scratch clone
with a reference run on the unpatched tree first. Use ``--reruns 1`` for the closest
match to mutmut's single run per mutant.

Usage::

    .venv/bin/pip install -e '.[bench]'      # mutmut
    .venv/bin/python benchmarks/mutate_speed.py /path/to/repo --mutations 30 --jobs 2 \\
        --deselect tests/test_x.py::test_needs_install
    .venv/bin/python benchmarks/mutate_speed.py --smoke    # a tiny repo built here, seconds (the test suite runs it)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PYTHON = sys.executable
#: reviewbench's observed per CPU-minute against mutmut's killed, at N >= 300 (issue 28; 0.8 before).
TARGET = 1.0


@dataclass(frozen=True)
class Measured:
    """One command: its exit code, CPU seconds (all reaped descendants) and wall seconds."""

    code: int
    cpu_s: float
    wall_s: float
    stdout: str
    stderr: str


def measure(argv: list[str], cwd: Path | None = None, timeout: float | None = None,
            env: dict[str, str] | None = None) -> Measured:  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(proc.returncode, cpu, wall, proc.stdout, proc.stderr)


def clone(repo: Path, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(repo), str(where)], check=True)
    return where


def per_minute(count: int, cpu_s: float) -> float:
    return count / (cpu_s / 60) if cpu_s > 0 else 0.0


def _no_mirrors(env: dict[str, str] | None) -> list[str]:
    """``--no-mirrors`` if the reviewbench that ``env`` runs has it (code older than mirrors
    makes none and rejects the option); asked outside any measurement."""
    proc = subprocess.run([PYTHON, "-m", "reviewbench", "mine", "--help"], capture_output=True, text=True,
                          check=False, env=env)  # fmt: skip
    return ["--no-mirrors"] if "--no-mirrors" in proc.stdout else []


def run_reviewbench(repo: Path, work: Path, args: argparse.Namespace, test_cmd: str,
                    env: dict[str, str] | None = None, corpus_name: str = "corpus") -> dict:  # fmt: skip
    corpus = work / corpus_name
    mine = [PYTHON, "-m", "reviewbench", "mine", str(repo), "--out", str(corpus), "--no-fixes",
            "--mutations", str(args.mutations), "--controls-ratio", "0", *_no_mirrors(env),
            "--seed", str(args.seed), "--json"]  # fmt: skip
    if args.coverage:
        mine += ["--coverage-cmd", f"{shlex.quote(PYTHON)} -m coverage run -m pytest -q -p no:cacheprovider"
                 + "".join(f" --deselect {shlex.quote(d)}" for d in args.deselect)]
    mined = measure(mine, env=env)
    if mined.code != 0:
        sys.exit(f"reviewbench mine failed: {mined.stderr.strip()}")
    validated = measure([PYTHON, "-m", "reviewbench", "validate", str(corpus), "--test-cmd", test_cmd,
                         "--jobs", str(args.jobs), "--reruns", str(args.reruns), "--timeout", str(args.timeout),
                         "--json"], env=env)  # fmt: skip
    if validated.code != 0:
        sys.exit(f"reviewbench validate failed: {validated.stderr.strip()}")
    statuses: dict[str, int] = {}
    by_operator: dict[str, list[int]] = {}
    by_case: dict[str, str] = {}
    for line in (corpus / "gold.jsonl").read_text().splitlines():
        gold = json.loads(line)
        status = gold["validation"]["status"]
        by_case[gold["case_id"]] = status
        statuses[status] = statuses.get(status, 0) + 1
        row = by_operator.setdefault(gold["provenance"]["operator"], [0, 0])
        row[0] += status == "observed"
        row[1] += 1
    cpu = mined.cpu_s + validated.cpu_s
    return {
        "made": sum(statuses.values()),
        "observed": statuses.get("observed", 0),
        "statuses": statuses,
        "by_case": by_case,
        "by_operator": by_operator,
        "cpu_s": cpu,
        "mine_cpu_s": mined.cpu_s,
        "validate_cpu_s": validated.cpu_s,
        "wall_s": mined.wall_s + validated.wall_s,
        "rate": per_minute(statuses.get("observed", 0), cpu),
    }


def _guess_sources(repo: Path) -> list[str]:
    """Top-level packages (``pkg/__init__.py`` or ``src/pkg/__init__.py``) that are not tests."""
    found = []
    for base in (repo / "src", repo):
        for init in sorted(base.glob("*/__init__.py")):
            name = init.parent.name
            if not name.startswith(("test", ".")) and name not in ("docs", "doc", "bench", "benchmarks"):
                found.append(str(init.parent.relative_to(repo)))
        if found:
            break
    return found


def _cfg_list(values: list[str]) -> str:
    return "".join(f"\n    {v}" for v in values)


def run_mutmut(repo: Path, args: argparse.Namespace) -> dict:
    try:
        from mutmut.__main__ import status_by_exit_code
    except ImportError:
        sys.exit("mutmut is not installed: .venv/bin/pip install -e '.[bench]'")
    sources = args.source or _guess_sources(repo)
    tests = args.tests or [p for p in ("tests", "test") if (repo / p).is_dir()]
    if not tests:
        tests = [str(p.relative_to(repo)) for s in sources for p in (repo / s).glob("**/tests") if p.is_dir()]
    pytest_args = ["-p", "no:cacheprovider", "-p", "no:randomly"]
    for nodeid in args.deselect + args.mutmut_deselect:
        pytest_args += ["--deselect", nodeid]
    section = (
        "\n[mutmut]\n"
        f"source_paths={_cfg_list(sources)}\n"
        f"do_not_mutate={_cfg_list([f'{t}/*' for t in tests] + ['*/tests/*', '*/test_*.py', '*conftest.py'])}\n"
        f"pytest_add_cli_args={_cfg_list(pytest_args)}\n"
        f"pytest_add_cli_args_test_selection={_cfg_list(tests)}\n"
    )
    cfg = repo / "setup.cfg"
    text = cfg.read_text() if cfg.is_file() else ""
    if "[mutmut]" not in text:
        cfg.write_text(text + section)
    pyproject = repo / "pyproject.toml"
    if pyproject.is_file() and "[tool.mutmut]" in pyproject.read_text():
        print("note: the repository's own [tool.mutmut] settings are used", file=sys.stderr)
    ran = measure([PYTHON, "-m", "mutmut", "run", "--max-children", str(args.jobs)], cwd=repo,
                  timeout=args.mutmut_timeout)  # fmt: skip
    counts: dict[str, int] = {}
    for meta in (repo / "mutants").rglob("*.meta"):
        for code in json.loads(meta.read_text()).get("exit_code_by_key", {}).values():
            status = status_by_exit_code[code]
            counts[status] = counts.get(status, 0) + 1
    if ran.code != 0 or not counts:
        failed = re.findall(r"^FAILED (\S+)", ran.stdout + ran.stderr, re.MULTILINE)
        hint = f" (failing under mutmut: {', '.join(failed[:5])}; pass --mutmut-deselect)" if failed else ""
        sys.exit(f"mutmut run failed with exit {ran.code}{hint}: {(ran.stderr or ran.stdout).strip()[-400:]}")
    killed = counts.get("killed", 0)
    return {
        "made": sum(counts.values()),
        "observed": killed,
        "statuses": counts,
        "cpu_s": ran.cpu_s,
        "wall_s": ran.wall_s,
        "rate": per_minute(killed, ran.cpu_s),
        "sources": sources,
        "tests": tests,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("repo", type=Path, nargs="?",
                        help="a git repository of a Python package with a pytest suite (not needed with --smoke)")
    parser.add_argument("--mutations", type=int, default=30, help="mutation cases reviewbench makes [30]")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel workers, both tools")
    parser.add_argument("--reruns", type=int, default=1, help="validate --reruns [1: one run, as mutmut]")
    parser.add_argument("--timeout", type=float, default=600, help="validate --timeout per test run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--coverage", action="store_true", help="mine with --coverage-cmd (coverage.py)")
    parser.add_argument("--test-cmd", help="validate's test command [python -m pytest -q -x -p no:cacheprovider]")
    parser.add_argument("--deselect", action="append", default=[], metavar="NODEID",
                        help="a test failing at HEAD, deselected for both tools (repeatable)")
    parser.add_argument("--mutmut-deselect", action="append", default=[], metavar="NODEID",
                        help="a test only mutmut's instrumentation breaks (repeatable)")
    parser.add_argument("--source", action="append", default=[], help="mutmut source path (repeatable)")
    parser.add_argument("--tests", action="append", default=[], help="mutmut test directory (repeatable)")
    parser.add_argument("--mutmut-timeout", type=float, default=3 * 3600)
    parser.add_argument("--skip-mutmut", action="store_true")
    parser.add_argument("--baseline-src", type=Path, metavar="DIR",
                        help="also run reviewbench from DIR/src (e.g. a git worktree of an older commit), "
                             "same clone and settings, and compare rates and statuses")
    parser.add_argument("--workdir", type=Path, help="keep clones and corpus here (default: a temp dir)")
    parser.add_argument("--smoke", action="store_true",
                        help="2 mutations of a tiny repository built in the work directory, seconds: checks that "
                             "the script runs (mutmut is skipped, with a line saying so, when not installed)")
    args = parser.parse_args()
    if args.repo is None and not args.smoke:
        parser.error("REPO is required (or --smoke)")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="mutate-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.smoke:
        from _smoke import optional, smoke_repo

        shutil.rmtree(work / "smoke-repo", ignore_errors=True)
        args.repo = smoke_repo(work / "smoke-repo")
        args.mutations, args.jobs, args.reruns, args.timeout = 2, min(args.jobs, 2), 1, 60.0
        args.skip_mutmut = args.skip_mutmut or not optional("mutmut", "the mutmut baseline")
    from _cpu import accountable_sandbox

    sandbox_line = accountable_sandbox()
    repo = args.repo.resolve()
    test_cmd = args.test_cmd or (f"{shlex.quote(PYTHON)} -m pytest -q -x -p no:cacheprovider"
                                 + "".join(f" --deselect {shlex.quote(d)}" for d in args.deselect))  # fmt: skip
    load = os.getloadavg()
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=False).stdout.strip()
    try:
        ours_repo = clone(repo, work / "reviewbench-repo")
        ours = run_reviewbench(ours_repo, work, args, test_cmd)
        baseline = None
        if args.baseline_src:
            env = {**os.environ, "PYTHONPATH": str(args.baseline_src.resolve() / "src")}
            baseline = run_reviewbench(ours_repo, work, args, test_cmd, env=env, corpus_name="corpus-baseline")
        theirs = None if args.skip_mutmut else run_mutmut(clone(repo, work / "mutmut-repo"), args)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"repository {repo} at {head[:12]}; jobs {args.jobs}; load average {load[0]:.2f} → {os.getloadavg()[0]:.2f}")
    print(f"validate --test-cmd {test_cmd!r} --reruns {args.reruns}")
    print(sandbox_line)
    print(f"{'tool':<12} {'made':>6} {'observed':>9} {'CPU s':>8} {'wall s':>8} {'observed/CPU-min':>17}")
    rows = [("reviewbench", ours)] + ([("baseline", baseline)] if baseline else []) \
        + ([("mutmut", theirs)] if theirs else [])
    for name, row in rows:
        print(f"{name:<12} {row['made']:>6} {row['observed']:>9} {row['cpu_s']:>8.1f} {row['wall_s']:>8.1f}"
              f" {row['rate']:>17.1f}")  # fmt: skip
    print(f"reviewbench observed per CPU-minute: {ours['rate']:.1f} ({ours['observed']} of {ours['made']} made)")
    print(f"reviewbench CPU: mine {ours['mine_cpu_s']:.1f}s, validate {ours['validate_cpu_s']:.1f}s; "
          f"statuses {ours['statuses']}")
    print("reviewbench observed/made by operator: "
          + ", ".join(f"{op} {o}/{n}" for op, (o, n) in sorted(ours["by_operator"].items())))  # fmt: skip
    if baseline:
        print(f"baseline ({args.baseline_src}) CPU: mine {baseline['mine_cpu_s']:.1f}s, "
              f"validate {baseline['validate_cpu_s']:.1f}s; statuses {baseline['statuses']}")
        shared = sorted(set(ours["by_case"]) & set(baseline["by_case"]))
        differ = [c for c in shared if ours["by_case"][c] != baseline["by_case"][c]]
        print(f"statuses agree on {len(shared) - len(differ)} of {len(shared)} cases mined by both"
              + "".join(f"; {c}: baseline {baseline['by_case'][c]}, now {ours['by_case'][c]}" for c in differ))
        print(f"reviewbench/baseline observed per CPU-minute: {ours['rate'] / baseline['rate']:.2f}x"
              if baseline["rate"] else "baseline observed nothing")
    if theirs:
        print(f"mutmut statuses {theirs['statuses']} (sources {theirs['sources']}, tests {theirs['tests']})")
        ratio = ours["rate"] / theirs["rate"] if theirs["rate"] else float("inf")
        verdict = "met" if ratio >= TARGET else "missed"
        print(f"reviewbench/mutmut observed per CPU-minute: {ratio:.2f}x (target >= {TARGET:g}x at N >= 300: "
              f"{verdict}{'' if args.mutations >= 300 else '; N < 300 here'})")


if __name__ == "__main__":
    main()
