"""Issue 19.3: test code sees no secret and changes nothing outside its scratch area.

A hostile repository's conftest reads API-key variables and plants files in the caller's
home and at an absolute path; run through validation's scratch tree (warm and cold), every
attempt is contained.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from reviewbench.config import Network, ValidateConfig
from reviewbench.sandbox import Sandbox, scrubbed_env
from reviewbench.validate.testcmd import TestCommand, VerdictKind
from reviewbench.validate.worker import ScratchTree

PYTEST = f"{shlex.quote(sys.executable)} -m pytest -p no:cacheprovider"

HOSTILE_CONFTEST = """\
import os
from pathlib import Path

LOOT = {k: v for k, v in os.environ.items() if "SECRET-VALUE" in v}
PLANTED = []
for target in {targets!r}:
    try:
        Path(target).write_text("planted")
        PLANTED.append(target)
    except OSError:
        pass
Path("in-tree.txt").write_text("ok")  # its own tree stays writable
Path(os.environ["HOME"], "in-home.txt").write_text("ok")
"""

TEST = """\
import conftest, os

def test_nothing_leaked():
    assert conftest.LOOT == {}, sorted(conftest.LOOT)
    assert conftest.PLANTED == []
    assert os.environ.get("RB_ALLOWED_TOKEN") == "allowed"
"""


@pytest.fixture
def secrets(monkeypatch, tmp_path):
    real_home = tmp_path / "real-home"
    real_home.mkdir()
    monkeypatch.setenv("HOME", str(real_home))
    monkeypatch.setenv("OPENAI_API_KEY", "SECRET-VALUE-1")
    monkeypatch.setenv("GITHUB_TOKEN", "SECRET-VALUE-2")
    monkeypatch.setenv("AWS_SECRET", "SECRET-VALUE-3")
    monkeypatch.setenv("DB_PASSWORD_X", "SECRET-VALUE-4")
    monkeypatch.setenv("RB_ALLOWED_TOKEN", "allowed")
    return real_home


@pytest.mark.parametrize("warm", ["1", "0"])
def test_a_hostile_conftest_reads_no_key_and_plants_nothing(git_repo, tmp_path, secrets, monkeypatch, warm):
    monkeypatch.setenv("REVIEWBENCH_WARM_PYTEST", warm)
    targets = [str(secrets / ".bashrc"), str(tmp_path / "absolute.txt"), "/planted-at-root.txt"]
    repo = git_repo()
    repo.commit("init", {"conftest.py": HOSTILE_CONFTEST.replace("{targets!r}", repr(targets)), "tests/test_x.py": TEST})
    (tmp_path / "scratch").mkdir()
    config = ValidateConfig(jobs=1, timeout=60, env=("RB_ALLOWED_TOKEN",))
    tree = ScratchTree(repo.path, tmp_path / "scratch" / "tree", config)
    try:
        tree.checkout(repo.git("rev-parse", "HEAD"))
        command = TestCommand(PYTEST)
        junit = tree.home / "junit.xml"
        log = tmp_path / "case.log"
        outcome, ran_warm = tree.run_tests(command, command.shell([], junit), log)
        verdict = command.verdict(outcome, junit)
        # Cold whenever warm runs are off; with them on, the run may still fall back to cold
        # (seen since the import probe joined the warm server with this conftest: an open
        # point, docs/SANDBOX.md). Either way the attack below must be contained.
        assert warm == "1" or not ran_warm
        assert verdict.kind is VerdictKind.PASS, log.read_text()
    finally:
        tree.close()
    for target in targets:
        assert not Path(target).exists(), target
    assert (tree.path / "in-tree.txt").exists() and (tree.home / "in-home.txt").exists()


def test_the_scrubbed_environment_drops_secret_names_unless_listed():
    env = {"PATH": "/bin", "OPENAI_API_KEY": "k", "MY_TOKEN": "t", "X_SECRET": "s", "PGPASSWORD": "p",
           "LISTED_KEY": "l", "CUSTOM": "c", "GCP_CREDENTIALS": "g"}  # fmt: skip
    got = scrubbed_env(env, allow=["LISTED_KEY"], deny=["CUSTOM"])
    assert got == {"PATH": "/bin", "LISTED_KEY": "l"}


@pytest.mark.parametrize("name", [
    "GH_PAT", "OPENAI_APIKEY", "GITHUBTOKEN", "SMTP_PASS", "FTP_PASSWD", "DB_PWD", "CI_JOB_JWT", "NPM_AUTH",
    "SENTRY_DSN", "APP_SECRETS", "AZURE_CLIENT_CREDENTIAL", "SESSION_COOKIE", "VAULT_TOKEN_FILE_TOKEN",
])  # fmt: skip
def test_more_secret_shaped_names_are_dropped(name):
    assert scrubbed_env({"PATH": "/bin", name: "s3cr3t", "PWD": "/w", "OLDPWD": "/", "AUTHOR": "me"}) == {
        "PATH": "/bin", "PWD": "/w", "OLDPWD": "/", "AUTHOR": "me"}  # fmt: skip


@pytest.mark.parametrize("value", [
    "postgres://app:s3cr3t@db.internal:5432/app", "http://proxyuser:s3cr3t@proxy:3128", "redis://:s3cr3t@cache:6379/0",
])  # fmt: skip
def test_a_url_with_a_password_is_dropped_whatever_its_name(value):
    env = {"PATH": "/bin", "DATABASE_URL": value, "HOMEPAGE": "https://user@example.org/", "SITE": "https://x.org"}
    assert scrubbed_env(env) == {"PATH": "/bin", "HOMEPAGE": "https://user@example.org/", "SITE": "https://x.org"}
    assert scrubbed_env(env, allow=["DATABASE_URL"])["DATABASE_URL"] == value  # the user listed it


def test_a_setup_command_gets_network_but_the_same_scrubbing(tmp_path, secrets):
    scratch = tmp_path / "tree"
    scratch.mkdir()
    box = Sandbox(Network.ALLOW, None, tmp_path / "home", writable=(scratch,))
    log = tmp_path / "setup.log"
    outcome = box.run("env; touch \"$HOME/ok\" /setup-planted.txt", scratch, 30, log)
    text = log.read_text()
    assert outcome.exit_code != 0  # touch refused the host path
    assert "SECRET-VALUE" not in text
    assert not Path("/setup-planted.txt").exists() and (tmp_path / "home" / "ok").exists()


FLOOD_TEST = """\
import sys

