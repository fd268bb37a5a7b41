"""Attack 16 (validate side): Ray's start-up banner stays out of validate's output."""

from __future__ import annotations

import os

import pytest

from reviewbench import MineConfig, mine_corpus

pytest.importorskip("ray")


def test_ray_start_up_prints_nothing_of_its_own(git_repo, tmp_path, cli_process):
    repo = git_repo()
    repo.commit("init", {"calc.py": "def inc(x):\n    return x\n", "test_calc.py":
                         "from calc import inc\n\n\ndef test_inc():\n    assert inc(1) == 2\n"})  # fmt: skip
    repo.commit("fix inc", {"calc.py": "def inc(x):\n    return x + 1\n"})
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0), tmp_path / "corpus")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["HOME"] = str(tmp_path)  # no ~/.ray token: Ray's default mode, which announces itself
    result = cli_process("validate", tmp_path / "corpus", "--executor", "ray", "--jobs", "1", "--test-cmd",
                 "python -m pytest -q -p no:cacheprovider", env=env, timeout=600)  # fmt: skip
    assert result.code == 0, result.err
    assert "Token authentication" not in result.err + result.out
    assert "Validated " in result.out
