"""Discriminating identification (issue 24): naming a defect earns automatic credit only when
the same condition said nothing naming it on the mirror. Every figure computed by hand on a
small known store (corpus and runs written for real)."""

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
from reviewbench.score import ScoreOptions, score_run
from reviewbench.store.corpus import CorpusWriter
from reviewbench.store.runs import RunStore

from .test_score import _row

# case id: (path, changed line range and enclosing symbol; pair id; validation)
CASES = {
    "d1": ("app/a.py", (10, 12, "parse"), "p1", "observed"),
    "d2": ("app/b.py", (5, 6, "load_rows"), "p2", "observed"),
    "d3": ("app/c.py", (3, 3, "render"), None, "observed"),  # unpaired: no mirror at all
    "d4": ("app/d.py", (7, 7, "flush"), "p4", "observed"),  # its mirror is not valid
    "m1": ("app/a.py", (9, 11, "parse"), "p1", "not_observed"),
    "m2": ("app/b.py", (5, 5, "load_rows"), "p2", "not_observed"),
    "m4": ("app/d.py", (7, 7, "flush"), "p4", "observed"),  # tests fail after its patch: invalid
    # The tests do not observe d5, so d5 is out, and so is its mirror, valid though it is:
    # an unpaired mirror is a clean case with a fix's shape, not a defect case's.
    "d5": ("app/e.py", (4, 9, "emit"), "p5", "not_observed"),
    "m5": ("app/e.py", (4, 9, "emit"), "p5", "not_observed"),
}
# What each pair's fix removed (the mirror's side of the diff has the same names).
REMOVED = {"p1": "header_row", "p2": "stop_index", None: "escape_html", "p4": "write_buffer", "p5": "emit_line"}


def _gold(cid: str) -> GoldRecord:
    path, (start, end, symbol), pair, status = CASES[cid]
    location = Location(path=path, start_line=start, end_line=end, symbol=symbol)
    mirror = cid.startswith("m")
    defects = [] if mirror else [Defect(defect_id=f"{cid}-d1", defect_class="fix_reversal", locations=[location],
                                        symbols=[symbol, REMOVED[pair]], removed_identifiers=[REMOVED[pair]])]  # fmt: skip
    return GoldRecord(case_id=cid, stratum="mirror" if mirror else "fix_reversal", expect_finding=not mirror,
                      pair_id=pair, changed=[location] if mirror else [], defects=defects,
                      provenance=Provenance(), validation=Validation(status=status))  # fmt: skip


@pytest.fixture
def corpus(tmp_path) -> Path:
    out = tmp_path / "corpus"
    with CorpusWriter(out) as writer:
        for cid, (path, *_rest) in CASES.items():
            writer.add(Case(case_id=cid, base="0" * 40, title="Update module", patch=f"patches/{cid}.diff",
                            paths=[path], language="python"), _gold(cid), b"")  # fmt: skip
        writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/nowhere", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="test", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=len(CASES), by_stratum={}, matched_commits=0, dropped={}),
        ))  # fmt: skip
    return out


def F(path, line, claim):
    return Finding(path=path, line=line, severity="med", claim=claim, raw=f"{path}:{line} {claim}")


def _style(cid: str) -> list[Finding]:
    """The namer probe's remark: the enclosing function, at the first changed line."""
    path, (start, _end, symbol), *_ = CASES[cid]
    return [F(path, start, f"`{symbol}` would read better with a docstring and type hints")]


def _quote(cid: str) -> list[Finding]:
    """The quoter probe's remark: a name the change touched, at the first changed line."""
    path, (start, _end, _symbol), pair, _ = CASES[cid]
    return [F(path, start, f"`{REMOVED[pair]}` is a vague name")]


