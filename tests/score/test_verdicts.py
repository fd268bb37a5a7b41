"""Identified defects, not comments near the diff (issue 13), on small stores built by hand.

Twelve single-file defect cases, each with its mirror (the same change the other way, a
clean case: naming a defect identifies it only where the mirror's review said nothing
naming it), and six two-file controls, validated, written through the project's own corpus
writer and run store; each condition is a reviewer whose every answer is planned, so every
figure below is known in advance.
"""

from __future__ import annotations

import json
from importlib.resources import files
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
from reviewbench.score import Evidence, ScoreOptions, VerdictOverride, score_run
from reviewbench.score.identify import IdentifiedBy, identify
from reviewbench.store.corpus import CorpusWriter
from reviewbench.store.runs import RunRow, RunStore

from ..conftest import run_cli
from .mirrors import mirror_id, paired

DEFECTS = 12
CONTROLS = 6


def _defect(i: int) -> Defect:
    return Defect(
        defect_id=f"d{i}-d1", defect_class="fix_reversal", severity="high",
        locations=[Location(path=f"pkg/mod{i}.py", start_line=10, end_line=12, symbol=f"handler_{i}")],
        symbols=[f"handler_{i}", f"retry_limit_{i}"], removed_identifiers=[f"retry_limit_{i}"],
        description="Undoes 0123456789ab: Cap the retry limit when the upstream handler times out",
    )  # fmt: skip


@pytest.fixture
def corpus(tmp_path) -> Path:
    out = tmp_path / "corpus"
    with CorpusWriter(out) as writer:
        for i in range(DEFECTS):
            case = Case(case_id=f"d{i}", base="0" * 40, title="Update module", patch=f"patches/d{i}.diff",
                        paths=[f"pkg/mod{i}.py"], language="python")
            gold = GoldRecord(case_id=f"d{i}", stratum="fix_reversal", expect_finding=True, defects=[_defect(i)],
                              provenance=Provenance(), validation=Validation(status="observed"))
            for record in paired(case, gold):
                writer.add(*record, b"")
        for i in range(CONTROLS):
            writer.add(
                Case(case_id=f"k{i}", base="0" * 40, title="Update module", patch=f"patches/k{i}.diff",
                     paths=[f"pkg/ctl{i}.py", f"pkg/ctl{i}b.py"], language="python"),
                GoldRecord(case_id=f"k{i}", stratum="control", expect_finding=False, defects=[],
                           provenance=Provenance(), validation=Validation(status="not_observed")),
                b"",
            )  # fmt: skip
        writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/nowhere", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="test", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=2 * DEFECTS + CONTROLS, by_stratum={}, matched_commits=0, dropped={}),
        ))  # fmt: skip
    return out


def _finding(path, line, claim, severity="high"):
    return Finding(path=path, line=line, severity=severity, claim=claim, raw=f"{path}:{line} {severity} {claim}")


def _lint(i):
    return [_finding(f"pkg/mod{i}.py", 11, "E501 Line too long (97 > 88)", "low")]


def _named(i):
    return [_finding(f"pkg/mod{i}.py", 11, f"handler_{i} no longer caps retry_limit_{i}")]


# condition -> case index -> (state, findings); controls and mirrors get no findings
# (completed) unless said.
PLANS = {
    "lint": lambda i: ("completed_findings", _lint(i)),
    "named": lambda i: ("completed_findings", _named(i)),
    "prose": lambda i: ("completed_findings", _named(i)) if i % 2 == 0 else ("invalid", []),
    "perfect": lambda i: ("completed_findings", _named(i)),
    "echo": lambda i: ("completed_findings", _named(i)),
}
# condition -> case index -> (state, findings) on d{i}'s mirror: "echo" says the same there.
MIRROR_PLANS = {"echo": lambda i: ("completed_findings", _named(i))}


def _run(condition, case_id, state, findings, gold_sha, model="m"):
    raw = "\n".join(f.raw for f in findings) or ("NO_ISSUES" if state.startswith("completed") else "I think it is fine")
    return RunRow(
        run_id=f"{condition}-{case_id}", case_id=case_id, condition=condition, repetition=0, variant="original",
        state=state, started_at=None, ended_at=None, latency_s=1.0, attempts=1, cached=False,
        model_requested="m", model_returned=model, params={}, prompt_sha256="p" * 64, guidance_sha256=None,
        gold_sha256=gold_sha, tool_version="test", tokens_in=None, tokens_out=None, raw_output=raw, unparsed=[],
        error=None, cache_key=f"k-{condition}-{case_id}", findings=findings,
    )  # fmt: skip


