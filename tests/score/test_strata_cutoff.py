"""Natural cases as a holdout and the contamination cut-off split, on hand-made dates (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewbench.errors import UsageError
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

# case id: (stratum, source date, found by condition A). Each found case has a mirror, dated
# as it is, on which A is silent: A's naming there identifies.
CASES = {
    "d1": ("fix_reversal", "2023-01-01T12:00:00+00:00", True),
    "d2": ("fix_reversal", "2025-06-01T12:00:00+00:00", False),
    "d3": ("mutation", None, True),  # made at mining time: the corpus's created_at (2026)
    "n1": ("natural", "2020-01-01T00:00:00+00:00", True),
    "n2": ("natural", "2021-01-01T00:00:00+00:00", False),
    "k1": ("control", None, False),
}


@pytest.fixture
def rundir(tmp_path) -> Path:
    return _rundir(tmp_path, CASES)


def _rundir(tmp_path: Path, cases: dict) -> Path:
    corpus = tmp_path / "corpus"
    with CorpusWriter(corpus) as writer:
        for cid, (stratum, when, found) in cases.items():
            control = stratum == "control"
            defects = [] if control else [Defect(defect_id=f"{cid}-d1", **{"class": stratum},
                                                 locations=[Location(path=f"{cid}.py", start_line=5, end_line=5, symbol=f"parse_{cid}")],
                                                 symbols=[f"parse_{cid}", f"limit_{cid}"],
                                                 removed_identifiers=[f"limit_{cid}"])]  # fmt: skip
            case = Case(case_id=cid, base="0" * 40, title="Update module", patch=f"patches/{cid}.diff",
                        paths=[f"{cid}.py"], language="python")
            gold = GoldRecord(case_id=cid, stratum=stratum, expect_finding=not control, defects=defects,
                              provenance=Provenance(), source_date=when,
                              validation=Validation(status="not_observed" if control else "observed"))
            for record in paired(case, gold) if found else [(case, gold)]:
                writer.add(*record, b"")
        meta = writer.commit(lambda sha: CorpusMeta(
            repo=RepoInfo(path="/nowhere", head="0" * 40), created_at="2026-01-01T00:00:00+00:00",
            tool_version="test", config={}, gold_sha256=sha,
            counts=CorpusCounts(cases=len(cases) + sum(f for *_, f in cases.values()), by_stratum={},
                                matched_commits=0, dropped={})))  # fmt: skip
    out = tmp_path / "runs"
    out.mkdir()
    store = RunStore(out / "runs.sqlite", create=True)
    store.set_meta({"corpus_path": str(corpus), "gold_sha256": meta.gold_sha256,
                    "experiment": json.dumps({"condition": [{"name": "A"}]})})  # fmt: skip
    runs = {cid: found for cid, (*_, found) in cases.items()}
    runs.update({mirror_id(cid): False for cid, (*_, found) in cases.items() if found})  # silent on the mirrors
    for cid, found in runs.items():
        # Names what the fix removed: an identified finding, not merely a located one.
        findings = [Finding(path=f"{cid}.py", line=5, claim=f"limit_{cid} is gone", raw="bug")] if found else []
        store.record(RunRow(
            run_id=f"A-{cid}", case_id=cid, condition="A", repetition=0, variant="original",
            state="completed_findings" if found else "completed_no_findings",
            started_at="2026-01-01T00:00:00.000+00:00", ended_at="2026-01-01T00:00:01.000+00:00", latency_s=1.0,
            attempts=1, cached=False, model_requested="m", model_returned="m", params={}, prompt_sha256="p" * 64,
            guidance_sha256=None, gold_sha256=meta.gold_sha256, tool_version="test", tokens_in=1, tokens_out=1,
            raw_output="x", unparsed=[], error=None, cache_key=f"k-{cid}", findings=findings), None)  # fmt: skip
    store.close()
    return out


def test_natural_cases_stay_out_of_the_headline_and_appear_as_a_holdout(rundir):
    result = score_run(rundir, ScoreOptions(bootstrap=500)).as_json()
    a = result["conditions"]["A"]
    recall = a["metrics"]["defect_recall"]
    assert (recall["num"], recall["den"]) == (2, 3)  # d1, d3 of d1-d3: n1 and n2 are not pooled
    assert a["valid_defect_cases"] == 3
    holdout = a["holdout"]["natural"]["metrics"]["defect_recall"]
    assert (holdout["num"], holdout["den"], holdout["value"]) == (1, 2, 0.5)
    assert holdout["lo"] is not None and holdout["lo"] <= 0.5 <= holdout["hi"]
    stratum = a["breakdown"]["stratum"]
    assert stratum["natural"]["defect_recall"] == {"value": 0.5, "num": 1, "den": 2}
    assert stratum["fix_reversal"]["defect_recall"]["den"] == 2
    assert result["corpus"]["eligible_defect_cases"] == 3 and result["corpus"]["holdout_cases"] == 2
    assert result["analysis"]["holdout_strata"] == ["natural"]


def test_cutoff_splits_every_metric_before_and_after(rundir):
    result = score_run(rundir, ScoreOptions(bootstrap=500, cutoff="2024-01-01")).as_json()
    split = result["conditions"]["A"]["cutoff"]
    assert split["date"].startswith("2024-01-01")
    before, after = split["before"]["metrics"]["defect_recall"], split["after"]["metrics"]["defect_recall"]
    assert (before["num"], before["den"]) == (1, 1)  # d1 (2023)
    assert (after["num"], after["den"]) == (1, 2)  # d2 (2025) missed, d3 (mining time, 2026) found
    from reviewbench.score.registry import DEPRECATED  # old names: beside the headline only

    assert set(split["before"]["metrics"]) == set(result["conditions"]["A"]["metrics"]) - {"latency_s", "tokens",
                                                                                          *DEPRECATED}
    difference = split["difference"]["metrics"]["defect_recall"]
    assert difference["diff"] == -0.5 and difference["lo"] <= -0.5 <= difference["hi"]
    # Clean cases: the control k1 and d3's mirror are dated by mining time, after the
    # cut-off; d1's (2023) and n1's (2020) mirrors, dated as their pairs, before it (a
    # mirror is a clean case of the headline whatever its pair's stratum).
    assert split["after"]["metrics"]["false_alarm_rate"]["den"] == 2
    assert split["before"]["metrics"]["false_alarm_rate"]["den"] == 2
    assert result["analysis"]["cutoff"] == {"date": "2024-01-01", "registered": False, "registered_date": None}


def test_cli_cutoff_scoreboard_and_bad_date(rundir):
    rb = run_cli

    proc = rb("score", rundir, "--cutoff", "2024-01-01", "--bootstrap", 200, "--details")
    assert proc.returncode == 0, proc.stderr
    assert "before 2024-01-01" in proc.stdout and "natural (holdout" in proc.stdout
    lines = {line.split("(")[0].strip(): line for line in proc.stdout.splitlines() if "(holdout" in line or "2024-01-01 " in line}
    assert "0.500 1/2" in lines["natural"] and "1.000 1/1" in lines["before 2024-01-01"]  # num/den, not value alone
    assert "cutoff 2024-01-01 given here, none registered: an exploratory split" in " ".join(proc.stdout.split())
    bad = rb("score", rundir, "--cutoff", "last spring")
    assert bad.returncode == 2 and bad.stderr.startswith("reviewbench: error:") and "cutoff" in bad.stderr


def test_show_prints_the_source_date_histogram(rundir):
    corpus = rundir.parent / "corpus"
    proc = run_cli("show", corpus, "--json")
    assert proc.returncode == 0, proc.stderr
    # d3, its mirror and k1 carry no date of their own: they count at the corpus's creation
    # (2026-01); the mirrors of n1 (2020-01) and d1 (2023-01) count with their pairs.
    assert json.loads(proc.stdout)["by_source_month"] == {"2020-01": 2, "2021-01": 1, "2023-01": 2, "2025-06": 1,
                                                          "2026-01": 3}  # fmt: skip
    text = run_cli("show", corpus).stdout
    assert "source month" in text and "2025-06" in text


def test_gates_name_a_metric_per_stratum_and_the_natural_holdout_too(rundir, tmp_path):
    """Issue 15 item 2: `metric@stratum` gates. By hand: fix_reversal 1/2 = 0.5 (d1 of d1,
    d2), mutation 1/1, natural 1/2 (n1 of n1, n2); the headline stays 2/3. The natural
    stratum is never pooled, but a gate may still name it: it was inserted into the
    breakdown only after the decision had been taken, so such a gate always failed."""
    gates = tmp_path / "gates.toml"
    body = ('min_defect_cases = 1\nmin_controls = 1\n[[tier]]\nname = "strata"\npermitted = ["use"]\nwhen = [\n'
            '  { metric = "defect_recall@fix_reversal", op = ">=", value = 0.5 },\n'
            '  { metric = "defect_recall@mutation", op = ">=", value = 1.0 },\n'
            '  { metric = "defect_recall@natural", op = ">=", value = THRESHOLD },\n]\n'
            '[fallback]\nname = "none"\n')  # fmt: skip
    decisions = {}
    for analysis in ("completed", "end_to_end"):
        for threshold in ("0.5", "0.6"):
            gates.write_text(f'analysis = "{analysis}"\n' + body.replace("THRESHOLD", threshold))
            result = score_run(rundir, ScoreOptions(bootstrap=200, gates=gates)).as_json()
            decision = result["conditions"]["A"]["decision"]
            observed = {g["metric"]: g["observed"] for g in decision["gates"]["strata"]}
            assert observed == {"defect_recall@fix_reversal": 0.5, "defect_recall@mutation": 1.0,
                                "defect_recall@natural": 0.5}  # fmt: skip
            assert result["conditions"]["A"]["metrics"]["defect_recall"]["value"] == pytest.approx(2 / 3)
            decisions[(analysis, threshold)] = decision["tier"]
    assert decisions == {("completed", "0.5"): "strata", ("completed", "0.6"): "none",
                         ("end_to_end", "0.5"): "strata", ("end_to_end", "0.6"): "none"}


def test_a_gate_names_a_user_defined_stratum_and_a_typo_is_refused(tmp_path):
    """Issue 15 item 2: gates work per stratum, user-defined ones too. By hand: payments
    1/2 found, fix_reversal 1/1; a gate on payments >= 0.5 passes, >= 0.6 fails; a
    misspelt stratum is refused at scoring with the corpus's strata listed."""
    rundir = _rundir(tmp_path, {"p1": ("payments", None, True), "p2": ("payments", None, False),
                                "d1": ("fix_reversal", None, True), "k1": ("control", None, False)})  # fmt: skip
    gates = tmp_path / "gates.toml"
    body = ('min_defect_cases = 1\nmin_controls = 1\n[[tier]]\nname = "payments_ok"\npermitted = ["use"]\n'
            'when = [{ metric = "defect_recall@STRATUM", op = ">=", value = THRESHOLD }]\n[fallback]\nname = "none"\n')
    tiers = {}
    for threshold in ("0.5", "0.6"):
        gates.write_text(body.replace("STRATUM", "payments").replace("THRESHOLD", threshold))
        result = score_run(rundir, ScoreOptions(bootstrap=200, gates=gates)).as_json()["conditions"]["A"]
        assert result["breakdown"]["stratum"]["payments"]["defect_recall"] == {"value": 0.5, "num": 1, "den": 2}
        [check] = result["decision"]["gates"]["payments_ok"]
        assert check["observed"] == 0.5
        tiers[threshold] = result["decision"]["tier"]
    assert tiers == {"0.5": "payments_ok", "0.6": "none"}
    gates.write_text(body.replace("STRATUM", "paymnets").replace("THRESHOLD", "0.5"))
    with pytest.raises(UsageError, match=r"unknown stratum in 'defect_recall@paymnets'; strata: .*payments"):
        score_run(rundir, ScoreOptions(bootstrap=200, gates=gates))


