"""How fast is scoring, and is the vectorised bootstrap worth it?

Builds a synthetic corpus and run store (default: 5,000 cases x 2 conditions x 5
repetitions = 50,000 runs with 5 findings each), then:

1. scores it with ``reviewbench.score.score_run`` and 10,000 bootstrap resamples in a fresh
   process, reporting wall time, CPU time and that process's peak RSS;
2. times the bootstrap stage both ways on the same per-case sums: reviewbench's
   vectorised resampling (block matrix products) against a straightforward per-resample
   Python loop (draw N case ids, sum their numerators and denominators, divide). The
   loop is timed on ``--loop-resamples`` resamples and scaled linearly to the full count
   (its cost is linear in the number of resamples); the printed ratio says so.

Target (issue 6): >= 20x the loop, < 1 GiB. Reports; asserts nothing.

    .venv/bin/python benchmarks/score_speed.py
    .venv/bin/python benchmarks/score_speed.py --cases 500 --bootstrap 2000
    .venv/bin/python benchmarks/score_speed.py --smoke     # toy sizes, seconds (the test suite runs it)
    .venv/bin/python benchmarks/score_speed.py --baseline-src DIR   # also score with DIR/src, same store

``--baseline-src DIR`` (e.g. ``git archive OLD src | tar -x -C DIR``) scores the same store
once more in a fresh process importing reviewbench from ``DIR/src``, and prints its wall,
CPU and peak RSS beside the tree's, and whether the two scores agree.

The store is built through the project's API (``CorpusWriter``, ``RunStore.record_many``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from reviewbench.records import (
    Case,
    CorpusCounts,
    CorpusMeta,
    Defect,
    Finding,
    GoldRecord,
    Location,
    Provenance,
    RepoInfo,
    RunState,
    Severity,
    Validation,
)
from reviewbench.score import ScoreOptions, score_run
from reviewbench.score.stats import resample_ratios
from reviewbench.store.corpus import CorpusWriter
from reviewbench.store.runs import RunRow, RunStore


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(work: Path, cases: int, repeats: int, findings: int, seed: int) -> Path:
    rng = random.Random(seed)
    corpus = work / "corpus"
    with CorpusWriter(corpus) as writer:
        for i in range(cases):
            control = i % 3 == 2
            cid = f"case-{i:06d}"
            path = f"pkg/m{i % 200}.py"
            defects = [] if control else [Defect(
                defect_id=f"{cid}-d1", defect_class=rng.choice(["fix_reversal", "boundary_flip", "guard_deletion"]),
                severity=rng.choice(["low", "med", "high"]),
                locations=[Location(path=path, start_line=40, end_line=42, symbol="f")], symbols=["f"],
            )]  # fmt: skip
            writer.add(
                Case(case_id=cid, base="0" * 40, title="Update module", patch=f"patches/{cid}.diff",
                     paths=[path], language="python"),
                GoldRecord(case_id=cid, stratum="control" if control else "fix_reversal", expect_finding=not control,
                           defects=defects, provenance=Provenance(),
                           validation=Validation(status="not_observed" if control else "observed")),
                b"",
            )  # fmt: skip
        meta = writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/synthetic", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="bench", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=cases, by_stratum={}, matched_commits=0, dropped={}),
        ))  # fmt: skip
    rundir = work / "runs"
    rundir.mkdir()
    store = RunStore(rundir / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": meta.gold_sha256,
                    "experiment": json.dumps({"condition": [{"name": "A"}, {"name": "B"}]})})  # fmt: skip

    def runs():
        for i in range(cases):
            cid = f"case-{i:06d}"
            path = f"pkg/m{i % 200}.py"
            for condition, skill in (("A", 0.6), ("B", 0.3)):
                for rep in range(repeats):
                    found = [Finding(path=path, line=41 if (k == 0 and rng.random() < skill) else rng.randint(1, 200),
                                     severity=rng.choice(list(Severity)), claim="claim", raw="raw")
                             for k in range(findings)]  # fmt: skip
                    run_id = f"{condition}-{cid}-{rep}"
                    yield RunRow(
                        run_id=run_id, case_id=cid, condition=condition, repetition=rep, variant="original",
                        state=RunState.COMPLETED_FINDINGS if found else RunState.COMPLETED_NO_FINDINGS,
                        latency_s=rng.uniform(0.5, 3.0), attempts=1, cached=False, model_requested="m",
                        model_returned="m", params={}, prompt_sha256="p" * 64, gold_sha256=meta.gold_sha256,
                        tool_version="bench", tokens_in=100, tokens_out=20, raw_output="text", cache_key=run_id,
                        findings=found,
                    )  # fmt: skip

    store.record_many(runs())
    store.close()
    return rundir


def _score(rundir: Path, resamples: int) -> tuple[float, float, float, dict]:
    wall0, cpu0 = time.perf_counter(), _cpu()
    result = score_run(rundir, ScoreOptions(bootstrap=resamples, seed=0))
    return time.perf_counter() - wall0, _cpu() - cpu0, _peak_rss_mib(), result


def _baseline(src: Path, rundir: Path, resamples: int) -> tuple[float, float, float, dict]:
    """:func:`_score` in a fresh process importing reviewbench from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, __file__, "--score-only", str(rundir), "--bootstrap", str(resamples)],
                         env=env, check=True, capture_output=True, text=True).stdout  # fmt: skip
    got = json.loads(out.splitlines()[-1])
    return got["wall"], got["cpu"], got["rss"], got["result"]


