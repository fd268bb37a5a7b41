"""A repository's remote as a corpus records it: never with the credentials a CI clone's URL
carries (GitLab CI clones from ``https://gitlab-ci-token:TOKEN@host/…``), and a published
dataset names the project, not a folder on the miner's machine."""

from __future__ import annotations

import json

import pytest

from reviewbench.git.remote import project_name, public_remote
from reviewbench.records import RepoInfo

from ..conftest import run_cli

SECRET = "glpat-Zq8sEcReT0kEn"


@pytest.mark.parametrize(("url", "public"), [
    (f"https://gitlab-ci-token:{SECRET}@gitlab.example.com/g/proj.git", "https://gitlab.example.com/g/proj.git"),
    (f"https://{SECRET}@github.com/o/proj.git", "https://github.com/o/proj.git"),  # a token as the user name
    (f"https://x:{SECRET}@[::1]:8443/o/proj?private_token={SECRET}#frag", "https://[::1]:8443/o/proj"),
    (f"ssh://git:{SECRET}@host.example:2222/o/proj.git", "ssh://host.example:2222/o/proj.git"),
    ("https://github.com/o/proj.git", "https://github.com/o/proj.git"),
    ("git@github.com:o/proj.git", "git@github.com:o/proj.git"),  # scp-like: a user name, no password
    ("/srv/mirrors/proj", "/srv/mirrors/proj"),
    ("file:///srv/mirrors/proj.git", "file:///srv/mirrors/proj.git"),
    (None, None),
    ("", None),
])  # fmt: skip
def test_public_remote_drops_user_info_query_and_fragment(url, public):
    assert public_remote(url) == public


@pytest.mark.parametrize(("path", "remote", "name"), [
    ("/home/alice/src/proj", None, "proj"),
    ("/home/alice/src/checkout", "https://github.com/o/boltons.git", "boltons"),
    ("/home/alice/src/checkout", "git@github.com:o/click.git", "click"),
    ("/home/alice/src/proj", "/srv/mirrors/some/repo", "proj"),  # a local path remote names nothing useful
    ("/home/alice/src/proj", f"https://u:{SECRET}@host/o/x%20y.git", "x-20y"),
    ("/", None, "repo"),
])  # fmt: skip
def test_project_name_comes_from_a_url_remote_else_the_folder(path, remote, name):
    assert project_name(path, remote) == name


def test_a_corpus_read_back_loses_credentials_an_older_version_recorded():
    info = RepoInfo.model_validate({"path": "/x", "remote": f"https://ci:{SECRET}@host/o/p.git", "head": "0" * 40})
    assert info.remote == "https://host/o/p.git"


def test_mining_a_ci_clone_writes_no_token_anywhere_and_the_export_names_the_project(git_repo, tmp_path):
    repo = git_repo("checkout-4711")
    repo.commit("Initial import", {"calc.py": "def add(a, b):\n    return a - b\n",
                                   "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n"
                                                         "    assert add(1, 2) == 3\n"})  # fmt: skip
    repo.commit("Fix add", {"calc.py": "def add(a, b):\n    return a + b\n"})
    repo.git("remote", "add", "origin", f"https://gitlab-ci-token:{SECRET}@gitlab.example.com/g/calc.git")
    out = tmp_path / "corpus"
    proc = run_cli("mine", repo.path, "--out", out, "--controls-ratio", "0")
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((out / "corpus.json").read_text())
    assert meta["repo"]["remote"] == "https://gitlab.example.com/g/calc.git"
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    experiment = tmp_path / "experiment.toml"
    experiment.write_text(f'corpus = "{out}"\n[[condition]]\nname = "silent"\nreviewer = {{ kind = "silent" }}\n')
    proc = run_cli("run", experiment, "--out", tmp_path / "runs")
    assert proc.returncode == 0, proc.stderr
    public = tmp_path / "public"
    proc = run_cli("export", tmp_path / "runs", "--format", "hf", "--out", public)
    assert proc.returncode == 0, proc.stderr
    card = (public / "README.md").read_text()
    assert "pretty_name: \"reviewbench corpus of calc\"" in card and "# Code-review cases of calc" in card
    assert str(tmp_path) not in card and SECRET not in card


@pytest.mark.parametrize(("remote", "refused"), [
    (f"https://x-access-token:{SECRET}@github.com/o/r.git", True),
    (f"https://{SECRET}@github.com/o/r.git", True),  # a token as the user name
    (f"ssh://git:{SECRET}@host/o/r.git", True),
    ("ssh://git@github.com/o/r.git", False),  # a login name, the key is ssh's
    ("git@github.com:o/r.git", False),
    ("https://github.com/o/r.git", False),
    ("/srv/bare.git", False),
])  # fmt: skip
def test_a_forge_remote_holding_a_credential_is_refused(remote, refused):
    from pydantic import ValidationError

    from reviewbench.config.reviewers import GithubConfig

    values = {"kind": "github", "repo": "o/r", "remote": remote, "bot": "bot"}
    if refused:
        with pytest.raises(ValidationError, match="remote carries a credential"):
            GithubConfig.model_validate(values)
    else:
        assert GithubConfig.model_validate(values).remote == remote
