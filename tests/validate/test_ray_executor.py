"""The Ray executor gives the same statuses as the local one, on a real local Ray runtime."""

from __future__ import annotations

import shutil

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config import ValidateConfig
from reviewbench.validate import validate_corpus

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'reviewbench[ray]'")


@pytest.fixture(scope="module")
def ray_runtime():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_local_and_ray_agree(ray_runtime, git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {
        "pkg/__init__.py": "",
        "pkg/a.py": "def a():\n    return 1\n",
        "pkg/b.py": "def b():\n    return 1\n",
        "tests/test_base.py": "def test_ok():\n    assert True\n",
    })  # fmt: skip
    repo.commit("fix a", {"pkg/a.py": "def a():\n    return 2\n",
                          "tests/test_a.py": "from pkg.a import a\n\ndef test_a():\n    assert a() == 2\n"})  # fmt: skip
    repo.commit("fix b", {"pkg/b.py": "def b():\n    return 2\n"})
    local = tmp_path / "local"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), local)
    remote = tmp_path / "ray"
    shutil.copytree(local, remote)
    validate_corpus(local, ValidateConfig(jobs=2, timeout=60))
    validate_corpus(remote, ValidateConfig(jobs=2, timeout=60, executor="ray"))

    def statuses(path):
        return {g.case_id: (g.validation.status, tuple(g.validation.failing_tests), g.validation.selection)
                for g in read_corpus(path).gold}  # fmt: skip

    assert statuses(local) == statuses(remote)
    # pkg/b.py is imported by no test: not_exercised, on Ray as locally.
    assert sorted(s[0] for s in statuses(local).values()) == ["not_exercised", "observed"]