EXPLAIN = {
    "d1": [F("app/a.py", 11, "parse drops header_row when the file ends without a newline")],
    "d2": [F("app/b.py", 5, "load_rows skips the last record: stop_index stops one short")],
    "d3": [F("app/c.py", 3, "render no longer calls escape_html: user text reaches the page")],
    "d4": [F("app/d.py", 7, "flush loses buffered bytes: write_buffer is never called")],
}
#: Condition -> (case, repetition) -> (state, findings)
RUNS: dict[str, dict[tuple[str, int], tuple[str, list[Finding]]]] = {
    # Explains every defect, silent on every mirror: except m2 in repetition 1, which failed.
    "explainer": {
        **{(c, r): ("completed_findings", EXPLAIN[c]) for c in ("d1", "d2", "d3", "d4") for r in (0, 1)},
        **{(c, r): ("completed_no_findings", []) for c in ("m1", "m2", "m4") for r in (0, 1)},
        ("m2", 1): ("failed", []),
    },
    # The same style remark on both sides of every pair: it names where, never what.
    "namer": {(c, r): ("completed_findings", _style(c)) for c in CASES for r in (0, 1)},
    # The same name of the change quoted on both sides of every pair.
    "quoter": {(c, r): ("completed_findings", _quote(c)) for c in CASES for r in (0, 1)},
    # Names the defect on the defect side, and remarks on other words at the mirrored lines
    # (as a quoter picking another changed name on the other side of a diff does).
    "two_faced": {
        **{(c, r): ("completed_findings", EXPLAIN[c]) for c in ("d1", "d2", "d3", "d4") for r in (0, 1)},
        **{(c, r): ("completed_findings", [F(CASES[c][0], CASES[c][1][0], "`tmp` is a vague name")])
           for c in ("m1", "m2", "m4") for r in (0, 1)},
    },
}


@pytest.fixture
def rundir(tmp_path, corpus) -> Path:
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    out = tmp_path / "runs"
    out.mkdir()
    store = RunStore(out / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha,
                    "experiment": json.dumps({"condition": [{"name": n} for n in RUNS]})})  # fmt: skip
    for condition, runs in RUNS.items():
        for (case_id, rep), (state, findings) in runs.items():
            raw = "\n".join(f.raw for f in findings) or "NO_ISSUES"
            store.record(_row(condition, case_id, rep, state, findings, raw, gold_sha), None)
    store.close()
    return out


def _frac(metrics, name):
    return metrics[name]["num"], metrics[name]["den"]


def test_a_reviewer_that_explains_each_defect_and_is_silent_on_mirrors_gets_its_planned_figures(rundir):
    result = score_run(rundir, ScoreOptions(bootstrap=200)).as_json()
    m = result["conditions"]["explainer"]["metrics"]
    # Valid defect cases d1..d4 (8 runs, 8 (run, defect) pairs); every claim names what
    # its defect's fix removed. Discriminating where the mirror was reviewed and said nothing:
    # d1 r0, d1 r1, d2 r0 (m2 r1 failed: no evidence); d3 has no mirror, d4's is invalid.
    assert _frac(m, "named_recall") == (8, 8)
    assert _frac(m, "discriminating_recall") == (3, 3)
    assert _frac(m, "defect_recall") == (3, 8)
    assert _frac(m, "pair_accuracy") == (3, 3)
    # Clean cases: m1 and m2 (m4 is invalid, m5's defect case is); m2 r1 failed, out of the
    # completed analysis.
    assert _frac(m, "false_alarm_rate") == (0, 3)
    assert result["corpus"]["eligible_controls"] == result["corpus"]["eligible_mirrors"] == 2
    assert _frac(m, "precision") == (3, 8)  # 3 identified of 8 credited findings, no false positive
    e2e = result["conditions"]["explainer"]["end_to_end"]["metrics"]
    # End to end the missing m2 r1 review leaves d2 r1's pair undecided in the reviewer's
    # disfavour: a pair it did not tell apart, and a false alarm on the clean side.
    assert _frac(e2e, "discriminating_recall") == (3, 4)
    assert _frac(e2e, "pair_accuracy") == (3, 4)
    assert _frac(e2e, "false_alarm_rate") == (1, 4)


