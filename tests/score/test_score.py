"""Every metric computed by hand on a small known store (corpus and runs written for real)."""

from __future__ import annotations

import hashlib
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
from reviewbench.score import ScoreOptions, score_run
from reviewbench.store.corpus import CorpusWriter
from reviewbench.store.runs import RunRow, RunStore

from ..conftest import run_cli
from .mirrors import mirror_id, paired

# What each enclosing symbol's fix removed: naming where (the symbol) is no evidence, naming
# what changed is.
REMOVED = {"parse": "header_len", "load": "skip_rows"}


def _defect(cid, n, path, start, end, severity=None, symbols=()):
    return Defect(defect_id=f"{cid}-d{n}", defect_class="fix_reversal" if n == 1 else "mutation_x",
                  severity=severity, locations=[Location(path=path, start_line=start, end_line=end)],
                  symbols=list(symbols), removed_identifiers=[REMOVED[s] for s in symbols])  # fmt: skip


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
# The valid fix reversals have mirrors (v1 uses d1's), so that naming them can identify them.
PAIRED = ("d1", "d2")
CASE_IDS = (*CASES, *(mirror_id(c) for c in PAIRED))


@pytest.fixture
def corpus(tmp_path) -> Path:
    out = tmp_path / "corpus"
    writer = CorpusWriter(out)
    with writer:
        for cid, (paths, defects, status, variant_of) in CASES.items():
            case = Case(case_id=cid, base="0" * 40, title="Update module", patch=f"patches/{cid}.diff",
                        paths=paths, language="python")
            gold = GoldRecord(
                case_id=cid, stratum="control" if not defects else "fix_reversal",
                expect_finding=bool(defects), variant_of=variant_of,
                defects=[_defect(cid, i + 1, *d) for i, d in enumerate(defects)],
                provenance=Provenance(), validation=Validation(status=status),
            )
            for record in paired(case, gold) if cid in PAIRED else [(case, gold)]:
                writer.add(*record, b"")
        writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/nowhere", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="test", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=len(CASE_IDS), by_stratum={}, matched_commits=0, dropped={}),
        ))  # fmt: skip
    return out


def F(path, line, severity=None, claim="claim"):
    return Finding(path=path, line=line, severity=severity, claim=claim, raw=f"{path}:{line} {claim}")