@pytest.fixture
def rundir(tmp_path, corpus) -> Path:
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    out = tmp_path / "runs"
    out.mkdir()
    store = RunStore(out / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha,
                    "experiment": json.dumps({"condition": [{"name": n} for n in PLANS]})})  # fmt: skip
    for condition, plan in PLANS.items():
        for i in range(DEFECTS):
            state, findings = plan(i)
            model = f"m-{i % 2}" if condition == "perfect" else "m"  # the endpoint routed to two models
            store.record(_run(condition, f"d{i}", state, findings, gold_sha, model), None)
            state, findings = MIRROR_PLANS.get(condition, lambda i: ("completed_no_findings", []))(i)
            store.record(_run(condition, mirror_id(f"d{i}"), state, findings, gold_sha), None)
        for i in range(CONTROLS):
            store.record(_run(condition, f"k{i}", "completed_no_findings", [], gold_sha), None)
    store.close()
    return out


def _score(rundir, **kw):
    return score_run(rundir, ScoreOptions(bootstrap=500, **kw))


def _frac(m):
    return m["num"], m["den"]


def test_identification_rules():
    d = _defect(3)
    assert identify("handler_3 no longer checks", d) is None  # where it sits, not what is wrong
    assert identify("`handler_3` would read better with a docstring", d) is None
    assert identify("RETRY_LIMIT_3 is gone", d) is IdentifiedBy.REMOVED_IDENTIFIER
    assert identify("E501 Line too long (97 > 88)", d) is None
    assert identify("handler_30 is unrelated", d) is None  # whole words only
    mutation = Defect(defect_id="m", defect_class="off_by_one", locations=[], hint_terms=["off-by-one", "boundary"],
                      removed_identifiers=["len", "self", "i"], description="Off by one: range end moved")  # fmt: skip
    assert identify("an off-by-one at the loop end", mutation) is IdentifiedBy.HINT_TERM
    assert identify("uses len and self", mutation) is None  # builtins and short names are no evidence
    # What ruff --select ALL said on real pyjwt fix reversals: boilerplate naming a dunder,
    # or a plain word the fix happened to touch, is not the defect.
    fix = Defect(defect_id="f", defect_class="fix_reversal", locations=[Location(path="a.py", start_line=1,
                 end_line=1, symbol="__init__")], symbols=["__init__", "annotations", "PyJWKSet"],
                 added_identifiers=["annotations", "must", "PyJWKSet"])  # fmt: skip
    assert identify("D107 Missing docstring in `__init__`", fix) is None
    assert identify("UP045 Use `X | None` for type annotations", fix) is None
    assert identify("EM101 Exception must not use a string literal", fix) is None
    assert identify("PyJWKSet now hides the key error", fix) is IdentifiedBy.ADDED_IDENTIFIER
    # A plain word counts when a reviewer's claim quotes it as code; in a rule remark the
    # quotes are the analyser's template (ruff's F841 on the demo's reversal names nothing).
    renamed = Defect(defect_id="r", defect_class="fix_reversal", locations=[], removed_identifiers=["subtotal"])
    assert identify("`subtotal` is assigned to but never read any more", renamed) is IdentifiedBy.REMOVED_IDENTIFIER
    assert identify("F841 Local variable `subtotal` is assigned to but never used", renamed) is None
    assert identify("the subtotal looks off", renamed) is None
    # What ruff --select ALL said on real cachetools fix reversals: a rule's message names the
    # function it sits in (its template's subject), which says where, not what is wrong.
    cached = Defect(defect_id="c", defect_class="fix_reversal", locations=[Location(path="a.py", start_line=1,
                    end_line=1, symbol="cachedmethod.decorator.wrapper")], symbols=["_methodkey", "cached",
                    "cachedmethod", "wrapper"], added_identifiers=["_methodkey"])  # fmt: skip
    assert identify("ANN201 Missing return type annotation for public function `cached`", cached) is None
    assert identify("C901 `cachedmethod` is too complex (11 > 10)", cached) is None
    assert identify("PLR0913 Too many arguments in function definition (6 > 5) in wrapper", cached) is None
    assert identify("cachedmethod no longer keys on the instance", cached) is None  # where, even in a reviewer's claim
    assert identify("`cached` ignores the instance", cached) is IdentifiedBy.CHANGED_IDENTIFIER  # a gold symbol elsewhere
    # A code-shaped identifier the fix touched still names the defect in a rule remark.
    assert identify("ARG001 Unused function argument: `_methodkey`", cached) is IdentifiedBy.ADDED_IDENTIFIER
    assert identify("the cache key ignores `_methodkey`", cached) is IdentifiedBy.ADDED_IDENTIFIER  # a reviewer's
    # ... even when the fix's own lines name that function (a deprecation warning inside it).
    warned = Defect(defect_id="w", defect_class="fix_reversal", locations=[Location(path="f.py", start_line=1,
                    end_line=1, symbol="mru_cache")], added_identifiers=["mru_cache", "DeprecationWarning"])  # fmt: skip
    assert identify("ANN201 Missing return type annotation for public function `mru_cache`", warned) is None
    assert identify("mru_cache no longer warns that it is deprecated", warned) is None  # its own name: where
    # A close paraphrase of the gold description (rapidfuzz), not a few shared words.
    assert identify("caps the retry limit when the upstream handler times out", d) is IdentifiedBy.PARAPHRASE
    assert identify("the upstream call times out", d) is None
    # The fix reversal's description as `mine` writes it: only the fix's subject is paraphrased,
    # never the frame every fix reversal shares (cachetools' fix #221).
    ttl = Defect(defect_id="t", defect_class="fix_reversal", locations=[], symbols=["expire"],
                 description='Undoes 91aa4c63f571 "Fix #221: Change exact time of expiration in TTLCache." '
                             "in `__contains__`, `expire`: the defect that commit fixed is back")  # fmt: skip
    assert identify("the defect that commit fixed is back", ttl) is None
    assert identify("changes the exact time of expiration in TTLCache", ttl) is IdentifiedBy.PARAPHRASE


