"""The false-positive distribution's IQR, the complete pairs and missingness of every paired
comparison, and completion by condition × stratum against the plan (``allocation.jsonl``),
each worked by hand on a small real run directory.

The corpus (``runsets.write_corpus``): defect cases d0-d2, each with its mirror, and
controls k0-k3. Condition A reviews every case once: it names the defect on d0 and d1 and
makes j false positives on control kj (0, 1, 2, 3). Condition B does the same, but its runs
of d2 and k3 were never recorded. The plan also holds a second repetition of A on k0 that
was never run.
"""

from __future__ import annotations

import json

import pytest

from reviewbench.records import Finding, RunState
from reviewbench.score import ScoreOptions, score_run
from reviewbench.store.exclusions import ExclusionKind, exclude
from reviewbench.store.runs import RunStore

from ..conftest import run_cli
from .mirrors import mirror_id
from .runsets import Reviewer, control_id, defect_id, write_corpus, write_runs

OPTIONS = ScoreOptions(bootstrap=300, overrides={}, labels={})


def _many_false_positives(rundir):
    """Record each control kj's runs again with exactly j findings (false positives)."""
    store = RunStore(rundir / "runs.sqlite", create=True)
    try:
        for run in list(store.runs()):
            j = int(run.case_id[1:]) if run.case_id.startswith("k") else None
            if j is None:
                continue
            findings = [Finding(path=f"app/c{j}.py", line=3 + i, claim=f"odd {i}", raw=f"odd {i}") for i in range(j)]
            store.record(run.model_copy(update={"findings": findings, "state": RunState.COMPLETED_FINDINGS if j
                                                else RunState.COMPLETED_NO_FINDINGS}), None)  # fmt: skip
        for run_id in ("B-d2-0", "B-k3-0"):  # never recorded
            store.db.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
    finally:
        store.close()


