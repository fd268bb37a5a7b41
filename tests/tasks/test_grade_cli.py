"""``reviewbench tasks grade`` at the command line: JSON, CSV, report.html, one-line errors.

The run directory's solutions are what ``read_solutions`` returns; here it is replaced by
the fixture's solutions so that the command is tested apart from the run store format.
"""

from __future__ import annotations

import csv
import json

import pytest

from reviewbench.cli import main
from reviewbench.tasks import solutions as solutions_module

from ..conftest import run_cli
from .test_grade import FAKE_PASSED, OUTSIDE, _solution, project  # noqa: F401  (fixture)


@pytest.fixture
def rundir(project, tmp_path, monkeypatch):  # noqa: F811
    _, tasks, gold = project
    runs = [
        _solution("gold", gold, condition="A", rep=0), _solution("gold", gold, condition="A", rep=1),
        _solution("fake", FAKE_PASSED, condition="B", rep=0), _solution("none", None, state="failed", condition="B", rep=1),
        _solution("outside", OUTSIDE, condition="C", rep=0),
    ]  # fmt: skip
    rundir = tmp_path / "run"
    rundir.mkdir()
    monkeypatch.setattr(
        solutions_module, "read_solutions", lambda path: (tasks, runs), raising=False
    )
    return rundir


def test_json_rows_conditions_and_files_written(rundir, capsys):
    main(["tasks", "grade", str(rundir), "--json", "--jobs", "2", "--bootstrap", "200"])
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"rows", "conditions", "tasks"}
    rows = {(r["condition"], r["repeat"]): r for r in doc["rows"]}
    assert len(rows) == 5 and rows[("A", 0)]["tests_pass"] and rows[("A", 1)]["tests_pass"]
    assert not rows[("B", 0)]["tests_pass"] and rows[("B", 1)]["status"] == "no_patch"
    assert rows[("C", 0)]["status"] == "rejected" and not rows[("C", 0)]["applies_clean"]
    assert doc["conditions"]["A"]["resolve_rate"] | {"lo": None, "hi": None, "exact": None} == {
        "value": 1.0,
        "num": 2,
        "den": 2,
        "lo": None,
        "hi": None,
        "exact": None,
    }
    assert doc["conditions"]["A"]["paired"]["B"]["pairs"] == 2
    with (rundir / "grades.csv").open(encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert [r["tests_pass"] for r in table] == ["true", "true", "false", "false", "false"]
    html = (rundir / "report.html").read_text(encoding="utf-8")
    assert 'id="fix-tasks"' in html and "Content-Security-Policy" in html


def test_terminal_scoreboard_shows_numerators_and_denominators(rundir, capsys, tmp_path):
    main(
        [
            "tasks",
            "grade",
            str(rundir),
            "--jobs",
            "2",
            "--bootstrap",
            "200",
            "--csv",
            str(tmp_path / "g.csv"),
        ]
    )
    out = capsys.readouterr().out
    assert "Graded 5 runs of 1 tasks (5 now, 0 from an earlier grading)" in out
    assert "1.000 2/2" in out and "0.000 0/2" in out  # A resolves both runs, B neither
    assert "A − B: resolve +1.000 (2/2)" in out and "exact McNemar p = 0.5" in out
    assert (tmp_path / "g.csv").is_file() and not (rundir / "grades.csv").exists()
    # Running again grades nothing anew.
    main(["tasks", "grade", str(rundir), "--bootstrap", "200"])
    assert "(0 now, 5 from an earlier grading)" in capsys.readouterr().out


def test_a_directory_that_is_not_a_run_is_one_line_and_non_zero(tmp_path):
    proc = run_cli("tasks", "grade", tmp_path / "nowhere")
    assert proc.returncode != 0 and proc.stdout == ""
    assert proc.stderr.startswith("reviewbench: error: ") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr


def test_bad_options_are_usage_errors(tmp_path):
    proc = run_cli("tasks", "grade", tmp_path, "--jobs", "0")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--jobs" in proc.stderr