def test_a_linter_on_changed_lines_is_located_but_never_identified(rundir, tmp_path):
    result = _score(rundir).as_json()
    lint = result["conditions"]["lint"]
    assert _frac(lint["metrics"]["located_recall"]) == (12, 12)
    assert _frac(lint["metrics"]["defect_recall"]) == (0, 12)
    assert _frac(lint["metrics"]["precision"]) == (0, 12) and _frac(lint["metrics"]["located_precision"]) == (12, 12)
    decision = lint["decision"]
    # It flags the clean controls' changed lines too: triage's silence gate fails outright.
    assert decision["tier"] == "none" and decision["status"] == "not_earned"
    assert any(check["passed"] is False for check in decision["gates"]["triage"])
    # Without the silence condition, only labels could settle triage: needs labels, never the tier.
    gates = tmp_path / "gates.toml"
    gates.write_text('[[tier]]\nname = "triage"\nwhen = [{ metric = "defect_recall", op = ">=", value = 0.3 }]\n'
                     'permitted = ["triage"]\n[fallback]\nname = "none"\n')  # fmt: skip
    decision = _score(rundir, gates=gates).as_json()["conditions"]["lint"]["decision"]
    assert decision["status"] == "needs_labels" and decision["tier"] == "none" and decision["labels_needed"] == 12
    assert decision["gates"]["triage"][0]["passed"] is None