@pytest.fixture
def rundir(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", defects=3, controls=4)
    conditions = {"A": Reviewer(finds={0, 1}), "B": Reviewer(finds={0, 1})}
    path = write_runs(tmp_path / "runs", corpus, conditions, defects=3, controls=4)
    _many_false_positives(path)
    plan = [{"position": 0, "run_id": f"{c}-{case}-0", "case_id": case, "repetition": 0, "condition": c,
             "variant": "original"}
            for c in "AB" for case in [*(defect_id(i) for i in range(3)), *(mirror_id(defect_id(i)) for i in range(3)),
                                       *(control_id(j) for j in range(4))]]  # fmt: skip
    plan.append({"position": 0, "run_id": "A-k0-1", "case_id": "k0", "repetition": 1, "condition": "A",
                 "variant": "original"})
    (path / "allocation.jsonl").write_text("".join(json.dumps(p) + "\n" for p in plan))
    return path


def test_findings_table_layout_is_what_the_fixture_writes(rundir):
    """The fixture writes findings straight into SQLite: the store must read them back."""
    result = score_run(rundir, OPTIONS)
    assert result.conditions["A"].metrics["fp_per_clean_case"].num == 0 + 1 + 2 + 3


def test_false_positive_distribution_has_its_iqr(rundir):
    a = score_run(rundir, OPTIONS).conditions["A"]
    fp = a.metrics["fp_per_clean_case"]
    # Clean runs: k0-k3 with 0, 1, 2, 3 false positives, and three silent mirrors with 0.
    # Sorted: 0 0 0 0 1 2 3: median 0 (the 4th); inclusive quartiles at 0-based positions 1.5
    # and 4.5: 0 and (1 + 2) / 2 = 1.5.
    assert (fp.num, fp.den) == (6, 7)
    d = fp.distribution
    assert (d["0"], d["1"], d["2"], d["3+"], d["runs"]) == (4, 1, 1, 1, 7)
    assert (d["median"], d["q1"], d["q3"], d["max"]) == (0, 0, 1.5, 3)
    # B: k3 never ran: 0 0 0 0 1 2: median 0; positions 1.25 and 3.75: 0 and 0 + 0.75 * (1 - 0) = 0.75.
    b = score_run(rundir, OPTIONS).conditions["B"].metrics["fp_per_clean_case"].distribution
    assert (b["runs"], b["median"], b["q1"], b["q3"], b["max"]) == (6, 0, 0, 0.75, 2)


def test_every_paired_comparison_states_its_complete_pairs_and_missingness(rundir):
    result = score_run(rundir, OPTIONS)
    by = {(c.metric, c.analysis): c for c in result.comparisons if (c.a, c.b) == ("A", "B")}
    recall = by[("defect_recall", "completed")]
    # Defect-case clusters: A has d0, d1, d2; B lacks d2.
    assert (recall.pairs, recall.missing) == (2, {"A": 0, "B": 1})
    assert recall.mcnemar_pairs == 2 and recall.diff == 0.0
    alarms = by[("false_alarm_rate", "completed")]
    # Clean clusters: the three mirrors (in their defect case's cluster) and k0-k3; B lacks k3
    # (d2's cluster keeps its mirror run under B).
    assert (alarms.pairs, alarms.missing) == (6, {"A": 0, "B": 1})
    assert alarms.mcnemar_pairs is None
    for c in result.comparisons:  # every comparison states them
        assert c.pairs is not None and set(c.missing) == {c.a, c.b}
    text = run_cli("score", rundir, "--details", "--bootstrap", "300")
    assert text.returncode == 0, text.stderr
    flat = " ".join(text.stdout.split())
    assert "A - B defect_recall: +0.000" in flat
    assert "2 complete pairs (B lacks 1); 2 McNemar pairs" in flat


def test_completion_by_condition_and_stratum_counts_planned_runs_never_attempted(rundir):
    result = score_run(rundir, OPTIONS)

    def cells(name):
        return {s: c.model_dump() for s, c in result.conditions[name].completion_by_stratum.items()}

    assert cells("A") == {
        "control": {"planned": 5, "attempted": 4, "completed": 4, "not_attempted": 1, "elsewhere": 0},
        "fix_reversal": {"planned": 3, "attempted": 3, "completed": 3, "not_attempted": 0, "elsewhere": 0},
        "mirror": {"planned": 3, "attempted": 3, "completed": 3, "not_attempted": 0, "elsewhere": 0},
    }
    assert cells("B")["fix_reversal"] == {"planned": 3, "attempted": 2, "completed": 2, "not_attempted": 1,
                                          "elsewhere": 0}
    # An excluded run was attempted, but is not scored here: "elsewhere", not "never attempted".
    exclude(rundir, ExclusionKind.RUN, "B-k0-0", "protocol deviation", "ann")
    b = score_run(rundir, OPTIONS).conditions["B"].completion_by_stratum["control"]
    assert (b.planned, b.attempted, b.not_attempted, b.elsewhere) == (4, 2, 1, 1)
    out = run_cli("score", rundir, "--json", "--bootstrap", "300")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["conditions"]["B"]["completion_by_stratum"]["control"]["not_attempted"] == 1


def test_without_a_plan_planned_counts_are_null(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", defects=1, controls=1)
    rundir = write_runs(tmp_path / "runs", corpus, {"A": Reviewer()}, defects=1, controls=1)
    cell = score_run(rundir, OPTIONS).conditions["A"].completion_by_stratum["control"]
    assert (cell.planned, cell.attempted, cell.completed, cell.not_attempted) == (None, 1, 1, None)


def test_a_damaged_plan_is_one_line(rundir):
    (rundir / "allocation.jsonl").write_text('{"run_id": "x"}\n')
    out = run_cli("score", rundir, "--bootstrap", "100")
    assert out.returncode != 0
    assert "allocation.jsonl line 1 is not a planned run" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
