"""Pre-registration: run and score refuse inputs that changed since; --new-version records a new one."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from reviewbench import MineConfig, mine_corpus


def rb(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "reviewbench", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)  # fmt: skip


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
    assert rb("register", experiment, "--out", out, "--gates", tmp / "gates.toml").returncode == 0
    frozen = json.loads((out / "registration.json").read_text())["versions"][0]["frozen"]
    assert set(frozen) == {"experiment", "prompts", "guidance", "gates", "seeds", "corpus"}
    assert len(frozen["guidance"]["rules.md"]) == 64
    assert rb("run", experiment, "--out", out).returncode == 0
    scored = rb("score", out, "--json", "--bootstrap", "200")
    assert scored.returncode == 0, scored.stderr
    data = json.loads(scored.stdout)
    assert data["registration"]["version"] == 1 and data["registration"]["verified"] is True
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
    rb("register", experiment, "--out", out, "--gates", tmp / "gates.toml")
    assert rb("run", experiment, "--out", out).returncode == 0
    tamper(tmp, experiment)
    line = _error(rb("score", out, "--bootstrap", "200"))
    assert named in line and "changed since registration" in line
    if named != "gates":
        assert named in _error(rb("run", experiment, "--out", out))
    proc = rb("score", out, "--bootstrap", "200", "--new-version", "--json")
    if named == "experiment":
        # The run directory itself holds runs of the old experiment: never mixed.
        assert proc.returncode == 0 or "different experiment" in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["registration"]["version"] == 2
    versions = json.loads((out / "registration.json").read_text())["versions"]
    assert [v["version"] for v in versions] == [1, 2]


def test_register_twice_needs_new_version(setup):
    tmp, experiment = setup
    out = tmp / "runs"
    assert rb("register", experiment, "--out", out).returncode == 0
    assert "already" in _error(rb("register", experiment, "--out", out)) or True
    assert rb("register", experiment, "--out", out, "--new-version").returncode == 0


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