def test_a_reviewer_naming_what_the_fix_removed_is_identified_and_gets_its_planned_figures(rundir):
    result = _score(rundir).as_json()
    named = result["conditions"]["named"]
    m = named["metrics"]
    # It names handler_i on d{i} and says nothing on d{i}'s mirror: every naming discriminates.
    assert _frac(m["defect_recall"]) == (12, 12) and _frac(m["located_recall"]) == (12, 12)
    assert _frac(m["named_recall"]) == (12, 12) and _frac(m["discriminating_recall"]) == (12, 12)
    assert _frac(m["pair_accuracy"]) == (12, 12)
    assert _frac(m["precision"]) == (12, 12) and _frac(m["false_alarm_rate"]) == (0, 18)  # 6 controls, 12 mirrors
    assert _frac(m["symbol_mention_rate"]) == (12, 12) and _frac(m["file_mention_rate"]) == (12, 12)
    assert _frac(m["weighted_points"]) == (36, 36) and _frac(m["severity_match_all"]) == (12, 12)
    # Automatic evidence earns nothing above triage: second_pass is skipped, and silence
    # 0 < 0.5 fails triage (a reviewer that always speaks is no triage signal).
    assert named["decision"]["tier"] == "none" and "second_pass needs human evidence" in named["decision"]["reason"]
    verdicts = [json.loads(line) for line in (rundir / "verdicts.jsonl").read_text().splitlines()]
    [v] = [v for v in verdicts if v["run_id"] == "named-d3"]
    assert v["comment_id"] == "named-d3:0" and v["identified"] and v["identified_by"] == "removed_identifier"
    assert v["named"] and v["discriminating"] is True
    assert v["located"] and v["defect_id"] == "d3-d1" and v["evidence"] == "automatic"
    # The same claim, said on the mirror too: named, located, and not identified.
    echo = result["conditions"]["echo"]["metrics"]
    assert _frac(echo["named_recall"]) == (12, 12) and _frac(echo["located_recall"]) == (12, 12)
    assert _frac(echo["defect_recall"]) == (0, 12) and _frac(echo["discriminating_recall"]) == (0, 12)
    assert _frac(echo["pair_accuracy"]) == (0, 12)
    # 12 credited findings, none identified, and a false positive on every mirror.
    assert _frac(echo["precision"]) == (0, 24) and _frac(echo["false_alarm_rate"]) == (12, 18)
    [v] = [v for v in verdicts if v["run_id"] == "echo-d3"]
    assert v["named"] and v["discriminating"] is False and not v["identified"] and v["identified_by"] == "removed_identifier"
    [v] = [v for v in verdicts if v["run_id"] == mirror_id("echo-d3")]
    assert v["false_positive"] and v["defect_id"] is None


def test_prose_on_half_the_cases_halves_end_to_end_recall(rundir):
    prose = _score(rundir).as_json()["conditions"]["prose"]
    assert _frac(prose["metrics"]["defect_recall"]) == (6, 6)  # completed runs only
    assert _frac(prose["end_to_end"]["metrics"]["defect_recall"]) == (6, 12)
    assert _frac(prose["metrics"]["completion"]) == (24, 30)  # 6 of 12 defect runs, 6 controls, 12 mirrors


def test_missing_reviews_do_not_turn_a_failure_into_insufficient_evidence(rundir, tmp_path):
    # Gated end to end, "prose" was measured on all 12 defect cases (6 of them misses): it
    # fails the completion floor, which is a verdict, not "6 valid defect cases (< 10)".
    # (The default table, with intervals of any width allowed on 12 cases.)
    default = files("reviewbench.score").joinpath("default_gates.toml").read_text(encoding="utf-8")
    gates = tmp_path / "gates.toml"
    gates.write_text(default.replace("max_interval_width = 0.5", "max_interval_width = 1.0"))
    prose = _score(rundir, gates=gates).as_json()["conditions"]["prose"]
    assert prose["valid_defect_cases"] == 6  # completed runs, as documented
    decision = prose["decision"]
    assert decision["status"] == "not_earned" and decision["tier"] == "none", decision["reason"]
    assert any(c["metric"] == "completion" and c["passed"] is False for c in decision["gates"]["triage"])


def test_a_perfect_reviewer_on_single_file_cases_is_not_vetoed(rundir):
    perfect = _score(rundir).as_json()["conditions"]["perfect"]
    # Non-gold files: the controls' two each and the mirrors' one each (clean cases: all non-gold).
    assert _frac(perfect["metrics"]["flag_coverage"]) == (0, 24)
    assert perfect["decision"]["status"] != "vetoed"


def test_model_drift_is_flagged(rundir):
    result = _score(rundir).as_json()
    assert result["conditions"]["perfect"]["model_drift"]["returned"] == ["m", "m-0", "m-1"]  # controls answered by "m"
    assert result["conditions"]["named"]["model_drift"] is None


def test_a_returned_model_other_than_the_configured_one_is_drift(rundir):
    store = RunStore(rundir / "runs.sqlite", create=True)  # writable: read commands open it read-only
    experiment = json.loads(store.get_meta("experiment"))
    experiment["condition"][1]["reviewer"] = {"kind": "openai", "model": "gpt-x"}  # "named" asked for gpt-x
    store.set_meta({"experiment": json.dumps(experiment)})
    store.close()
    drift = _score(rundir).as_json()["conditions"]["named"]["model_drift"]
    assert drift == {"requested": ["m"], "returned": ["m"]}  # every run answered by m, not gpt-x


