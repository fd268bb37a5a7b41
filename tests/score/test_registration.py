"""Pre-registration: run and score refuse inputs that changed since; --new-version records a new one."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from reviewbench import MineConfig, mine_corpus

from ..conftest import run_cli


def rb(*args, cwd=None):
    return run_cli(*args, cwd=cwd)  # in this process: exit codes and one-line errors are the point


@pytest.fixture
def setup(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"app/a.py": "def a(x):\n    return x\n"})
    repo.commit("fix a", {"app/a.py": "def a(x):\n    return x or 0\n"})
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0), tmp_path / "corpus")
    (tmp_path / "rules.md").write_text("Only report real bugs.\n")
    (tmp_path / "gates.toml").write_text(
        'min_defect_cases = 1\n[fallback]\nname = "none"\npermitted = []\nnot_permitted = ["gating"]\n'
    )
    experiment = tmp_path / "experiment.toml"
    experiment.write_text('corpus = "corpus"\nrepeats = 1\n[[condition]]\nname = "A"\n'
                          'reviewer = { kind = "flag_all" }\nguidance = "rules.md"\n')  # fmt: skip
    return tmp_path, experiment


def _error(proc):
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("reviewbench: error:"), proc.stderr
    return lines[0]


def test_registered_run_and_score_verify(setup):
    tmp, experiment = setup
    out = tmp / "runs"
    assert rb("register", experiment, "--out", out, "--gates", tmp / "gates.toml", "--bootstrap", "200",
              "--owner", "ana", "--approver", "bo").returncode == 0
    version = json.loads((out / "registration.json").read_text())["versions"][0]
    frozen = version["frozen"]
    assert set(frozen) == {"experiment", "prompts", "guidance", "gates", "seeds", "corpus", "rules", "network",
                           "protocol", "rubric"}  # fmt: skip
    assert frozen["rubric"] == {"version": "003-1", "path": "built-in", "sha256": None}
    assert frozen["network"] == {}  # flag_all runs no command: no policy to record
    assert frozen["rules"] == {"tolerance": 3, "include_unvalidated": False, "bootstrap": 200}
    assert version["pre_registered"] is True and version["owner"] == "ana" and version["approver"] == "bo"
    assert len(frozen["guidance"]["rules.md"]) == 64
    assert rb("run", experiment, "--out", out).returncode == 0
    scored = rb("score", out, "--json", "--bootstrap", "200")
    assert scored.returncode == 0, scored.stderr
    data = json.loads(scored.stdout)
    assert data["registration"]["version"] == 1 and data["registration"]["verified"] is True
    assert data["registration"]["pre_registered"] is True and data["registration"]["owner"] == "ana"
    assert data["analysis"]["bootstrap"]["resamples"] == 200  # the registered count, not the default
    assert data["analysis"]["gates"] == str((tmp / "gates.toml").resolve())  # the registered gates
    assert data["conditions"]["A"]["decision"]["not_permitted"] == ["gating"]


@pytest.mark.parametrize("tamper, named", [
    (lambda tmp, exp: (tmp / "rules.md").write_text("Report everything.\n"), "guidance"),
    (lambda tmp, exp: exp.write_text(exp.read_text().replace("repeats = 1", "repeats = 2")), "experiment"),
    (lambda tmp, exp: (tmp / "gates.toml").write_text((tmp / "gates.toml").read_text() + "# edited\n"), "gates"),
])  # fmt: skip
def test_tampering_is_refused_until_a_new_version(setup, tamper, named):
    tmp, experiment = setup
    out = tmp / "runs"
    rb("register", experiment, "--out", out, "--gates", tmp / "gates.toml", "--bootstrap", "200")
    assert rb("run", experiment, "--out", out).returncode == 0
    tamper(tmp, experiment)
    line = _error(rb("score", out, "--bootstrap", "200"))
    assert named in line and "changed since registration" in line
    if named != "gates":
        assert named in _error(rb("run", experiment, "--out", out))
    proc = rb("score", out, "--bootstrap", "200", "--new-version", "--json")
    assert proc.returncode == 0, proc.stderr
    registration = json.loads(proc.stdout)["registration"]
    # The new version was registered after the runs were seen: never called pre-registration.
    assert registration["version"] == 2 and registration["pre_registered"] is False
    versions = json.loads((out / "registration.json").read_text())["versions"]
    assert [v["version"] for v in versions] == [1, 2]


def test_register_twice_needs_new_version(setup):
    tmp, experiment = setup
    out = tmp / "runs"
    assert rb("register", experiment, "--out", out).returncode == 0
    assert "already registered" in _error(rb("register", experiment, "--out", out))
    assert rb("register", experiment, "--out", out, "--new-version").returncode == 0


def test_registering_after_runs_is_refused_unless_late(setup):
    tmp, experiment = setup
    out = tmp / "runs"
    assert rb("run", experiment, "--out", out).returncode == 0
    line = _error(rb("register", experiment, "--out", out, "--bootstrap", "200"))
    assert "already holds 2 runs" in line and "--late" in line  # the case and its mirror
    assert not (out / "registration.json").exists()
    assert rb("register", experiment, "--out", out, "--bootstrap", "200", "--late").returncode == 0
    data = json.loads(rb("score", out, "--json").stdout)
    assert data["registration"]["pre_registered"] is False
    assert "registered after runs" in rb("score", out).stdout


def test_changing_a_frozen_rule_at_score_time_is_refused(setup):
    tmp, experiment = setup
    out = tmp / "runs"
    assert rb("register", experiment, "--out", out, "--bootstrap", "200").returncode == 0
    assert rb("run", experiment, "--out", out).returncode == 0
    assert rb("score", out, "--tolerance", "3").returncode == 0  # as registered
    line = _error(rb("score", out, "--tolerance", "10"))
    assert "tolerance (3 registered, 10 asked) changed since registration" in line
    assert "include_unvalidated" in _error(rb("score", out, "--include-unvalidated"))
    assert "bootstrap (200 registered, 1000 asked)" in _error(rb("score", out, "--bootstrap", "1000"))
    proc = rb("score", out, "--tolerance", "10", "--new-version", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["analysis"]["tolerance"] == 10


@pytest.mark.parametrize("use", ["approval or merge rights", "security sign-off", "Merge the PR automatically"])
def test_gates_that_grant_merge_rights_are_refused(setup, use):
    tmp, experiment = setup
    (tmp / "bad.toml").write_text(f'[fallback]\nname = "none"\npermitted = ["{use}"]\n')
    line = _error(rb("register", experiment, "--out", tmp / "runs", "--gates", tmp / "bad.toml"))
    assert "can never be granted" in line
    assert not (tmp / "runs" / "registration.json").exists()


def test_gates_naming_an_unknown_metric_are_refused_with_the_names(setup):
    tmp, experiment = setup
    (tmp / "typo.toml").write_text('[[tier]]\nname = "t"\nwhen = [{ metric = "defect_recal", op = ">", value = 0.5 }]\n'
                                   '[fallback]\nname = "none"\n')  # fmt: skip
    line = _error(rb("register", experiment, "--out", tmp / "runs", "--gates", tmp / "typo.toml"))
    assert "unknown metric 'defect_recal'" in line and "defect_recall, located_recall" in line
    (tmp / "stratum.toml").write_text('[[tier]]\nname = "t"\nwhen = [{ metric = "defect_recall@mutant", op = ">", '
                                      'value = 0.5 }]\n[fallback]\nname = "none"\n')  # fmt: skip
    assert "unknown stratum" in _error(rb("register", experiment, "--out", tmp / "runs", "--gates",
                                          tmp / "stratum.toml"))  # fmt: skip


def test_corpus_change_is_refused(setup):
    tmp, experiment = setup
    out = tmp / "runs"
    rb("register", experiment, "--out", out)
    gold = tmp / "corpus" / "gold.jsonl"  # a new version of the corpus: gold and meta agree
    gold.write_text(gold.read_text() + "\n")
    meta = json.loads((tmp / "corpus" / "corpus.json").read_text())
    meta["gold_sha256"] = hashlib.sha256(gold.read_bytes()).hexdigest()
    (tmp / "corpus" / "corpus.json").write_text(json.dumps(meta))
    assert "corpus" in _error(rb("run", experiment, "--out", out))


def test_an_experiment_that_cannot_run_is_refused_at_registration_but_a_missing_key_is_not(setup):
    """A mistake in the file itself (sarif without the tree) is refused before anything is
    frozen; a key variable is the running machine's business, not the registration's."""
    tmp, experiment = setup
    text = experiment.read_text()
    experiment.write_text(text + '[[condition]]\nname = "lint"\nreviewer = { kind = "sarif", command = "ruff check ." }\n')
    line = _error(rb("register", experiment, "--out", tmp / "runs"))
    assert "condition lint" in line and 'context = "tree"' in line
    assert not (tmp / "runs" / "registration.json").exists()
    experiment.write_text(text + '[[condition]]\nname = "llm"\nreviewer = { kind = "openai", model = "m", '
                          'base_url = "http://127.0.0.1:9/v1", api_key_env = "RB_NOT_SET_ANYWHERE" }\n')  # fmt: skip
    assert rb("register", experiment, "--out", tmp / "runs").returncode == 0
    assert "RB_NOT_SET_ANYWHERE" in _error(rb("run", experiment, "--out", tmp / "runs"))


# A gates table that grants a tier to anything that ran: what lowering the gates after
# seeing the results looks like.
LOWER = ('min_defect_cases = 0\nmin_controls = 0\nmax_interval_width = 1.0\n[[tier]]\nname = "triage"\n'
         'when = [{ metric = "completion", op = ">=", value = 0.0 }]\npermitted = ["triage"]\n'
         '[fallback]\nname = "none"\npermitted = []\nnot_permitted = ["gating"]\n')  # fmt: skip


def test_gates_lowered_after_the_runs_never_grant_a_tier_on_them(setup):
    """Seed 003: a post-run rule rewrite is a new benchmark version, which needs new runs;
    the runs already made keep the version they ran under."""
    tmp, experiment = setup
    out = tmp / "runs"
    # A reviewer, not a calibration baseline (which never earns a tier whatever the gates).
    experiment.write_text(experiment.read_text() + '[[condition]]\nname = "B"\n'
                          'reviewer = { kind = "command", command = "echo NO_ISSUES" }\n')  # fmt: skip
    assert rb("register", experiment, "--out", out, "--gates", tmp / "gates.toml", "--bootstrap", "200").returncode == 0
    assert rb("run", experiment, "--out", out).returncode == 0
    (tmp / "lower.toml").write_text(LOWER)
    proc = rb("score", out, "--gates", tmp / "lower.toml", "--new-version", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert not any(c["decision"]["status"] == "granted" for c in data["conditions"].values())
    assert data["registration"]["version"] == 2 and data["registration"]["pre_registered"] is False
    assert data["registration"]["scored_runs"] == {"version": 2, "runs": 0, "other_versions": {"1": 4},
                                                   "since": data["registration"]["registered_at"], "until": None}
    assert data["conditions"] == {}  # no run started under version 2
    text = rb("score", out).stdout  # the latest version again: still none of the old runs
    assert "4 runs ran under version 1, not scored under version 2" in " ".join(text.split())
    assert "decision" not in text, text
    assert rb("report", out, "--html", tmp / "report.html").returncode == 0
    page = " ".join((tmp / "report.html").read_text().split())
    assert "4 runs ran under version 1: not scored under version 2" in page and "triage [granted]" not in page
    # The old runs keep their own version, its gates and rules: nothing to override there.
    old = json.loads(rb("score", out, "--version", "1", "--json").stdout)
    assert old["registration"]["version"] == 1 and old["registration"]["scored_runs"]["runs"] == 4
    assert old["analysis"]["gates"] == str((tmp / "gates.toml").resolve())
    assert old["conditions"]["B"]["decision"]["version"] == 1
    assert old["conditions"]["B"]["decision"]["status"] != "granted"
    assert "decision (version 1, pre-registered, no decision owner):" in rb("score", out, "--version", "1", "--details").stdout
    line = _error(rb("score", out, "--version", "1", "--gates", tmp / "lower.toml"))
    assert "version 1" in line and "--gates" in line
    assert "no version 3" in _error(rb("score", out, "--version", "3"))


def test_runs_started_after_a_new_version_are_scored_under_it(setup):
    """A run interrupted under version 1, resumed after version 2: only what ran after it counts."""
    tmp, experiment = setup
    out = tmp / "runs"
    assert rb("register", experiment, "--out", out, "--gates", tmp / "gates.toml", "--bootstrap", "200").returncode == 0
    assert rb("run", experiment, "--out", out).returncode == 0
    assert rb("register", experiment, "--out", out, "--gates", tmp / "gates.toml", "--bootstrap", "300",
              "--new-version", "--late").returncode == 0  # fmt: skip
    db = sqlite3.connect(out / "runs.sqlite")  # as if the run had stopped before this one
    [(run_id,)] = db.execute("SELECT run_id FROM runs LIMIT 1").fetchall()
    with db:
        db.execute("DELETE FROM findings WHERE run_id = ?", (run_id,))
        db.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
    db.close()
    assert rb("run", experiment, "--out", out).returncode == 0  # resumed: the missing run only
    data = json.loads(rb("score", out, "--json").stdout)
    assert data["registration"]["scored_runs"]["runs"] == 1
    assert data["registration"]["scored_runs"]["other_versions"] == {"1": 1}
    assert data["conditions"]["A"]["decision"]["version"] == 2
    assert data["analysis"]["bootstrap"]["resamples"] == 300
    assert "decision (version 2, registered after runs, no decision owner):" in rb("score", out).stdout
    assert rb("report", out, "--html", tmp / "report.html").returncode == 0
    page = (tmp / "report.html").read_text()
    assert "version 2, registered after runs" in page and "1 runs ran under version 1" in page
    old = json.loads(rb("score", out, "--version", "1", "--json").stdout)
    assert old["registration"]["scored_runs"]["runs"] == 1 and old["analysis"]["bootstrap"]["resamples"] == 200


def test_an_unregistered_decision_says_so(setup):
    tmp, experiment = setup
    out = tmp / "runs"
    assert rb("run", experiment, "--out", out).returncode == 0
    assert "decision (not registered):" in rb("score", out, "--bootstrap", "200").stdout
    data = json.loads(rb("score", out, "--bootstrap", "200", "--json").stdout)
    assert data["conditions"]["A"]["decision"]["version"] is None
    assert "not registered" in _error(rb("score", out, "--version", "1"))


def test_a_version_keeps_its_own_table_after_the_file_changes(setup):
    """A registration holds a copy of its gates: after the file (or a later reviewbench's
    built-in table) changes, its runs are still scored by the table they were registered with."""
    tmp, experiment = setup
    out = tmp / "runs"
    gates = tmp / "gates.toml"
    original = gates.read_text()
    assert rb("register", experiment, "--out", out, "--gates", gates, "--bootstrap", "200").returncode == 0
    assert json.loads((out / "registration.json").read_text())["versions"][0]["frozen"]["gates"]["text"] == original
    assert rb("run", experiment, "--out", out).returncode == 0
    gates.write_text(LOWER)  # the file edited after the runs
    assert "gates changed since registration" in _error(rb("score", out))
    proc = rb("score", out, "--version", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["conditions"]["A"]["decision"]["not_permitted"] == ["gating"]  # the registered table's
    assert "text" not in data["registration"]["gates"]
    (tmp / "copy.toml").write_text(original)
    assert rb("score", out, "--version", "1", "--gates", tmp / "copy.toml").returncode == 0
    assert "is not the table version 1 registered" in _error(rb("score", out, "--version", "1", "--gates", gates))
