#!/usr/bin/env python3
"""Speed of the default mine (fix reversals, their mirrors and paired controls) against
another version of reviewbench, in the same run, and whether both write the same corpus.

``mine_speed.py`` measures the history walk alone (no controls, no mirrors) against git
and PyDriller. On a real history the default mine's cost is elsewhere: controls parse each
fix's files at the fix commit with libcst and try refactors on them (thefuck: 22 s of a 22.5
s mine). This script runs ``reviewbench mine REPO --out DIR`` with the defaults, as a user
would, from this tree's ``src`` and from ``--baseline-src DIR/src`` alternately
(``--repeat`` rounds), and prints for each the best and median CPU seconds (user + system
of the process and its git children, ``getrusage(RUSAGE_CHILDREN)``) and wall seconds, the
ratio of best CPU (baseline / this tree), and whether the two corpora are byte-identical
(``cases.jsonl``, ``gold.jsonl``, every patch; ``corpus.json`` holds a timestamp and is
compared without it), listing the files that differ.

    .venv/bin/python benchmarks/default_mine_speed.py REPO --baseline-src DIR [--repeat 3]
    .venv/bin/python benchmarks/default_mine_speed.py --smoke

``DIR`` holds an older ``src`` (``git archive OLD src | tar -x -C DIR``). ``--smoke`` mines
the tiny smoke repository with this tree as both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _smoke import smoke_repo  # noqa: E402


def mine(src: Path, repo: Path, out: Path, extra: list[str]) -> tuple[float, float]:
    """(CPU s, wall s) of one ``reviewbench mine`` from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "reviewbench", "mine", str(repo), "--out", str(out), *extra],
                          env=env, capture_output=True, text=True, check=False)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"mine from {src} failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def differences(a: Path, b: Path) -> list[str]:
    """Files of two corpora that differ (``corpus.json`` without ``created_at``)."""
    names = sorted({p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
                   | {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()})  # fmt: skip
    differ = []
    for name in names:
        left, right = a / name, b / name
        if not (left.is_file() and right.is_file()):
            differ.append(name)
        elif name == "corpus.json":
            one, two = (json.loads(p.read_text()) for p in (left, right))
            one.pop("created_at", None), two.pop("created_at", None)
            if one != two:
                differ.append(name)
        elif left.read_bytes() != right.read_bytes():
            differ.append(name)
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", nargs="?", type=Path, help="a git repository (not needed with --smoke)")
    parser.add_argument("--baseline-src", type=Path, help="a folder whose src/ holds the reviewbench to compare with")
    parser.add_argument("--repeat", type=int, default=3, help="alternating rounds; best and median count [3]")
    parser.add_argument("--smoke", action="store_true", help="the tiny smoke repository, this tree on both sides")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rb-default-mine-"))
    try:
        if args.smoke:
            repo, baseline, repeat = smoke_repo(work / "repo"), ROOT, 1
        elif args.repo is None or args.baseline_src is None:
            parser.error("REPO and --baseline-src are required (or --smoke)")
        else:
            repo, baseline, repeat = args.repo, args.baseline_src, args.repeat
        sides = {"this tree": ROOT / "src", "baseline": baseline / "src"}
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
        for round_ in range(repeat):
            for name, src in sides.items():
                out = work / f"{name.replace(' ', '-')}-{round_}"
                figures[name].append(mine(src, repo, out, []))
        print(f"repository {repo}; default mine (fix reversals, mirrors, paired controls); {repeat} round(s)")
        print(f"{'side':<10} {'best CPU s':>10} {'median CPU s':>12} {'best wall s':>11}")
        for name, runs in figures.items():
            cpus = [c for c, _ in runs]
            print(f"{name:<10} {min(cpus):>10.2f} {statistics.median(cpus):>12.2f} {min(w for _, w in runs):>11.2f}")
        mine_cpu, base_cpu = (min(c for c, _ in figures[n]) for n in sides)
        print(f"baseline/this tree best CPU = {base_cpu:.3f} / {mine_cpu:.3f} = {base_cpu / mine_cpu:.2f}x")
        differ = differences(work / f"this-tree-{repeat - 1}", work / f"baseline-{repeat - 1}")
        cases = sum(1 for _ in (work / f"this-tree-{repeat - 1}" / "cases.jsonl").open())
        print(f"corpora identical: {'yes' if not differ else 'no'} ({cases} cases; {len(differ)} files differ)")
        for name in differ[:20]:
            print(f"  differs: {name}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