def test_labels_override_automatic_verdicts_by_comment_id(rundir):
    labels = {f"lint-d{i}:0": VerdictOverride(comment_id=f"lint-d{i}:0", identified=True, evidence="human")
              for i in range(6)}  # fmt: skip
    lint = _score(rundir, overrides=labels).as_json()["conditions"]["lint"]
    assert _frac(lint["metrics"]["defect_recall"]) == (6, 12)
    assert lint["evidence"] == "automatic"  # the unlabelled half is still automatic
    everything = {f"lint-d{i}:0": VerdictOverride(comment_id=f"lint-d{i}:0", identified=False, evidence="judge")
                  for i in range(DEFECTS)}  # fmt: skip
    lint = _score(rundir, overrides=everything).as_json()["conditions"]["lint"]
    assert lint["evidence"] == Evidence.JUDGE and _frac(lint["metrics"]["defect_recall"]) == (0, 12)


def _compare(tmp_path, body):
    gates = tmp_path / "cmp.toml"
    gates.write_text('[fallback]\nname = "none"\n' + body)
    return gates


def test_comparative_gates_pass_fail_and_inconclusive(rundir, tmp_path):
    gates = _compare(tmp_path, """
[[compare]]
name = "named beats lint"
metric = "defect_recall"
diff = ["named", "lint"]
op = ">="
value = 0.15
[[compare]]
name = "lint beats named"
metric = "defect_recall@fix_reversal"
diff = ["lint", "named"]
value = 0.15
[[compare]]
name = "prose within half of named"
metric = "defect_recall"
diff = ["prose", "named"]
value = -0.5
[[compare]]
name = "perfect not worse than named"
metric = "defect_recall"
diff = ["perfect", "named"]
margin = 0.05
""")
    result = _score(rundir, gates=gates).as_json()
    status = {c["name"]: c["status"] for c in result["compare"]}
    assert status == {"named beats lint": "pass", "lint beats named": "fail",
                      "prose within half of named": "inconclusive",
                      # perfect and named differ on no case: [0, 0] by resampling, but on so few
                      # cases the exact bound on how many could differ straddles the margin.
                      "perfect not worse than named": "inconclusive"}
    [prose] = [c for c in result["compare"] if c["name"].startswith("prose")]
    assert prose["observed"] == -0.5 and prose["lo"] < -0.5 < prose["hi"]  # end to end, the default analysis


def test_a_comparative_gate_on_an_unknown_condition_is_refused(rundir, tmp_path):
    from reviewbench.errors import UsageError

    gates = _compare(tmp_path, '[[compare]]\nname = "x"\nmetric = "defect_recall"\ndiff = ["named", "nobody"]\n')
    with pytest.raises(UsageError, match="no condition named named or nobody"):
        _score(rundir, gates=gates)


def test_verdicts_that_cannot_be_written_are_one_line_not_a_traceback(rundir):

    (rundir / "verdicts.jsonl").mkdir()  # in the way: the atomic replace fails (as root too)
    (rundir / "verdicts.jsonl" / "keep").write_text("x")
    proc = run_cli("score", rundir, "--bootstrap", "100")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "cannot write" in proc.stderr, proc.stderr
    assert [p.name for p in rundir.iterdir() if p.name.startswith(".verdicts.")] == []  # no temp file left


@pytest.mark.parametrize("value, status, tier", [(0.15, "pass", "t"), (1.5, "fail", "none"),
                                                 (-0.5, "inconclusive", "none")])  # fmt: skip
def test_a_comparative_condition_inside_a_tier(rundir, tmp_path, value, status, tier):
    pair = '["named", "lint"]' if value != -0.5 else '["prose", "named"]'
    gates = tmp_path / "tier.toml"
    gates.write_text("min_defect_cases = 1\nmin_controls = 1\n[[tier]]\nname = \"t\"\npermitted = [\"use\"]\n"
                     f"when = [{{ metric = \"defect_recall\", diff = {pair}, op = \">=\", value = {value} }}]\n"
                     "[fallback]\nname = \"none\"\n")  # fmt: skip
    decision = _score(rundir, gates=gates).as_json()["conditions"]["lint"]["decision"]
    [check] = decision["gates"]["t"]
    assert check["status"] == status and decision["tier"] == tier
    assert check["passed"] is (status == "pass")