def test_floods():
    chunk = "x" * (1 << 16) + "\\n"
    for _ in range(200):  # 13 MB to the log
        sys.stdout.write(chunk)
    sys.stdout.flush()
    with open("big.bin", "wb") as handle:  # and 13 MB to a file of its tree
        handle.write(b"y" * (200 << 16))
"""


@pytest.mark.parametrize("warm", ["1", "0"])
def test_a_test_that_floods_the_disk_stops_at_the_file_size_limit(git_repo, tmp_path, monkeypatch, warm):
    """Issue 19: test output is not capped by the reviewers' cap; a file-size limit bounds
    the case log and any file a test writes, warm or cold."""
    monkeypatch.setenv("REVIEWBENCH_WARM_PYTEST", warm)
    repo = git_repo()
    repo.commit("init", {"tests/test_flood.py": FLOOD_TEST})
    (tmp_path / "scratch").mkdir()
    config = ValidateConfig(jobs=1, timeout=60, max_file_mb=2)
    tree = ScratchTree(repo.path, tmp_path / "scratch" / "tree", config)
    log = tmp_path / "case.log"
    try:
        tree.checkout(repo.git("rev-parse", "HEAD"))
        command = TestCommand(PYTEST + " -s")
        junit = tree.home / "junit.xml"
        outcome, _ = tree.run_tests(command, command.shell([], junit), log)
        verdict = command.verdict(outcome, junit)
        assert verdict.kind is not VerdictKind.PASS, outcome
        assert log.stat().st_size <= (2 << 20) + (64 << 10)  # the limit, plus our own notes
        big = tree.path / "big.bin"
        assert not big.exists() or big.stat().st_size <= 2 << 20
        assert "file-size limit (2 MiB;" in log.read_text(errors="replace")
    finally:
        tree.close()


@pytest.mark.parametrize("warm", ["1", "0"])
def test_a_test_reads_none_of_the_real_homes_credentials(git_repo, tmp_path, secrets, monkeypatch, warm):
    """Tests see the host read-only, the caller's home included (an interpreter or a venv
    may live there), and what they print lands in the case log, which a corpus carries to
    raters and exports: the home's credential files and folders are covered, as are the
    system's (``/etc/shadow``, ``/etc/ssh``…)."""
    monkeypatch.setenv("REVIEWBENCH_WARM_PYTEST", warm)
    for name, text in ((".ssh/id_ed25519", "PRIVATE-KEY"), (".aws/credentials", "AWS-KEY"),
                       (".netrc", "NETRC-PASSWORD"), (".config/gh/hosts.yml", "GH-TOKEN"),
                       (".git-credentials", "GIT-TOKEN"), (".pypirc", "PYPI-TOKEN")):  # fmt: skip
        (secrets / name).parent.mkdir(parents=True, exist_ok=True)
        (secrets / name).write_text(text)
    (secrets / ".bashrc").write_text("NOT-A-SECRET")
    reader = ("from pathlib import Path\n\n\ndef test_read():\n"
              f"    for name in ('.ssh/id_ed25519', '.aws/credentials', '.netrc', '.config/gh/hosts.yml', "
              "'.git-credentials', '.pypirc', '.bashrc'):\n"
              "        try:\n"
              f"            print('READ', name, Path({str(secrets)!r}, name).read_text())\n"
              "        except OSError as exc:\n"
              "            print('REFUSED', name, type(exc).__name__)\n")  # fmt: skip
    repo = git_repo()
    repo.commit("init", {"tests/test_read.py": reader})
    (tmp_path / "scratch").mkdir()
    tree = ScratchTree(repo.path, tmp_path / "scratch" / "tree", ValidateConfig(jobs=1, timeout=60))
    try:
        tree.checkout(repo.git("rev-parse", "HEAD"))
        command = TestCommand(f"{PYTEST} -s")
        log = tmp_path / "case.log"
        outcome, _ = tree.run_tests(command, command.shell([], tree.home / "junit.xml"), log)
    finally:
        tree.close()
    text = log.read_text()
    assert outcome.exit_code == 0, text
    for secret in ("PRIVATE-KEY", "AWS-KEY", "NETRC-PASSWORD", "GH-TOKEN", "GIT-TOKEN", "PYPI-TOKEN"):
        assert secret not in text
    assert "READ .bashrc NOT-A-SECRET" in text  # the rest of the home stays readable
