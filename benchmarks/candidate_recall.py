#!/usr/bin/env python3
"""Recall of known fixes under each candidate selection, and a sample to hand-read.

Usage::

    python benchmarks/candidate_recall.py REPO KNOWN [--select LIST ...] [--sample N] [--seed S]

``KNOWN`` is a text file of fix commit ids, one a line (``#`` comments allowed): the fixed
commits of a curated bug dataset (BugsInPy's ``bug.info`` files name them as
``fixed_commit_id``), or fixes read by hand. Each ``--select`` (default: ``message`` and
``message,test_coedit``) is mined with ``mine_corpus`` (no controls, no mirrors, the other
defaults), and the script prints, per selection:

``recall``
    known fixes that became a fix-reversal case, of the known fixes that are not merges
    (mining diffs a commit against its one parent; a merge is never a case). Known merges
    are counted apart.
``cases``
    fix-reversal cases made, and how many each signal took (a case may show several).
``sample``
    ``--sample N`` cases (default 20) of the last selection, those whose SHA-256 of
    ``"SEED:commit"`` is smallest (a stable sample: changing the candidate set a little
    changes it only where cases come or go), as ``sha  selected_by  subject`` lines, to read by hand (is it a
    bug fix?); validate the corpus (``reviewbench validate``) to read only observed ones.

``--smoke`` runs on a tiny repository built in a temp dir, its two fix commits known.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.records import SelectionSignal


def _known(path: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def _full(repo: Path, shas: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Known ids resolved: (non-merge commits, merges, ids the repository lacks)."""
    commits, merges, missing = [], [], []
    for sha in shas:
        proc = subprocess.run(["git", "-C", str(repo), "rev-list", "--parents", "-n", "1", sha],
                              capture_output=True, text=True, check=False)  # fmt: skip
        if proc.returncode != 0:
            missing.append(sha)
            continue
        ids = proc.stdout.split()
        (merges if len(ids) > 2 else commits).append(ids[0])
    return commits, merges, missing


def measure(repo: Path, known: list[str], selections: list[tuple[SelectionSignal, ...]], sample: int,
            seed: int, keep: Path | None = None) -> None:  # fmt: skip
    commits, merges, missing = _full(repo, known)
    print(f"{repo}: {len(known)} known fixes, {len(commits)} not merges, {len(merges)} merges"
          + (f", {len(missing)} not in the repository" if missing else ""))  # fmt: skip
    last = []
    for select in selections:
        with tempfile.TemporaryDirectory() as tmp:
            out = (keep / "-".join(select)) if keep else Path(tmp) / "corpus"
            config = MineConfig(repo=repo, select=select, controls_ratio=0, mirrors=False)
            mine_corpus(config, out, force=True)
            corpus = read_corpus(out)
        cases = [g for g in corpus.gold if g.stratum == "fix_reversal" and g.variant_of is None]
        found = {g.provenance.commit for g in cases} & set(commits)
        name = ",".join(select)
        share = f"{len(found) / len(commits):.0%}" if commits else "n/a"
        print(f"  select {name}: recall {len(found)}/{len(commits)} ({share}); {len(cases)} cases"
              f" of {corpus.meta.counts.matched_commits} candidate commits; by signal {corpus.meta.counts.by_signal}")
        missed = sorted(set(commits) - found)
        if missed:
            print(f"    missed: {' '.join(s[:10] for s in missed)}")
        last = cases
    # The cases whose hash (with the seed) is smallest: a stable sample, which a small change
    # of the candidate set changes only where cases come or go.
    picked = sorted(last, key=lambda g: hashlib.sha256(f"{seed}:{g.provenance.commit}".encode()).hexdigest())[:sample]
    print(f"  sample of {len(picked)} cases of the last selection (seed {seed}):")
    for gold in picked:
        print(f"    {gold.provenance.commit[:10]}  {','.join(gold.provenance.selected_by):24s} {gold.provenance.subject}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("repo", nargs="?", type=Path)
    parser.add_argument("known", nargs="?", type=Path)
    parser.add_argument("--select", action="append", metavar="LIST")
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="Write each selection's corpus under this directory.")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    names = args.select or ["message", "message,test_coedit"]
    try:
        selections = [tuple(SelectionSignal(n.strip()) for n in s.split(",") if n.strip()) for s in names]
    except ValueError as exc:
        print(f"candidate_recall: {exc} (known: {', '.join(SelectionSignal)})", file=sys.stderr)
        return 2
    if args.smoke:
        from _smoke import smoke_repo

        with tempfile.TemporaryDirectory() as tmp:
            repo = smoke_repo(Path(tmp) / "repo")
            log = subprocess.run(["git", "-C", str(repo), "log", "--format=%H %s"], capture_output=True,
                                 text=True, check=True).stdout.splitlines()  # fmt: skip
            known = [line.split()[0] for line in log if " Fix " in f" {line.split(' ', 1)[1]} "]
            measure(repo, known, selections, args.sample, args.seed)
        return 0
    if args.repo is None or args.known is None:
        print("candidate_recall: give REPO and KNOWN (a file of fix commit ids), or --smoke", file=sys.stderr)
        return 2
    if not args.known.is_file():
        print(f"candidate_recall: {args.known} is not a file", file=sys.stderr)
        return 2
    measure(args.repo, _known(args.known), selections, args.sample, args.seed, args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