def test_the_report_shows_the_holdout_and_the_cutoff_split(rundir, tmp_path, cli):
    """By hand (as above): natural 1/2 found; before 2024-01-01 1/1 (d1, its mirror resampled
    with it, and n1's mirror, whose natural case is in the holdout: 2 resampled cases), from
    then on 1/2 (d2 missed, d3 found with its mirror in its cluster, and the control k1: 3
    resampled cases); after - before -0.500."""
    from reviewbench.report import ReportOptions, build_report

    data = build_report(rundir, ReportOptions(bootstrap=200, cutoff="2024-01-01"))
    [condition] = data.conditions
    rows = {row.label: row for row in condition.splits}
    assert list(rows) == ["natural (holdout, 2 cases)", "before 2024-01-01 (2 cases)",
                          "from 2024-01-01 on (3 cases)"]
    recall = {label: (row.metrics["defect_recall"].num, row.metrics["defect_recall"].den) for label, row in rows.items()}
    assert list(recall.values()) == [(1, 2), (1, 1), (1, 2)]
    assert condition.split_difference["defect_recall"].diff == -0.5

    html = tmp_path / "report.html"
    result = cli("report", rundir, "--html", html, "--cutoff", "2024-01-01", "--bootstrap", 200)
    assert result.code == 0, result.stderr
    page = html.read_text()
    section = page[page.index('id="splits"'):]
    section = section[: section.index("</section>")]
    for text in ("natural (holdout, 2 cases)", "before 2024-01-01 (2 cases)", "from 2024-01-01 on (3 cases)",
                 "1/2", "1/1", "−0.500"):  # fmt: skip
        assert text in section, text
    # Without a cut-off the holdout still shows, and no split row does.
    plain = tmp_path / "plain.html"
    assert cli("report", rundir, "--html", plain, "--bootstrap", 200).code == 0
    page = plain.read_text()
    assert "natural (holdout, 2 cases)" in page and "before 2024-01-01" not in page
    bad = cli("report", rundir, "--html", tmp_path / "bad.html", "--cutoff", "last spring")
    assert bad.code == 2 and bad.stderr.count("\n") == 1 and "cutoff 'last spring' is not a date" in bad.stderr
    assert not (tmp_path / "bad.html").exists()
