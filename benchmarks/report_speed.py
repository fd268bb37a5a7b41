"""Is building the report linear in the findings of a run? (issue 19, item 8)

Writes a corpus with one validated defect case and a run store (through the project's own
``CorpusWriter`` and ``RunStore``) holding one run with N findings, then times
``build_report`` (which scores, writes ``verdicts.jsonl`` and joins the verdicts) for N and
4N findings in the same process. Linear work gives a ratio near 4; the earlier
prefix-matching report was quadratic (about 16: 2,000 findings 14 s, 8,000 165 s).
Reports; asserts nothing.

    .venv/bin/python benchmarks/report_speed.py              # 2,000 and 8,000 findings
    .venv/bin/python benchmarks/report_speed.py --smoke      # tiny sizes, for the test suite
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

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
    Validation,
)
from reviewbench.report import ReportOptions, build_report
from reviewbench.store.corpus import CorpusWriter
from reviewbench.store.runs import RunRow, RunStore


def build(work: Path, findings: int) -> Path:
    corpus = work / "corpus"
    with CorpusWriter(corpus) as writer:
        writer.add(
            Case(case_id="case-1", base="0" * 40, title="Update module", patch="patches/case-1.diff",
                 paths=["pkg/m.py"], language="python"),
            GoldRecord(case_id="case-1", stratum="fix_reversal", expect_finding=True,
                       defects=[Defect(defect_id="case-1-d1", defect_class="fix_reversal", severity="high",
                                       locations=[Location(path="pkg/m.py", start_line=40, end_line=42)],
                                       symbols=["parse"])],
                       provenance=Provenance(), validation=Validation(status="observed")),
            b"",
        )  # fmt: skip
        meta = writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/synthetic", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="bench", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=1, by_stratum={}, matched_commits=0, dropped={}),
        ))  # fmt: skip
    rundir = work / "runs"
    rundir.mkdir()
    store = RunStore(rundir / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": meta.gold_sha256,
                    "experiment": json.dumps({"condition": [{"name": "A"}]})})  # fmt: skip
    items = [Finding(path="pkg/m.py", line=1 + k % 200, severity="low", claim=f"remark {k} on parse",
                     raw=f"pkg/m.py:{1 + k % 200} low remark {k}") for k in range(findings)]  # fmt: skip
    store.record(RunRow(
        run_id="A-case-1-0", case_id="case-1", condition="A", repetition=0, variant="original",
        state="completed_findings", started_at=None, ended_at=None, latency_s=1.0, attempts=1, cached=False,
        model_requested=None, model_returned=None, params={}, prompt_sha256="p" * 64, guidance_sha256=None,
        gold_sha256=meta.gold_sha256, tool_version="bench", tokens_in=None, tokens_out=None, raw_output="",
        unparsed=[], error=None, cache_key="k", findings=items,
    ), None)  # fmt: skip
    store.close()
    return rundir


def timed(findings: int) -> float:
    with tempfile.TemporaryDirectory(prefix="rb-report-speed-") as tmp:
        rundir = build(Path(tmp), findings)
        start = time.perf_counter()
        data = build_report(rundir, ReportOptions(bootstrap=200))
        elapsed = time.perf_counter() - start
        assert len(data.findings) == findings
        return elapsed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--findings", type=int, default=2000, help="N; the second size is 4N")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script runs")
    args = parser.parse_args(argv)
    n = 50 if args.smoke else args.findings
    timed(n)  # warm imports and caches
    small, large = timed(n), timed(4 * n)
    print(f"build_report, one run: {n} findings {small:.3f} s, {4 * n} findings {large:.3f} s; "
          f"ratio {large / small:.2f} (linear ~4, quadratic ~16)")


if __name__ == "__main__":
    main()
