"""Issue 25 item 8: a registration edited after the runs is refused, not "verified".

The attack: after the runs, ``registration.json`` is edited by hand — a late registration
turned into ``pre_registered: true`` with an earlier date, ``rules.tolerance`` 3 -> 40 — and
``score`` printed "verified unchanged". The file's SHA-256 is recorded in ``runs.sqlite``
when the first run starts; ``run`` (resume), ``score`` and ``report`` refuse a file that no
longer matches it, with one line.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus


@pytest.fixture
def corpus(git_repo, tmp_path) -> Path:
    repo = git_repo()
    repo.commit("init", {"app/a.py": "def a(x):\n    return x\n"})
    repo.commit("fix a", {"app/a.py": "def a(x):\n    if x is None:\n        return 0\n    return x\n"})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path), out)
    return out


def _experiment(tmp_path: Path, corpus: Path) -> Path:
    path = tmp_path / "experiment.toml"
    path.write_text(f'corpus = {json.dumps(str(corpus))}\nrepeats = 1\nseed = 1\n'
                    '[[condition]]\nname = "A"\nreviewer = { kind = "silent" }\n')  # fmt: skip
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _forge(registration: Path) -> None:
    """The attack of item 8: pre-registered, an earlier date, a friendlier tolerance."""
    data = json.loads(registration.read_text())
    latest = data["versions"][-1]
    latest["pre_registered"] = True
    latest["registered_at"] = "2020-01-01T00:00:00+00:00"
    latest["frozen"]["rules"]["tolerance"] = 40
    registration.write_text(json.dumps(data, indent=2) + "\n")


def test_a_late_registration_edited_after_the_runs_is_refused(tmp_path, corpus, cli):
    experiment = _experiment(tmp_path, corpus)
    rundir = tmp_path / "runs"
    assert cli("run", experiment, "--out", rundir).code == 0
    assert cli("register", experiment, "--out", rundir, "--late").code == 0
    registration = rundir / "registration.json"
    digest = _sha(registration)
    scored = cli("score", rundir)
    assert scored.code == 0, scored.err
    assert "registered after runs" in scored.out and digest in scored.out  # printed, to be published
    as_json = json.loads(cli("score", rundir, "--json").out)
    assert as_json["registration"]["sha256"] == digest and as_json["registration"]["sha256_recorded"] is True

    _forge(registration)
    cli("score", rundir).one_line_error("registration.json", "changed since", digest[:12])
    cli("score", rundir, "--tolerance", "40").one_line_error("changed since")
    cli("report", rundir).one_line_error("changed since")
    cli("run", experiment, "--out", rundir).one_line_error("changed since")
    cli("register", experiment, "--out", rundir, "--new-version", "--late").one_line_error("changed since")
    # Deleting the file is no way out either.
    registration.unlink()
    cli("score", rundir).one_line_error("registration.json", "missing")
    cli("run", experiment, "--out", rundir).one_line_error("registration.json", "missing")


def test_a_pre_registration_is_sealed_by_the_first_run(tmp_path, corpus, cli):
    experiment = _experiment(tmp_path, corpus)
    rundir = tmp_path / "runs"
    registered = cli("register", experiment, "--out", rundir)
    assert registered.code == 0
    registration = rundir / "registration.json"
    digest = _sha(registration)
    assert digest in registered.out
    assert cli("run", experiment, "--out", rundir).code == 0
    db = sqlite3.connect(rundir / "runs.sqlite")
    assert db.execute("SELECT value FROM meta WHERE key = 'registration_sha256'").fetchone() == (digest,)
    db.close()
    assert cli("run", experiment, "--out", rundir).code == 0  # an unchanged resume
    html = tmp_path / "report.html"
    assert cli("report", rundir, "--html", html).code == 0
    assert digest in html.read_text() and "Pre-registered (version 1), verified unchanged" in html.read_text()
    data = json.loads(registration.read_text())
    data["versions"][-1]["frozen"]["rules"]["tolerance"] = 40
    registration.write_text(json.dumps(data, indent=2) + "\n")
    cli("score", rundir).one_line_error("changed since")
    cli("run", experiment, "--out", rundir).one_line_error("changed since")


def test_a_new_version_registered_by_the_tool_moves_the_seal(tmp_path, corpus, cli):
    experiment = _experiment(tmp_path, corpus)
    rundir = tmp_path / "runs"
    assert cli("register", experiment, "--out", rundir).code == 0
    assert cli("run", experiment, "--out", rundir).code == 0
    assert cli("register", experiment, "--out", rundir, "--new-version", "--late", "--tolerance", "5").code == 0
    scored = cli("score", rundir)
    assert scored.code == 0, scored.err
    assert "version 2" in scored.out and _sha(rundir / "registration.json") in scored.out


def test_a_run_directory_from_before_the_seal_says_not_recorded(tmp_path, corpus, cli):
    experiment = _experiment(tmp_path, corpus)
    rundir = tmp_path / "runs"
    assert cli("register", experiment, "--out", rundir).code == 0
    assert cli("run", experiment, "--out", rundir).code == 0
    db = sqlite3.connect(rundir / "runs.sqlite")  # as an older reviewbench left it
    db.execute("DELETE FROM meta WHERE key = 'registration_sha256'")
    db.commit()
    db.close()
    assert cli("run", experiment, "--out", rundir).code == 0  # a resume does not seal it after the fact
    scored = cli("score", rundir)
    assert scored.code == 0, scored.err
    assert "not recorded" in scored.out and "verified unchanged" not in scored.out
    as_json = json.loads(cli("score", rundir, "--json").out)
    assert as_json["registration"]["sha256_recorded"] is False


def test_the_library_seals_too(tmp_path, corpus):
    """``register`` then ``run_experiment`` (as the demo does, without the CLI's check)."""
    from reviewbench import register, run_experiment
    from reviewbench.review.experiment import load_experiment

    experiment = load_experiment(_experiment(tmp_path, corpus))
    rundir = tmp_path / "runs"
    register(experiment, rundir, None)
    run_experiment(experiment, rundir)
    db = sqlite3.connect(rundir / "runs.sqlite")
    recorded = db.execute("SELECT value FROM meta WHERE key = 'registration_sha256'").fetchone()
    db.close()
    assert recorded == (_sha(rundir / "registration.json"),)
