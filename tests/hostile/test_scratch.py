"""Attack 15 (scratch areas): a run leaves no tree folder behind, and the folders of a
killed run are swept by the next one (only those of dead processes)."""

from __future__ import annotations

import json
import os

import pytest

from reviewbench import MineConfig, mine_corpus


@pytest.mark.parametrize("context", ["diff", "tree"])
def test_runs_leave_no_tree_folders_and_sweep_dead_ones(git_repo, tmp_path, cli_process, context):
    repo = git_repo()
    repo.commit("init", {"app/a.py": "def a(x):\n    return x\n"})
    repo.commit(
        "fix a", {"app/a.py": "def a(x):\n    if x is None:\n        return 0\n    return x\n"}
    )
    mine_corpus(MineConfig(repo=repo.path), tmp_path / "corpus")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    dead = scratch / "reviewbench-trees-999999999-stale"  # no such pid
    (dead / "case-x").mkdir(parents=True)
    (dead / "case-x" / "f.py").write_text("x")
    os.chmod(dead / "case-x", 0o500)
    alive = scratch / f"reviewbench-trees-{os.getpid()}-live"  # this process: kept
    alive.mkdir()
    experiment = tmp_path / "experiment.toml"
    experiment.write_text(f"corpus = {json.dumps(str(tmp_path / 'corpus'))}\nrepeats = 1\n"
                          f'[[condition]]\nname = "A"\ncontext = "{context}"\nreviewer = {{ kind = "flag_all" }}\n')  # fmt: skip
    result = cli_process("run", experiment, "--out", tmp_path / "runs", env={"TMPDIR": str(scratch)})
    assert result.code == 0, result.err
    assert sorted(p.name for p in scratch.iterdir()) == [alive.name]


def test_mine_sweeps_the_stage_of_a_killed_mine(git_repo, tmp_path, cli):
    repo = git_repo()
    repo.commit("init", {"app/a.py": "def a(x):\n    return x\n"})
    repo.commit("fix a", {"app/a.py": "def a(x):\n    return x or 0\n"})
    stale = tmp_path / ".corpus.999999999-abcd.tmp"  # what kill -9 during mine leaves
    (stale / "patches").mkdir(parents=True)
    live = tmp_path / f".corpus.{os.getpid()}-abcd.tmp"
    live.mkdir()
    result = cli("mine", repo.path, "--out", tmp_path / "corpus")
    assert result.code == 0, result.err
    assert not stale.exists() and live.exists()


def test_a_command_reviewer_sweeps_agent_scratch_of_killed_runs(tmp_path, monkeypatch):
    # kill -9 during a command review left its scratch HOME/TMPDIR (reviewbench-agent-*) in
    # /tmp for good: it named no owner. (The forge's push areas: test_forge.py's kill -9 test.)
    import asyncio

    from reviewbench.config.reviewers import CommandConfig
    from reviewbench.records import ReviewPacket
    from reviewbench.reviewers import make_reviewer

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr("tempfile.tempdir", None)
    stale = scratch / "reviewbench-agent-999999999-stale"  # no such pid
    (stale / "home").mkdir(parents=True)
    live = scratch / f"reviewbench-agent-{os.getpid()}-live"  # this process: kept
    live.mkdir()
    packet = ReviewPacket(case_id="c1", title="t", diff="", paths=["a.py"], prompt="Review.")
    seen = asyncio.run(make_reviewer(CommandConfig(kind="command", command="echo NO_ISSUES; pwd",
                                                   sandbox=False, network=True)).review(packet, None))  # fmt: skip
    assert seen.text.startswith("NO_ISSUES")
    assert f"reviewbench-agent-{os.getpid()}-" in seen.text  # its own scratch names its owner
    assert sorted(p.name for p in scratch.iterdir()) == [live.name]