def test_a_namer_names_nothing_and_identifies_nothing(rundir):
    m = score_run(rundir, ScoreOptions(bootstrap=200)).as_json()["conditions"]["namer"]["metrics"]
    assert _frac(m, "named_recall") == (0, 8)  # the enclosing function says where, not what
    assert _frac(m, "discriminating_recall") == (0, 4) and _frac(m, "defect_recall") == (0, 8)
    assert _frac(m, "located_recall") == (8, 8)
    assert _frac(m, "precision") == (0, 12)  # 8 located, 4 false positives on the mirrors


def test_a_quoter_on_both_sides_of_every_pair_identifies_nothing(rundir):
    result = score_run(rundir, ScoreOptions(bootstrap=200)).as_json()
    m = result["conditions"]["quoter"]["metrics"]
    assert _frac(m, "named_recall") == (8, 8)  # naming: the diagnostic it games
    assert _frac(m, "discriminating_recall") == (0, 4)  # d1, d2 x 2 repetitions
    assert _frac(m, "defect_recall") == (0, 8)
    assert _frac(m, "pair_accuracy") == (0, 4)
    assert _frac(m, "false_alarm_rate") == (4, 4)
    assert _frac(m, "precision") == (0, 12)  # 8 located, 4 false positives on the mirrors


def test_verdicts_record_named_and_discriminating(rundir):
    score_run(rundir, ScoreOptions(bootstrap=100))
    rows = [json.loads(line) for line in (rundir / "verdicts.jsonl").read_text().splitlines()]
    by_run = {r["run_id"]: r for r in rows if r["index"] == 0}
    assert (by_run["explainer-d1-0"]["named"], by_run["explainer-d1-0"]["discriminating"]) == (True, True)
    assert by_run["explainer-d1-0"]["identified"] is True
    assert by_run["explainer-d2-1"]["discriminating"] is None  # its mirror run failed
    assert by_run["explainer-d3-0"]["discriminating"] is None  # no mirror
    assert by_run["explainer-d4-0"]["discriminating"] is None  # an invalid mirror is no evidence
    assert by_run["quoter-d1-0"]["discriminating"] is False and by_run["quoter-d1-0"]["identified"] is False
    assert by_run["quoter-m1-0"]["false_positive"] is True
    assert by_run["namer-d1-0"]["named"] is False and by_run["namer-d1-0"]["discriminating"] is None


GRANT = ('analysis = "completed"\nmin_defect_cases = 1\nmin_controls = 1\nmax_interval_width = 1.0\n'
         '[[tier]]\nname = "triage"\nwhen = [{ metric = "discriminating_recall", op = ">=", value = 0.5 }]\n'
         'permitted = ["triage"]\n[fallback]\nname = "none"\n')  # fmt: skip


def _audit(corpus: Path, sound: bool):
    from reviewbench.score.audit import Audit, Fraction, ProbeFigures, ShapeFigures

    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    zero = Fraction(num=0, den=4)
    audit = Audit(gold_sha256=gold_sha, probes={"namer": ProbeFigures(named=zero, discriminating=zero, false_alarms=zero)},
                  shape=ShapeFigures(auc=0.9 if not sound else 0.5, best_feature="removed", best_feature_auc=0.9,
                                     defect_cases=4, clean_cases=3),
                  sound=sound, reasons=[] if sound else ["diff shape separates defect cases from clean ones"])  # fmt: skip
    (corpus / "audit.json").write_text(audit.model_dump_json())