# Condition A's runs: (case, repetition) -> (state, findings, raw text)
RUNS_A = {
    ("d1", 0): ("completed_findings", [F("app/a.py", 11, "high", "parse mishandles header_len")],
                "app/a.py:11 high parse fails"),  # fmt: skip
    ("d1", 1): ("completed_findings", [F("app/a.py", 30, "low"), F("app/a.py", 9, "high")], "two findings"),
    ("d2", 0): ("completed_findings", [F("app/b.py", 5, "low"), F("app/b.py", 6, "med", "load drops a record at skip_rows"),
                                       F("app/c.py", None)], "app/c.py: loader issue"),  # fmt: skip
    ("d2", 1): ("failed", [], None),
    ("d3", 0): ("completed_no_findings", [], "NO_ISSUES"),
    ("k1", 0): ("completed_no_findings", [], "NO_ISSUES"),
    ("k1", 1): ("completed_findings", [F("app/x.py", 1)], "x"),
    ("k2", 0): ("completed_findings", [F("app/y.py", 1), F("app/y.py", 2), F("app/y.py", 3)], "y"),
    ("k2", 1): ("timed_out", [], None),
    ("k3", 0): ("completed_no_findings", [], "NO_ISSUES"),
    ("k3", 1): ("completed_no_findings", [], "NO_ISSUES"),
    ("k4", 0): ("completed_findings", [F("app/w.py", 1)], "w"),
    ("v1", 0): ("completed_findings", [F("app/a.py", 12, "high", "header_len is wrong here")], "a"),
    ("v1", 1): ("completed_no_findings", [], "NO_ISSUES"),
    # Silent on both mirrors: what A says naming d1 and d2 discriminates.
    **{(mirror_id(c), rep): ("completed_no_findings", [], "NO_ISSUES") for c in PAIRED for rep in (0, 1)},
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
    for case_id in CASE_IDS:
        for rep in (0, 1):
            store.record(_row("B", case_id, rep, "completed_no_findings", [], "NO_ISSUES", gold_sha), None)
    store.close()
    return out


def _score(rundir, options):
    """The JSON document ``score --json`` prints, from the typed result."""
    return score_run(rundir, options).as_json()


def _m(result, condition="A"):
    return result["conditions"][condition]["metrics"]


def _frac(metric):
    return metric["num"], metric["den"]


def test_every_metric_by_hand(rundir):
    result = _score(rundir, ScoreOptions(bootstrap=1000))
    m = _m(result)
    # Located: d1 r0, d1 r1, d2#1 r0. Named (the claim names a gold symbol): d1 r0
    # ("parse") and d2#1 r0 ("load", on the second finding at b.py, which is credited
    # ahead of the unidentified first one). Both identified: A said nothing on the mirrors.
    assert _frac(m["defect_recall"]) == (2, 4)
    assert _frac(m["named_recall"]) == (2, 4)
    assert _frac(m["discriminating_recall"]) == (2, 4)  # every completed run's mirror run completed
    # Runs identifying every defect of their case, beside a silent mirror run: d1 r0 of
    # d1 r0, d1 r1, d2 r0 (d2#2 never identified); the variant v1 is no pair of its own.
    assert _frac(m["pair_accuracy"]) == (1, 3)
    assert _frac(m["located_recall"]) == (3, 4)
    assert m["defect_recall"]["value"] == 0.5
    assert _frac(m["recall_any"]) == (2, 3)  # d1#1 yes (r0), d2#1 yes (r0), d2#2 never
    assert _frac(m["recall_all"]) == (1, 3)  # d2#1: its only completed repetition
    assert _frac(m["file_recall"]) == (3, 3)
    assert _frac(m["symbol_recall"]) == (1, 3)  # "parse" in d1 r0; "loader" is not "load"
    assert _frac(m["localisation"]) == (3, 4)  # d2's c.py named by a file-level finding, not located
    assert _frac(m["silence_rate"]) == (0, 3)  # the failed run d2 r1 is not silence
    # Clean runs: k1, k3 x 2, k2 r0 and the four silent mirror runs (k2 r1 timed out: not a
    # clean run; k4 invalid).
    assert _frac(m["false_alarm_rate"]) == (2, 9)
    assert _frac(m["fp_per_clean_case"]) == (4, 9)
    # Sorted 0 0 0 0 0 0 0 1 3: the inclusive quartiles sit at 0-based positions 2 and 6, both 0.
    assert m["fp_per_clean_case"]["distribution"] == {"0": 7, "1": 1, "2": 0, "3+": 1, "median": 0, "q1": 0,
                                                      "q3": 0, "max": 3, "runs": 9}  # fmt: skip
    assert _frac(m["precision"]) == (2, 8)  # 2 identified of 3 credited + 5 FP (a.py:30, 4 on controls)
    assert _frac(m["located_precision"]) == (3, 8)
    assert _frac(m["duplicate_rate"]) == (1, 9)  # b.py:5 duplicates the credited b.py:6
    assert _frac(m["severity_match"]) == (2, 2)  # identified defects only
    assert _frac(m["rename_stability"]) == (1, 1)  # v1 r0 identified where d1 r0 was
    # Non-gold changed files: none on the defect cases (their files are all gold); one
    # per control run (k1 r1 and k2 r0 flag theirs), one per d1 mirror run (a.py) and two
    # per d2 mirror run (b.py, c.py), none flagged.
    assert _frac(m["flag_coverage"]) == (2, 11)
    assert _frac(m["completion"]) == (14, 16)
    assert m["completion"]["states"] == {"completed_findings": 6, "completed_no_findings": 8,
                                         "failed": 1, "timed_out": 1}  # fmt: skip
    # Seed figures, over every run of the original defect cases (the failed one included).
    assert _frac(m["file_mention_rate"]) == (2, 4)  # a.py in d1 r0's output, c.py in d2 r0's
    assert _frac(m["symbol_mention_rate"]) == (0, 4)  # no removed identifiers in this gold
    assert _frac(m["severity_match_all"]) == (2, 4)  # (run, defect) pairs with a gold severity
    assert _frac(m["weighted_points"]) == (5, 10)  # d1 high 3 + d2#1 med 2, of 2 x (3 + 2)
    assert _frac(m["rename_stable_all"]) == (1, 2)
    assert m["latency_s"]["value"] == 1.0 and m["latency_s"]["min"] == 1.0 and m["latency_s"]["max"] == 2.0
    assert m["tokens"]["in"] == 160 and m["tokens"]["out"] == 80  # 16 runs in the analysis
    for name in ("defect_recall", "precision", "false_alarm_rate"):
        assert m[name]["lo"] <= m[name]["value"] <= m[name]["hi"]
    # End to end: the failed d2 r1 misses both its defects, the timed-out k2 r1 is a false alarm.
    e2e = result["conditions"]["A"]["end_to_end"]["metrics"]
    assert _frac(e2e["defect_recall"]) == (2, 6) and _frac(e2e["located_recall"]) == (3, 6)
    assert _frac(e2e["discriminating_recall"]) == (2, 6) and _frac(e2e["pair_accuracy"]) == (1, 4)
    assert _frac(e2e["false_alarm_rate"]) == (3, 10)
    assert _frac(e2e["file_recall"]) == (3, 4)
    assert _frac(e2e["silence_rate"]) == (0, 3)  # a missing review is not silence either
    assert e2e["file_mention_rate"] == m["file_mention_rate"]


def test_breakdowns_by_class_severity_and_stratum(rundir):
    result = _score(rundir, ScoreOptions(bootstrap=200))
    breakdown = result["conditions"]["A"]["breakdown"]
    assert breakdown["defect_class"]["fix_reversal"]["defect_recall"] == {"value": 0.666667, "num": 2, "den": 3}
    assert breakdown["defect_class"]["mutation_x"]["defect_recall"] == {"value": 0.0, "num": 0, "den": 1}
    assert breakdown["severity"]["high"]["defect_recall"]["den"] == 2
    assert breakdown["severity"]["unrated"]["defect_recall"]["num"] == 0
    assert breakdown["stratum"]["control"]["false_alarm_rate"] == {"value": 0.4, "num": 2, "den": 5}
    assert breakdown["stratum"]["mirror"]["false_alarm_rate"] == {"value": 0.0, "num": 0, "den": 4}


def test_unvalidated_cases_are_out_unless_widened(rundir):
    narrow = _score(rundir, ScoreOptions(bootstrap=200))
    wide = _score(rundir, ScoreOptions(bootstrap=200, include_unvalidated=True))
    # Clean cases: k1-k3 and the two mirrors; widened, k4 too.
    assert narrow["corpus"]["eligible_defect_cases"] == 2 and narrow["corpus"]["eligible_controls"] == 5
    assert wide["corpus"]["eligible_defect_cases"] == 3 and wide["corpus"]["eligible_controls"] == 6
    assert narrow["corpus"]["eligible_mirrors"] == wide["corpus"]["eligible_mirrors"] == 2
    assert _frac(_m(wide)["defect_recall"]) == (2, 5)  # d3's miss now counts
    assert _frac(_m(wide)["false_alarm_rate"]) == (3, 10)  # and k4's alarm


def test_null_values_when_the_denominator_is_zero(rundir):
    m = _m(_score(rundir, ScoreOptions(bootstrap=200)), "B")
    assert {k: m["precision"][k] for k in ("value", "num", "den", "lo", "hi")} == {
        "value": None, "num": 0, "den": 0, "lo": None, "hi": None}
    assert m["severity_match"]["value"] is None and m["rename_stability"]["value"] is None
    assert _frac(m["silence_rate"]) == (4, 4)


def test_paired_difference_and_exact_mcnemar(rundir):
    result = _score(rundir, ScoreOptions(bootstrap=500))
    [recall] = [c for c in result["comparisons"] if c["metric"] == "defect_recall" and c["analysis"] == "completed"]
    # A: 2/4; B on the same cases: 0/6 (B also completed d2 r1).
    assert recall["a"] == "A" and recall["b"] == "B" and recall["diff"] == 0.5
    assert recall["lo"] <= recall["diff"] <= recall["hi"]
    # Pairs both completed: A alone identified 2 (d1 r0, d2#1 r0), B alone none.
    assert recall["mcnemar_p"] == pytest.approx(0.5)


def test_bootstrap_is_seeded_and_recorded(rundir):
    one = _score(rundir, ScoreOptions(bootstrap=300, seed=5))
    two = _score(rundir, ScoreOptions(bootstrap=300, seed=5))
    assert one == two
    assert one["analysis"]["bootstrap"] == {"resamples": 300, "seed": 5, "level": 0.95,
                                            "unit": "case (rename variants with their original)"}  # fmt: skip


def _gates(threshold, extra=""):
    return ("analysis = \"completed\"\nmin_defect_cases = 1\nmin_controls = 1\nmax_interval_width = 1.0\n"
            "never_permitted = [\"merge rights\"]\n"
            f"[[tier]]\nname = \"second_pass\"\nwhen = [{{ metric = \"defect_recall\", op = \">\", value = {threshold} }},"
            " { metric = \"silence_rate\", op = \"<\", value = 0.3 }]\npermitted = [\"attention list\"]\n"
            "not_permitted = [\"approval\"]\n"
            "[fallback]\nname = \"none\"\npermitted = [\"opinion\"]\nnot_permitted = [\"gating\"]\n" + extra)  # fmt: skip


def test_gates_veto_tiers_and_what_is_not_permitted(rundir, tmp_path):
    default = _score(rundir, ScoreOptions(bootstrap=200))["conditions"]["A"]["decision"]
    assert default["authority"] == "insufficient evidence"  # 2 valid defect cases < 10
    assert default["status"] == "insufficient"
    assert "gating a pull request" in default["not_permitted"]
    gates = tmp_path / "gates.toml"
    # A's recall lies between 0.5 (identified) and 0.75 (located): a gate at 0.4 passes.
    gates.write_text(_gates(0.4))
    decision = _score(rundir, ScoreOptions(bootstrap=200, gates=gates))["conditions"]["A"]["decision"]
    assert decision["tier"] == "second_pass" and decision["permitted"] == ["attention list"]
    assert decision["status"] == "granted" and decision["evidence"] == "automatic"
    assert decision["not_permitted"] == ["approval", "merge rights"]
    assert all(c["passed"] for c in decision["gates"]["second_pass"])
    silent = _score(rundir, ScoreOptions(bootstrap=200, gates=gates))["conditions"]["B"]["decision"]
    assert silent["tier"] == "none" and silent["not_permitted"] == ["gating", "attention list", "merge rights"]
    # A veto (flags on non-gold files: A's flag coverage is 2/11 = 0.18) overrides the tier.
    gates.write_text(_gates(0.4, "[[veto]]\nname = \"noisy\"\nwhen = [{ metric = \"flag_coverage\", op = \">\", "
                     "value = 0.15 }]\nauthority = \"nothing until the prompt is tightened\"\n"
                     "not_permitted = [\"cost savings\"]\n"))  # fmt: skip
    vetoed = _score(rundir, ScoreOptions(bootstrap=200, gates=gates))["conditions"]["A"]["decision"]
    assert vetoed["authority"] == "nothing until the prompt is tightened" and vetoed["status"] == "vetoed"
    assert "cost savings" in vetoed["not_permitted"] and "attention list" in vetoed["not_permitted"]


def test_a_gate_between_the_bounds_needs_labels(rundir, tmp_path):
    gates = tmp_path / "gates.toml"
    gates.write_text(_gates(0.6))  # 0.5 identified < 0.6 < 0.75 located
    decision = _score(rundir, ScoreOptions(bootstrap=200, gates=gates))["conditions"]["A"]["decision"]
    assert decision["status"] == "needs_labels" and decision["tier"] == "none"
    [recall, _silence] = decision["gates"]["second_pass"]
    assert recall["passed"] is None and recall["observed"] == 0.5 and recall["upper"] == 0.75
    assert decision["labels_needed"] == 1  # d1 r1's a.py:9, located but not identified
    gates.write_text(_gates(0.8))  # above the located bound: fails outright
    decision = _score(rundir, ScoreOptions(bootstrap=200, gates=gates))["conditions"]["A"]["decision"]
    assert decision["status"] == "not_earned" and decision["tier"] == "none"
    assert decision["reason"] == "no tier's gates pass"


def test_too_few_controls_is_insufficient_evidence(rundir, tmp_path):
    gates = tmp_path / "gates.toml"
    gates.write_text(_gates(0.4).replace("min_controls = 1", "min_controls = 6"))
    decision = _score(rundir, ScoreOptions(bootstrap=200, gates=gates))["conditions"]["A"]["decision"]
    assert decision["status"] == "insufficient" and decision["authority"] == "insufficient evidence"
    assert decision["reason"] == "no valid controls (5 < 6 required)"  # k1-k3 and the two mirrors


def test_cli_json_contract_and_scoreboard(rundir):
    proc = run_cli("score", str(rundir), "--json", "--bootstrap", "200")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) >= {"conditions", "comparisons", "corpus", "registration"}
    a = data["conditions"]["A"]
    assert set(a) >= {"metrics", "breakdown", "states", "decision", "evidence", "end_to_end", "model_drift"}
    assert a["evidence"] == "automatic" and a["model_drift"] is None
    assert set(a["decision"]) >= {"authority", "permitted", "not_permitted", "gates", "status", "labels_needed"}
    assert data["registration"] is None
    for metric in ("defect_recall", "recall_any", "recall_all", "file_recall", "symbol_recall", "localisation",
                   "silence_rate", "false_alarm_rate", "fp_per_clean_case", "precision", "duplicate_rate",
                   "severity_match", "rename_stability", "flag_coverage", "completion", "latency_s", "tokens",
                   "located_recall", "located_precision", "file_mention_rate", "symbol_mention_rate",
                   "weighted_points"):
        assert {"value", "num", "den", "lo", "hi"} <= set(a["metrics"][metric]), metric  # fmt: skip
        assert {"value", "num", "den", "lo", "hi"} <= set(a["end_to_end"]["metrics"][metric]), metric
    # Complete pairs and the missingness pattern were added beside the difference (issue 32, item 10).
    assert {"a", "b", "analysis", "metric", "diff", "lo", "hi", "mcnemar_p", "exact", "pairs", "missing",
            "mcnemar_pairs"} == set(data["comparisons"][0])  # the first is defect_recall
    assert (rundir / "verdicts.jsonl").is_file()
    # Both outputs validate against the schemas generated from their records.
    from jsonschema import Draft202012Validator

    def schema(name):
        out = run_cli("schema", name)
        return Draft202012Validator(json.loads(out.stdout))

    schema("score").validate(data)
    verdicts = schema("verdicts")
    for line in (rundir / "verdicts.jsonl").read_text().splitlines():
        verdicts.validate(json.loads(line))
    board = run_cli("score", str(rundir), "--bootstrap", "200").stdout  # fmt: skip
    # The headline first: one row per condition, within 100 columns (issue 27, item 2).
    assert "reviewer  decision  " in board and "false alarms" in board and "completed" in board
    # ... the end-to-end figures the gates read: A's two runs with no review count against it.
    assert "2/6" in board and "3/10" in board and "NOT permitted" in board and "not registered" in board
    assert "5 clean cases (3 controls, 2 mirrors)" in " ".join(board.split())  # a mirror is no control
    assert "Paired, case by case" in board and "winner" not in board
    assert max(len(line) for line in board.splitlines()) <= 100
    assert "severity match" not in board  # every metric is behind --details
    details = run_cli("score", str(rundir), "--bootstrap", "200", "--details").stdout
    assert details.startswith(board.rsplit("every metric", 1)[0])  # the same headline, then the details
    for line in ("detection", "severity match", "false alarms", "rename-stable"):
        assert line in details
    assert "2/4" in details and "3/4" in details and "2/9" in details and "(upper bound)" in details
    # Identification is explained: naming counts only where the mirror's review was silent.
    assert "said nothing naming it on the defect's mirror" in " ".join(details.split())


def test_changed_gold_is_refused(rundir, corpus):
    # A new version of the corpus (gold and corpus.json agree; see tests/hostile for a
    # hand-edited gold.jsonl alone).
    gold = corpus / "gold.jsonl"
    gold.write_text(gold.read_text() + "\n")
    meta = json.loads((corpus / "corpus.json").read_text())
    meta["gold_sha256"] = hashlib.sha256(gold.read_bytes()).hexdigest()
    (corpus / "corpus.json").write_text(json.dumps(meta))
    proc = run_cli("score", str(rundir))
    assert proc.returncode == 2 and "changed since these runs" in proc.stderr
