"""The experiment the runs recorded is read as a typed record, tolerant of older formats."""

from __future__ import annotations

import json

from reviewbench import score_run
from reviewbench.score.calibration import calibration_kind
from reviewbench.score.inputs import load_inputs
from reviewbench.score.recorded import RecordedExperiment
from reviewbench.store.runs import RunStore

from .runsets import Reviewer, write_corpus, write_runs


def test_unknown_tables_and_missing_reviewer_are_kept_not_refused():
    recorded = RecordedExperiment.model_validate({
        "corpus": "c", "retired_table": {"x": 1}, "cutoff": "2025-01-01",
        "condition": [{"name": "A", "reviewer": {"kind": "silent"}, "repeats_old": 3}, {"name": "B"}],
    })  # fmt: skip
    assert recorded.names() == ["A", "B"]
    assert recorded.find("A").kind == "silent" and recorded.find("A").model is None
    assert recorded.find("B").kind is None and recorded.find("C") is None
    # compare shows everything recorded for a condition but its name, unknown keys included.
    assert recorded.find("A").settings() == {"reviewer": {"kind": "silent"}, "repeats_old": 3}
    assert recorded.cutoff == "2025-01-01"


def test_a_run_directory_with_an_older_experiment_scores_as_recorded(tmp_path):
    """Two conditions, one a calibration baseline under its recorded kind; the recorded
    experiment carries a table today's config no longer knows and a condition key it never
    had. Scoring reads the order, the baseline's kind and the configured model from it."""
    corpus = write_corpus(tmp_path / "corpus", 6, 3)
    everything = Reviewer(finds=set(range(6)), flags={0, 1, 2}, kind="flag_all")
    rundir = write_runs(tmp_path / "runs", corpus, {"B": Reviewer(finds={0, 1}), "base": everything}, 6, 3)
    store = RunStore(rundir / "runs.sqlite", create=True)
    experiment = json.loads(store.get_meta("experiment"))
    experiment["retired_table"] = {"anything": True}
    experiment["condition"][0]["old_key"] = "kept"
    store.set_meta({"experiment": json.dumps(experiment)})
    store.close()
    result = score_run(rundir).as_json()
    assert list(result["conditions"]) == ["B", "base"]
    assert result["conditions"]["B"]["metrics"]["defect_recall"]["num"] == 2
    assert result["conditions"]["base"]["metrics"]["defect_recall"]["num"] == 6
    inputs = load_inputs(rundir)
    assert calibration_kind(inputs.experiment, "base") == "flag_all"
    assert calibration_kind(inputs.experiment, "B") is None
    assert inputs.experiment.find("B").model == "model-1"