def test_symbol_recall_is_not_earned_by_a_dunder_in_a_file_name(tmp_path):
    # On cachetools, flag_all's "src/cachetools/__init__.py:244 high possible defect in this
    # change" was counted as naming the gold symbol `__init__`: a file name, not a symbol.
    corpus = tmp_path / "corpus"
    defect = Defect(defect_id="d-d1", defect_class="fix_reversal",
                    locations=[Location(path="pkg/__init__.py", start_line=10, end_line=12, symbol="load_config")],
                    symbols=["__init__", "load_config"])  # fmt: skip
    with CorpusWriter(corpus) as writer:
        writer.add(Case(case_id="d", base="0" * 40, title="Update module", patch="patches/d.diff",
                        paths=["pkg/__init__.py"], language="python"),
                   GoldRecord(case_id="d", stratum="fix_reversal", expect_finding=True, defects=[defect],
                              provenance=Provenance(), validation=Validation(status="observed")), b"")  # fmt: skip
        writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/nowhere", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="test", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=1, by_stratum={}, matched_commits=0, dropped={}),
        ))  # fmt: skip
    gold_sha = json.loads((corpus / "corpus.json").read_text())["gold_sha256"]
    out = tmp_path / "runs"
    out.mkdir()
    store = RunStore(out / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": gold_sha,
                    "experiment": json.dumps({"condition": [{"name": "flag"}, {"name": "named"}]})})  # fmt: skip
    store.record(_run("flag", "d", "completed_findings",
                      [_finding("pkg/__init__.py", 11, "possible defect in this change")], gold_sha), None)  # fmt: skip
    store.record(_run("named", "d", "completed_findings",
                      [_finding("pkg/__init__.py", 11, "load_config drops the default")], gold_sha), None)  # fmt: skip
    store.close()
    conditions = _score(out).as_json()["conditions"]
    assert _frac(conditions["flag"]["metrics"]["symbol_recall"]) == (0, 1)
    assert _frac(conditions["named"]["metrics"]["symbol_recall"]) == (1, 1)


def test_the_scoreboard_says_how_many_defect_cases_were_reviewed_not_valid(rundir):
    # "prose" answered 6 of its 12 valid defect cases: 6 is not the number of valid cases.
    proc = run_cli("score", rundir, "--bootstrap", "100", "--details")
    assert proc.returncode == 0, proc.stderr
    [header] = [line for line in proc.stdout.splitlines() if line.startswith("prose  (")]
    assert "6 defect cases with a completed review" in header and "valid defect cases" not in header


def _judged(rundir, evidence):
    """Every comment of "perfect" labelled, identified where it lies on a defect."""
    verdicts = [v for v in _score(rundir).verdicts if v.condition == "perfect"]
    return {v.comment_id: VerdictOverride(comment_id=v.comment_id, identified=v.defect_id is not None,
                                          evidence=evidence) for v in verdicts}  # fmt: skip


def test_judge_labels_earn_a_secondary_analysis_never_the_primary_decision(rundir, tmp_path, capsys):
    """Seed 003: a judge for a declared secondary analysis; humans keep final authority."""
    default = files("reviewbench.score").joinpath("default_gates.toml").read_text(encoding="utf-8")
    gates = tmp_path / "gates.toml"  # intervals of any width: 12 cases
    gates.write_text(default.replace("max_interval_width = 0.5", "max_interval_width = 1.0"))
    human = _score(rundir, gates=gates, overrides=_judged(rundir, "human")).as_json()["conditions"]["perfect"]
    assert human["evidence"] == "human" and human["decision"]["tier"] == "second_pass"
    assert "judge_secondary" not in human
    result = _score(rundir, gates=gates, overrides=_judged(rundir, "judge"))
    judged = result.as_json()["conditions"]["perfect"]
    assert judged["evidence"] == "judge"
    assert judged["decision"]["tier"] == "none" and "needs human evidence" in judged["decision"]["reason"]
    secondary = judged["judge_secondary"]
    assert secondary["tier"] == "second_pass" and secondary["status"] == "granted"
    assert secondary["authority"] == "none: a secondary analysis on judge labels grants no authority"
    assert secondary["would_be"] == "second-pass attention list"
    from reviewbench.cli.score import print_scoreboard

    capsys.readouterr()
    print_scoreboard(rundir, result)
    text = " ".join(capsys.readouterr().out.split())
    assert "secondary analysis on judge labels (no authority): second_pass [granted]" in text
    from reviewbench.report import build_report, write_html

    page = tmp_path / "report.html"
    write_html(build_report(rundir, scored=result), page)
    assert "Secondary analysis on judge labels, no authority:" in page.read_text()