@pytest.mark.parametrize("sound", [True, False])
def test_no_tier_rests_on_automatic_evidence_over_a_corpus_whose_audit_is_not_sound(rundir, corpus, tmp_path, sound):
    gates = tmp_path / "gates.toml"
    gates.write_text(GRANT)
    _audit(corpus, sound)
    result = score_run(rundir, ScoreOptions(bootstrap=200, gates=gates)).as_json()
    decision = result["conditions"]["explainer"]["decision"]
    assert result["analysis"]["audit"]["sound"] is sound
    if sound:
        assert (decision["status"], decision["tier"]) == ("granted", "triage")
    else:
        assert decision["status"] == "needs_labels" and "not sound" in decision["reason"]
    # The recorded "sound" is re-checked before the grant; "not sound" is taken as written.
    assert result["analysis"]["audit"]["source"] == ("re-run by score" if sound else "recorded in audit.json")
    # An audit of other gold is not this corpus's: it is ignored, and the audit re-run
    # (sound here: the hand-written patches are empty, so no probe speaks and shape is flat).
    (corpus / "audit.json").write_text((corpus / "audit.json").read_text().replace('"gold_sha256":"', '"gold_sha256":"0'))
    again = score_run(rundir, ScoreOptions(bootstrap=100, gates=gates)).as_json()
    assert again["analysis"]["audit"]["source"] == "re-run by score" and again["analysis"]["audit"]["sound"]
    assert again["conditions"]["explainer"]["decision"]["status"] == "granted"


def test_any_remark_at_the_mirrored_lines_is_equivalent_whatever_its_words(rundir):
    m = score_run(rundir, ScoreOptions(bootstrap=100)).as_json()["conditions"]["two_faced"]["metrics"]
    assert _frac(m, "named_recall") == (8, 8)
    assert _frac(m, "discriminating_recall") == (0, 4) and _frac(m, "defect_recall") == (0, 8)
    assert _frac(m, "false_alarm_rate") == (4, 4)


def _shaped_patch(cid: str) -> bytes:
    """A defect case removes three lines, its mirror adds them back: diff shape alone tells
    the two apart (the audit's shape AUC is 1.0)."""
    path, (start, _end, _symbol), *_ = CASES[cid]
    lines = ["    check()", "    check()", "    check()"]
    sign, old, new = ("-", 3, 0) if not cid.startswith("m") else ("+", 0, 3)
    body = "\n".join(f"{sign}{line}" for line in lines)
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -{start},{old + 1} +{start},{new + 1} @@\n"
            f" def f():\n{body}\n").encode()


@pytest.mark.parametrize("recorded", ["forged_sound", "absent"])
def test_a_grant_on_automatic_evidence_re_runs_the_audit_rather_than_trust_a_file(tmp_path, recorded):
    """``audit.json`` lies in the corpus, which may come from anyone: a file claiming "sound"
    (or none at all) is re-checked by running the audit before any tier rests on automatic
    evidence."""
    corpus = tmp_path / "corpus"
    with CorpusWriter(corpus) as writer:
        for cid, (path, *_rest) in CASES.items():
            writer.add(Case(case_id=cid, base="0" * 40, title="Update module", patch=f"patches/{cid}.diff",
                            paths=[path], language="python"), _gold(cid), _shaped_patch(cid))  # fmt: skip
        writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/nowhere", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="test", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=len(CASES), by_stratum={}, matched_commits=0, dropped={}),
        ))  # fmt: skip
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    rundir = tmp_path / "runs"
    rundir.mkdir()
    store = RunStore(rundir / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha,
                    "experiment": json.dumps({"condition": [{"name": "explainer"}]})})  # fmt: skip
    for (case_id, rep), (state, findings) in RUNS["explainer"].items():
        raw = "\n".join(f.raw for f in findings) or "NO_ISSUES"
        store.record(_row("explainer", case_id, rep, state, findings, raw, gold_sha), None)
    store.close()
    if recorded == "forged_sound":
        _audit(corpus, sound=True)
    gates = tmp_path / "gates.toml"
    gates.write_text(GRANT)
    result = score_run(rundir, ScoreOptions(bootstrap=100, gates=gates)).as_json()
    decision = result["conditions"]["explainer"]["decision"]
    assert decision["status"] == "needs_labels" and "not sound" in decision["reason"]
    audit = result["analysis"]["audit"]
    assert audit["sound"] is False and audit["source"] == "re-run by score"
    assert any("diff shape separates" in r for r in audit["reasons"])
