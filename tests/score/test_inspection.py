"""Hand inspection: score counts the scored runs and misses people have read (label read)
and asks for a sample of five (label sample) when none has been read."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator

from reviewbench.score import ScoreOptions, score_run

from .runsets import Reviewer, write_corpus, write_runs

OPTIONS = ScoreOptions(bootstrap=200)


def _rundir(tmp_path):
    """2 defect cases (d0, d1, each with a silent mirror) and 2 controls (k0, k1), once; A names
    d0's defect only. Scored runs, by hand: A-d0-0, A-d1-0, A-d0-mirror-0, A-d1-mirror-0,
    A-k0-0, A-k1-0: 6. Misses: d1's one defect on A-d1-0: 1 (clean cases have none)."""
    corpus = write_corpus(tmp_path / "corpus", defects=2, controls=2)
    return write_runs(tmp_path / "runs", corpus, {"A": Reviewer(finds={0})}, defects=2, controls=2)


def _one_error(result):
    lines = result.stderr.strip().splitlines()
    assert result.code == 2 and len(lines) == 1 and lines[0].startswith("reviewbench: error:"), result.stderr
    return lines[0]


def test_nothing_read_asks_for_a_sample_of_five(tmp_path, cli):
    """The sample takes one of each kind in turn: the miss (A-d1-0), the find (A-d0-0), no
    false alarm (A flags nothing), then quiet clean runs (4 of them) for the other three."""
    rundir = _rundir(tmp_path)
    inspection = score_run(rundir, OPTIONS).as_json()["inspection"]
    assert {k: inspection[k] for k in ("runs_scored", "runs_read", "misses", "misses_read", "readers", "enough")} \
        == {"runs_scored": 6, "runs_read": 0, "misses": 1, "misses_read": 0, "readers": [], "enough": False}
    sample = inspection["sample"]
    assert sample[:2] == ["A-d1-0", "A-d0-0"] and len(set(sample)) == 5
    assert set(sample[2:]) < {"A-d0-mirror-0", "A-d1-mirror-0", "A-k0-0", "A-k1-0"}
    picked = json.loads(cli("label", "sample", rundir, "--json").stdout)
    assert [row["run_id"] for row in picked] == sample  # label sample picks what score asks for
    board = " ".join(cli("score", rundir, "--bootstrap", "200").stdout.split())
    assert "hand inspection: 0/6 scored runs, 0/1 misses read; read five first (reviewbench label sample)" in board


def test_readings_are_counted_against_scored_runs_and_misses(tmp_path, cli):
    """ana reads A-d1-0's miss, bo reads control k0's run: 2 of 6 runs read (A-d1-0, A-k0-0),
    1 of 1 misses; 3 more runs to reach five; no sample asked for any more."""
    rundir = _rundir(tmp_path)
    assert cli("label", "read", rundir, "--run", "A-d1-0", "--defect", "d1-1", "--by", "ana",
               "--note", "says nothing of the boundary").code == 0  # fmt: skip
    assert cli("label", "read", rundir, "--run", "A-k0-0", "--by", "bo").code == 0
    log = [json.loads(line) for line in (rundir / "readings.jsonl").read_text().splitlines()]
    assert [(e["kind"], e["run_id"], e["defect_id"], e["by"]) for e in log] == [
        ("miss", "A-d1-0", "d1-1", "ana"), ("run", "A-k0-0", None, "bo")]
    validator = Draft202012Validator(json.loads(cli("schema", "readings").stdout))
    for entry in log:  # the log is what its schema says
        validator.validate(entry)
    inspection = score_run(rundir, OPTIONS).as_json()["inspection"]
    assert (inspection["runs_read"], inspection["misses_read"], inspection["readers"]) == (2, 1, ["ana", "bo"])
    assert inspection["sample"] == [] and inspection["enough"] is False
    board = " ".join(cli("score", rundir, "--bootstrap", "200").stdout.split())
    assert "hand inspection: 2/6 scored runs, 1/1 misses read (3 more to reach five); readers: ana, bo" in board
    left = [row["run_id"] for row in json.loads(cli("label", "sample", rundir, "--json", "--size", "10").stdout)]
    assert sorted(left) == ["A-d0-0", "A-d0-mirror-0", "A-d1-mirror-0", "A-k1-0"]  # never one already read


def test_a_reading_names_a_real_run_and_a_defect_of_its_case(tmp_path, cli):
    rundir = _rundir(tmp_path)
    assert "has no run A-zz-0" in _one_error(cli("label", "read", rundir, "--run", "A-zz-0", "--by", "ana"))
    line = _one_error(cli("label", "read", rundir, "--run", "A-d1-0", "--defect", "d0-1", "--by", "ana"))
    assert "case d1 has no defect d0-1 (its defects: d1-1)" in line
    line = _one_error(cli("label", "read", rundir, "--run", "A-k0-0", "--defect", "d0-1", "--by", "ana"))
    assert "a clean case has no miss" in line
    assert "--by is empty" in _one_error(cli("label", "read", rundir, "--run", "A-k0-0", "--by", " "))
    assert not (rundir / "readings.jsonl").exists()


def test_a_version_with_no_run_scored_asks_for_no_sample():
    """A version registered after the runs scores none of them (its runs are later): there
    is nothing to read, and the line does not ask for five."""
    from reviewbench.report.headline import inspection_line
    from reviewbench.score.result import InspectionSummary

    empty = InspectionSummary(runs_scored=0, runs_read=0, misses=0, misses_read=0, readers=[], enough=False,
                              sample=[], readings="readings.jsonl")  # fmt: skip
    assert inspection_line(empty) == "hand inspection: no run is scored under this version, none to read"
