"""``reviewbench report`` at the command line, through the real ``main`` in-process."""

from __future__ import annotations

import subprocess

from ..conftest import run_cli


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args)


def test_default_writes_rundir_report_html(rundir):
    proc = run("report", str(rundir), "--bootstrap", "200")
    assert proc.returncode == 0, proc.stderr
    target = rundir / "report.html"
    assert f"html report: {target}" in proc.stdout and target.is_file()
    assert "A: authority insufficient evidence; NOT permitted: " in proc.stdout


def test_named_outputs_only(rundir, tmp_path):
    proc = run("report", str(rundir), "--bootstrap", "200", "--csv", str(tmp_path / "csv"),
               "--sarif", str(tmp_path / "f.sarif"), "--condition", "A")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for name in ("runs.csv", "findings.csv", "cases.csv"):
        assert f"csv: {tmp_path / 'csv' / name}" in proc.stdout
    assert f"sarif: {tmp_path / 'f.sarif'}" in proc.stdout
    assert "html report" not in proc.stdout and "B: authority" not in proc.stdout


def test_errors_are_one_line(rundir, tmp_path):
    proc = run("report", str(rundir), "--bootstrap", "200", "--condition", "nope")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no condition named nope" in proc.stderr
    proc = run("report", str(tmp_path))
    assert proc.returncode == 1 and proc.stderr.startswith("reviewbench: error: ") and proc.stderr.count("\n") == 1


def test_help_lists_the_command():
    assert "report" in run("--help").stdout
    out = run("report", "--help").stdout
    assert "--sarif" in out and "--include-unvalidated" in out