def loop_bootstrap(num: np.ndarray, den: np.ndarray, resamples: int, seed: int) -> float:
    """The straightforward way: a Python loop per resample over drawn case ids."""
    n, k = num.shape
    nums, dens = num.tolist(), den.tolist()
    rng = random.Random(seed)
    start = time.perf_counter()
    for _ in range(resamples):
        top, bottom = [0.0] * k, [0.0] * k
        for _ in range(n):
            i = rng.randrange(n)
            row_n, row_d = nums[i], dens[i]
            for j in range(k):
                top[j] += row_n[j]
                bottom[j] += row_d[j]
        _ = [t / b if b else float("nan") for t, b in zip(top, bottom, strict=True)]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--findings", type=int, default=5)
    parser.add_argument("--bootstrap", type=int, default=10_000)
    parser.add_argument("--loop-resamples", type=int, default=20, help="resamples the loop is timed on")
    parser.add_argument("--baseline-src", type=Path, metavar="DIR",
                        help="also score the same store with reviewbench from DIR/src, in a fresh process")
    parser.add_argument("--score-only", type=Path, metavar="RUNDIR", help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true",
                        help="toy sizes (30 cases x 2 repeats, 200 resamples), seconds: checks that it runs")
    args = parser.parse_args()
    if args.score_only:  # the baseline's process: one JSON line
        wall, cpu, rss, result = _score(args.score_only, args.bootstrap)
        print(json.dumps({"wall": wall, "cpu": cpu, "rss": rss, "result": result.as_json()}))
        return
    if args.smoke:
        args.cases, args.repeats, args.findings, args.bootstrap, args.loop_resamples = 30, 2, 3, 200, 5

    with tempfile.TemporaryDirectory(prefix="rb-score-bench-") as tmp:
        t0 = time.perf_counter()
        rundir = build(Path(tmp), args.cases, args.repeats, args.findings, seed=1)
        runs = args.cases * 2 * args.repeats
        print(f"synthetic store: {runs} runs x {args.findings} findings ({args.cases} cases, 2 conditions, "
              f"{args.repeats} repetitions), built in {time.perf_counter() - t0:.1f} s")  # fmt: skip

        # Score in a fresh process, so that its peak RSS is scoring's alone (--smoke: in this
        # one, sparing a second import of scipy; the RSS then includes the build).
        if args.smoke:
            wall, cpu, rss, result = _score(rundir, args.bootstrap)
        else:
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                wall, cpu, rss, result = pool.apply(_score, (rundir, args.bootstrap))
        recall = result.as_json()["conditions"]["A"]["metrics"]["defect_recall"]  # a typed ScoreResult
        where = "this process (--smoke)" if args.smoke else "the scoring process"
        print(f"score_run, {args.bootstrap} resamples: wall {wall:.2f} s, CPU {cpu:.2f} s; "
              f"peak RSS of {where} {rss:.0f} MiB (target < 1024)")
        print(f"  A defect_recall {recall['num']}/{recall['den']} = {recall['value']:.4f} "
              f"[{recall['lo']:.4f}, {recall['hi']:.4f}]")
        if args.baseline_src:
            b_wall, b_cpu, b_rss, b_result = _baseline(args.baseline_src.resolve() / "src", rundir, args.bootstrap)
            same = b_result["conditions"] == result.as_json()["conditions"]
            print(f"baseline ({args.baseline_src}/src), same store: wall {b_wall:.2f} s, CPU {b_cpu:.2f} s; "
                  f"peak RSS {b_rss:.0f} MiB; this tree/baseline: peak RSS {rss / b_rss:.2f}x, "
                  f"CPU {cpu / b_cpu:.2f}x; conditions' figures {'identical' if same else 'DIFFER'}")

        # The bootstrap stage alone, both ways, on the same per-case sums.
        rng = np.random.default_rng(0)
        clusters, columns = args.cases, 2 * 15
        num = rng.integers(0, args.repeats + 1, size=(clusters, columns)).astype(float)
        den = np.full((clusters, columns), float(args.repeats))
        v0 = time.perf_counter()
        resample_ratios(num, den, args.bootstrap, seed=0)
        vectorised = time.perf_counter() - v0
        looped = loop_bootstrap(num, den, args.loop_resamples, seed=0) * args.bootstrap / args.loop_resamples
    print(f"bootstrap stage ({clusters} clusters x {columns} statistics, {args.bootstrap} resamples):")
    print(f"  vectorised: {vectorised:.2f} s; Python loop: {looped:.1f} s "
          f"(timed on {args.loop_resamples} resamples, scaled x{args.bootstrap // args.loop_resamples})")
    print(f"  ratio loop/vectorised = {looped / vectorised:.0f}x (target >= 20x)")


if __name__ == "__main__":
    main()
