"""Every metric computed by hand on a small known store (corpus and runs written for real)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
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
from reviewbench.score import ScoreOptions, score_run
from reviewbench.store.corpus import CorpusWriter
from reviewbench.store.runs import RunRow, RunStore


def _defect(cid, n, path, start, end, severity=None, symbols=()):
    return Defect(defect_id=f"{cid}-d{n}", defect_class="fix_reversal" if n == 1 else "mutation_x",
                  severity=severity, locations=[Location(path=path, start_line=start, end_line=end)],
                  symbols=list(symbols))  # fmt: skip


CASES = {
    # case id: (paths, defects, status, variant_of)
    "d1": (["app/a.py"], [("app/a.py", 10, 12, "high", ["parse"])], "observed", None),
    "d2": (["app/b.py", "app/c.py"], [("app/b.py", 5, 5, "med", ["load"]), ("app/c.py", 20, 22, None, [])],
           "observed", None),  # fmt: skip
    "d3": (["app/e.py"], [("app/e.py", 1, 1, None, [])], "not_observed", None),
    "k1": (["app/x.py"], [], "not_observed", None),
    "k2": (["app/y.py"], [], "not_observed", None),
    "k3": (["app/z.py"], [], "not_observed", None),
    "k4": (["app/w.py"], [], "observed", None),  # a control whose tests fail: not valid
    "v1": (["app/a.py"], [("app/a.py", 11, 13, "high", ["parse"])], "observed", "d1"),
}


@pytest.fixture
def corpus(tmp_path) -> Path:
    out = tmp_path / "corpus"
    writer = CorpusWriter(out)
    with writer:
        for cid, (paths, defects, status, variant_of) in CASES.items():
            writer.add(
                Case(case_id=cid, base="0" * 40, title="Update module", patch=f"patches/{cid}.diff",
                     paths=paths, language="python"),
                GoldRecord(
                    case_id=cid, stratum="control" if not defects else "fix_reversal",
                    expect_finding=bool(defects), variant_of=variant_of,
                    defects=[_defect(cid, i + 1, *d) for i, d in enumerate(defects)],
                    provenance=Provenance(), validation=Validation(status=status),
                ),
                b"",
            )  # fmt: skip
        writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/nowhere", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="test", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=len(CASES), by_stratum={}, matched_commits=0, dropped={}),
        ))  # fmt: skip
    return out


def F(path, line, severity=None, claim="claim"):
    return Finding(path=path, line=line, severity=severity, claim=claim, raw=f"{path}:{line} {claim}")


# Condition A's runs: (case, repetition) -> (state, findings, raw text)
RUNS_A = {
    ("d1", 0): ("completed_findings", [F("app/a.py", 11, "high")], "app/a.py:11 high parse fails"),
    ("d1", 1): ("completed_findings", [F("app/a.py", 30, "low"), F("app/a.py", 9, "high")], "two findings"),
    ("d2", 0): ("completed_findings", [F("app/b.py", 5, "low"), F("app/b.py", 6, "med"), F("app/c.py", None)],
                "app/c.py: loader issue"),  # fmt: skip
    ("d2", 1): ("failed", [], None),
    ("d3", 0): ("completed_no_findings", [], "NO_ISSUES"),
    ("k1", 0): ("completed_no_findings", [], "NO_ISSUES"),
    ("k1", 1): ("completed_findings", [F("app/x.py", 1)], "x"),
    ("k2", 0): ("completed_findings", [F("app/y.py", 1), F("app/y.py", 2), F("app/y.py", 3)], "y"),
    ("k2", 1): ("timed_out", [], None),
    ("k3", 0): ("completed_no_findings", [], "NO_ISSUES"),
    ("k3", 1): ("completed_no_findings", [], "NO_ISSUES"),
    ("k4", 0): ("completed_findings", [F("app/w.py", 1)], "w"),
    ("v1", 0): ("completed_findings", [F("app/a.py", 12, "high")], "a"),
    ("v1", 1): ("completed_no_findings", [], "NO_ISSUES"),
}


def _row(condition, case_id, rep, state, findings, raw, gold_sha):
    return RunRow(
        run_id=f"{condition}-{case_id}-{rep}", case_id=case_id, condition=condition, repetition=rep,
        variant="rename" if case_id.startswith("v") else "original", state=state,
        started_at="2026-01-01T00:00:00.000+00:00", ended_at="2026-01-01T00:00:01.000+00:00",
        latency_s=1.0 + rep, attempts=1, cached=False, model_requested="m", model_returned="m",
        params={}, prompt_sha256="p" * 64, guidance_sha256=None, gold_sha256=gold_sha,
        tool_version="test", tokens_in=10, tokens_out=5, raw_output=raw, unparsed=[], error=None,
        cache_key=f"k-{condition}-{case_id}-{rep}", findings=findings,
    )  # fmt: skip


@pytest.fixture
def rundir(tmp_path, corpus) -> Path:
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    out = tmp_path / "runs"
    out.mkdir()
    store = RunStore(out / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha,
                    "experiment": json.dumps({"condition": [{"name": "A"}, {"name": "B"}]})})  # fmt: skip
    for (case_id, rep), (state, findings, raw) in RUNS_A.items():
        store.record(_row("A", case_id, rep, state, findings, raw, gold_sha), None)
    for case_id in CASES:
        for rep in (0, 1):
            store.record(_row("B", case_id, rep, "completed_no_findings", [], "NO_ISSUES", gold_sha), None)
    store.close()
    return out


def _m(result, condition="A"):
    return result["conditions"][condition]["metrics"]


def _frac(metric):
    return metric["num"], metric["den"]


def test_every_metric_by_hand(rundir):
    result = score_run(rundir, ScoreOptions(bootstrap=1000))
    m = _m(result)
    assert _frac(m["defect_recall"]) == (3, 4)  # d1 r0, d1 r1 (1 each), d2 r0 (1 of 2)
    assert m["defect_recall"]["value"] == 0.75
    assert _frac(m["recall_any"]) == (2, 3)  # d1#1 yes, d2#1 yes (r0), d2#2 never
    assert _frac(m["recall_all"]) == (2, 3)
    assert _frac(m["file_recall"]) == (3, 3)
    assert _frac(m["symbol_recall"]) == (1, 3)  # "parse" in d1 r0; "loader" is not "load"
    assert _frac(m["localisation"]) == (3, 4)  # d2's c.py named by a file-level finding, not found
    assert _frac(m["silence_rate"]) == (0, 3)  # the failed run d2 r1 is not silence
    assert _frac(m["false_alarm_rate"]) == (2, 5)  # k2 r1 timed out: not a clean run; k4 invalid
    assert _frac(m["fp_per_clean_case"]) == (4, 5)
    assert m["fp_per_clean_case"]["distribution"] == {"0": 3, "1": 1, "2": 0, "3+": 1, "median": 0, "max": 3,
                                                      "runs": 5}  # fmt: skip
    assert _frac(m["precision"]) == (3, 8)  # 3 TP; FP: a.py:30 + 4 on controls
    assert _frac(m["duplicate_rate"]) == (1, 9)  # b.py:6 duplicates b.py:5
    assert _frac(m["severity_match"]) == (2, 3)  # d2's b.py: low claimed, med gold
    assert _frac(m["rename_stability"]) == (1, 2)  # v1 found in r0, silent in r1
    assert _frac(m["flag_coverage"]) == (7, 11)
    assert _frac(m["completion"]) == (10, 12)
    assert m["completion"]["states"] == {"completed_findings": 6, "completed_no_findings": 4,
                                         "failed": 1, "timed_out": 1}  # fmt: skip
    assert m["latency_s"]["value"] == 1.5 and m["latency_s"]["max"] == 2.0
    assert m["tokens"]["in"] == 120 and m["tokens"]["out"] == 60
    for name in ("defect_recall", "precision", "false_alarm_rate"):
        assert m[name]["lo"] <= m[name]["value"] <= m[name]["hi"]


def test_breakdowns_by_class_severity_and_stratum(rundir):
    result = score_run(rundir, ScoreOptions(bootstrap=200))
    breakdown = result["conditions"]["A"]["breakdown"]
    assert breakdown["defect_class"]["fix_reversal"]["defect_recall"] == {"value": 1.0, "num": 3, "den": 3}
    assert breakdown["defect_class"]["mutation_x"]["defect_recall"] == {"value": 0.0, "num": 0, "den": 1}
    assert breakdown["severity"]["high"]["defect_recall"]["den"] == 2
    assert breakdown["severity"]["unrated"]["defect_recall"]["num"] == 0
    assert breakdown["stratum"]["control"]["false_alarm_rate"] == {"value": 0.4, "num": 2, "den": 5}


def test_unvalidated_cases_are_out_unless_widened(rundir):
    narrow = score_run(rundir, ScoreOptions(bootstrap=200))
    wide = score_run(rundir, ScoreOptions(bootstrap=200, include_unvalidated=True))
    assert narrow["corpus"]["eligible_defect_cases"] == 2 and narrow["corpus"]["eligible_controls"] == 3
    assert wide["corpus"]["eligible_defect_cases"] == 3 and wide["corpus"]["eligible_controls"] == 4
    assert _frac(_m(wide)["defect_recall"]) == (3, 5)  # d3's miss now counts
    assert _frac(_m(wide)["false_alarm_rate"]) == (3, 6)  # and k4's alarm


def test_null_values_when_the_denominator_is_zero(rundir):
    m = _m(score_run(rundir, ScoreOptions(bootstrap=200)), "B")
    assert m["precision"] == {"value": None, "num": 0, "den": 0, "lo": None, "hi": None}
    assert m["severity_match"]["value"] is None and m["rename_stability"]["value"] is None
    assert _frac(m["silence_rate"]) == (4, 4)


def test_paired_difference_and_exact_mcnemar(rundir):
    result = score_run(rundir, ScoreOptions(bootstrap=500))
    [recall] = [c for c in result["comparisons"] if c["metric"] == "defect_recall"]
    # A: 3/4; B on the same cases: 0/6 (B also completed d2 r1).
    assert recall["a"] == "A" and recall["b"] == "B" and recall["diff"] == 0.75
    assert recall["lo"] <= recall["diff"] <= recall["hi"]
    # Pairs both completed: A alone found 3 (d1 r0, d1 r1, d2#1 r0), B alone none.
    assert recall["mcnemar_p"] == pytest.approx(0.25)


def test_bootstrap_is_seeded_and_recorded(rundir):
    one = score_run(rundir, ScoreOptions(bootstrap=300, seed=5))
    two = score_run(rundir, ScoreOptions(bootstrap=300, seed=5))
    assert one == two
    assert one["analysis"]["bootstrap"] == {"resamples": 300, "seed": 5, "level": 0.95,
                                            "unit": "case (rename variants with their original)"}  # fmt: skip


def test_gates_veto_tiers_and_what_is_not_permitted(rundir, tmp_path):
    default = score_run(rundir, ScoreOptions(bootstrap=200))["conditions"]["A"]["decision"]
    assert default["authority"] == "insufficient evidence"  # 2 valid defect cases < 10
    assert "gating a pull request" in default["not_permitted"]
    gates = tmp_path / "gates.toml"
    base = ("min_defect_cases = 1\nmax_interval_width = 1.0\nnever_permitted = [\"merge rights\"]\n"
            "[[tier]]\nname = \"second_pass\"\nwhen = [{ metric = \"defect_recall\", op = \">\", value = 0.6 },"
            " { metric = \"silence_rate\", op = \"<\", value = 0.3 }]\npermitted = [\"attention list\"]\n"
            "not_permitted = [\"approval\"]\n"
            "[fallback]\nname = \"none\"\npermitted = [\"opinion\"]\nnot_permitted = [\"gating\"]\n")  # fmt: skip
    gates.write_text(base)
    decision = score_run(rundir, ScoreOptions(bootstrap=200, gates=gates))["conditions"]["A"]["decision"]
    assert decision["tier"] == "second_pass" and decision["permitted"] == ["attention list"]
    assert decision["not_permitted"] == ["approval", "merge rights"]
    assert all(c["passed"] for c in decision["gates"]["second_pass"])
    silent = score_run(rundir, ScoreOptions(bootstrap=200, gates=gates))["conditions"]["B"]["decision"]
    assert silent["tier"] == "none" and silent["not_permitted"] == ["gating", "attention list", "merge rights"]
    # A veto (flags on most files: A's flag coverage is 7/11) overrides the tier.
    gates.write_text(base + "[[veto]]\nname = \"noisy\"\nwhen = [{ metric = \"flag_coverage\", op = \">\", "
                     "value = 0.5 }]\nauthority = \"nothing until the prompt is tightened\"\n"
                     "not_permitted = [\"cost savings\"]\n")  # fmt: skip
    vetoed = score_run(rundir, ScoreOptions(bootstrap=200, gates=gates))["conditions"]["A"]["decision"]
    assert vetoed["authority"] == "nothing until the prompt is tightened"
    assert "cost savings" in vetoed["not_permitted"] and "attention list" in vetoed["not_permitted"]


def test_cli_json_contract_and_scoreboard(rundir):
    proc = subprocess.run([sys.executable, "-m", "reviewbench", "score", str(rundir), "--json",
                           "--bootstrap", "200"], capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) >= {"conditions", "comparisons", "corpus", "registration"}
    a = data["conditions"]["A"]
    assert set(a) >= {"metrics", "breakdown", "states", "decision"}
    assert set(a["decision"]) >= {"authority", "permitted", "not_permitted", "gates"}
    for metric in ("defect_recall", "recall_any", "recall_all", "file_recall", "symbol_recall", "localisation",
                   "silence_rate", "false_alarm_rate", "fp_per_clean_case", "precision", "duplicate_rate",
                   "severity_match", "rename_stability", "flag_coverage", "completion", "latency_s", "tokens"):
        assert {"value", "num", "den", "lo", "hi"} <= set(a["metrics"][metric]), metric  # fmt: skip
    assert {"a", "b", "metric", "diff", "lo", "hi", "mcnemar_p"} == set(data["comparisons"][0])
    board = subprocess.run([sys.executable, "-m", "reviewbench", "score", str(rundir), "--bootstrap", "200"],
                           capture_output=True, text=True).stdout  # fmt: skip
    for line in ("detection", "severity match", "false alarms", "rename-stable"):
        assert line in board
    assert "3/4" in board and "2/5" in board and "NOT permitted" in board


def test_changed_gold_is_refused(rundir, corpus):
    # A new version of the corpus (gold and corpus.json agree; see tests/hostile for a
    # hand-edited gold.jsonl alone).
    gold = corpus / "gold.jsonl"
    gold.write_text(gold.read_text() + "\n")
    meta = json.loads((corpus / "corpus.json").read_text())
    meta["gold_sha256"] = hashlib.sha256(gold.read_bytes()).hexdigest()
    (corpus / "corpus.json").write_text(json.dumps(meta))
    proc = subprocess.run([sys.executable, "-m", "reviewbench", "score", str(rundir)], capture_output=True, text=True)
    assert proc.returncode == 2 and "changed since these runs" in proc.stderr
