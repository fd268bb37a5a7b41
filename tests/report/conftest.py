"""A small real corpus and run store for the report tests, with hostile model text in it.

Written through ``CorpusWriter`` and ``RunStore`` exactly as mining and running write them.
Two conditions × three repetitions over three analysed defect cases (four defects), two
controls, mirrors of two defect cases (clean cases on which both conditions are silent, so
that a claim naming those defects identifies them), a rename variant and an unvalidated
case; runs that found, missed, failed, timed
out or were never recorded; and findings whose claims, paths and errors try to run script.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
from reviewbench.store.corpus import CorpusWriter
from reviewbench.store.runs import RunRow, RunStore

from ..score.mirrors import mirror_id, paired

XSS_SCRIPT = "<script>window.__xss=1</script>"
XSS_IMG = '<img src=x onerror="window.__xss=2">'
XSS_MODEL = '<img src=x onerror="window.__xss=3">'
XSS_ERROR = '<img src=x onerror="window.__xss=4"></script><script>window.__xss=4</script>'
XSS_PATH = 'app/"><svg onload=window.__xss=5>.py'
FORMULA = '=HYPERLINK("http://evil.example","click")'

REPS = 3
CONDITIONS = ("A", "B")

# case id: (paths, defects [(path, start, end, severity)], validation status, variant_of)
CASES = {
    "case-a1": (["app/core.py"], [("app/core.py", 10, 12, "high")], "observed", None),
    "case-a2": (["app/b.py", "app/c.py"], [("app/b.py", 5, 5, "med"), ("app/c.py", 20, 22, None)], "observed", None),
    "case-a3": (["app/e.py"], [("app/e.py", 1, 1, "low")], "observed", None),
    "case-u1": (["app/u.py"], [("app/u.py", 3, 3, None)], "not_observed", None),
    "case-k1": (["app/x.py"], [], "not_observed", None),
    "case-k2": (["app/y.py"], [], "not_observed", None),
    "case-v1": (["app/core.py"], [("app/core.py", 11, 13, "high")], "observed", "case-a1"),
}
ANALYSED_DEFECTS = 4  # a1: 1, a2: 2, a3: 1
MIRRORED = ("case-a1", "case-a2")  # the cases whose defects some claim names (v1 uses a1's mirror)
CASE_IDS = (*CASES, *(mirror_id(c) for c in MIRRORED))


def F(path, line, severity=None, claim="a claim"):
    return Finding(path=path, line=line, severity=severity, claim=claim, raw=f"{path}:{line} {claim}")


# (condition, case, repetition) -> (state, findings, error); absent keys were never run.
RUNS = {
    ("A", "case-a1", 0): ("completed_findings", [F("app/core.py", 11, "high", XSS_SCRIPT)], None),
    ("A", "case-a1", 1): ("completed_findings", [F("app/core.py", 10, "med", "off by one in parse_key")], None),
    ("A", "case-a1", 2): ("failed", [], XSS_ERROR),
    ("A", "case-a2", 0): ("completed_findings", [F("app/b.py", 5, "med", "parse_key reads the wrong key"), F("app/c.py", 90, "low", XSS_IMG)], None),
    ("A", "case-a2", 1): ("completed_findings", [F("app/b.py", 40, "low", FORMULA)], None),
    ("A", "case-a2", 2): ("completed_no_findings", [], None),
    ("A", "case-a3", 0): ("completed_no_findings", [], None),
    ("A", "case-a3", 1): ("completed_findings", [F("app/e.py", None, None, "file-level remark")], None),
    ("A", "case-a3", 2): ("completed_no_findings", [], None),
    ("A", "case-k1", 0): ("completed_findings", [F(XSS_PATH, 3, "high", "path tries markup")], None),
    ("A", "case-k1", 1): ("completed_no_findings", [], None),
    ("A", "case-k1", 2): ("completed_findings", [F("app/x.py", 1), F("app/x.py", 2), F("app/x.py", 3)], None),
    ("A", "case-k2", 0): ("completed_no_findings", [], None),
    ("A", "case-k2", 1): ("timed_out", [], "timed out after 120 s"),
    ("A", "case-v1", 0): ("completed_findings", [F("app/core.py", 12, "high", "still broken")], None),
    ("A", "case-v1", 1): ("completed_no_findings", [], None),
    ("A", "case-v1", 2): ("completed_no_findings", [], None),
    ("A", "case-u1", 0): ("completed_findings", [F("app/u.py", 3, "low", "unvalidated but right")], None),
    ("B", "case-a1", 0): ("completed_findings", [F("app/core.py", 11, "high", "parse_key is off"), F("app/core.py", 12, None, "again")], None),
}
for _case in MIRRORED:
    for _rep in range(REPS):
        RUNS[("A", mirror_id(_case), _rep)] = ("completed_no_findings", [], None)
for _case in CASE_IDS:
    for _rep in range(REPS):
        if _case != "case-a3" or _rep != 2:  # B never ran case-a3 repetition 2
            RUNS.setdefault(("B", _case, _rep), ("completed_no_findings", [], None))
RUNS[("B", "case-a2", 1)] = ("invalid", [], "neither a finding nor NO_ISSUES")

EXPERIMENT = {
    "corpus": "corpus", "repeats": REPS, "seed": 0, "rename": True,
    "condition": [
        {"name": "A", "reviewer": {"kind": "command", "command": ["./review.sh"]}, "context": "diff"},
        {"name": "B", "reviewer": {"kind": "openai", "model": XSS_MODEL}, "context": "files"},
    ],
}


def write_corpus(out: Path) -> Path:
    with CorpusWriter(out) as writer:
        for cid, (paths, defects, status, variant_of) in CASES.items():
            gold_defects = [
                Defect(defect_id=f"{cid}-d{i + 1}", defect_class="fix_reversal" if i == 0 else "off_by_one",
                       severity=sev, locations=[Location(path=p, start_line=s, end_line=e, symbol="parse")],
                       symbols=["parse", "parse_key"], removed_identifiers=["parse_key"])
                for i, (p, s, e, sev) in enumerate(defects)
            ]  # fmt: skip
            case = Case(case_id=cid, base="0" * 40, title="Update module", patch=f"patches/{cid}.diff", paths=paths,
                        language="python")
            gold = GoldRecord(case_id=cid, stratum="control" if not defects else "fix_reversal",
                              expect_finding=bool(defects), variant_of=variant_of, defects=gold_defects,
                              provenance=Provenance(), validation=Validation(status=status))
            for record in paired(case, gold) if cid in MIRRORED else [(case, gold)]:
                writer.add(*record, b"")
        writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/nowhere", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="test", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=len(CASE_IDS), by_stratum={"fix_reversal": 5, "control": 2, "mirror": 2}, matched_commits=9,
                                dropped={"no_source_change": 1, "too_large": 1}),
        ))  # fmt: skip
    return out


def write_runs(out: Path, corpus: Path) -> Path:
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    out.mkdir(parents=True)
    store = RunStore(out / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha, "experiment": json.dumps(EXPERIMENT)})
    for (condition, case_id, rep), (state, findings, error) in RUNS.items():
        raw = "\n".join(f.raw for f in findings) or ("NO_ISSUES" if state == "completed_no_findings" else None)
        store.record(RunRow(
            run_id=f"{condition}-{case_id}-{rep}", case_id=case_id, condition=condition, repetition=rep,
            variant="rename" if case_id == "case-v1" else "original", state=state,
            started_at="2026-01-01T00:00:00.000+00:00", ended_at="2026-01-01T00:00:01.000+00:00",
            latency_s=0.5 + rep + (0.25 if condition == "B" else 0), attempts=1, cached=False,
            model_requested="m", model_returned="m", params={}, prompt_sha256="p" * 64, guidance_sha256=None,
            gold_sha256=gold_sha, tool_version="test", tokens_in=10, tokens_out=5, raw_output=raw, unparsed=[],
            error=error, cache_key=f"k-{condition}-{case_id}-{rep}", findings=findings,
        ), None)  # fmt: skip
    store.close()
    return out


@pytest.fixture(scope="module")
def rundir(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("report")
    return write_runs(base / "runs", write_corpus(base / "corpus"))
