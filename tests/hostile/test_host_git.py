"""Issue 25.1–2: code that reviewbench runs untrusted (a repository's tests, a setup
command, a solver) may write the git metadata of its tree; git that reviewbench then runs
on the host must never execute what was planted there.

Each attack plants every door git has — hooks in the tree's git directory, a
``core.hooksPath`` into the tree, ``core.fsmonitor``, and a clean/smudge filter assigned by
``info/attributes`` — then lets reviewbench do its host-side git work (checkout, clean,
apply, ls-files, check-ignore, add). A marker file outside every sandbox records any
execution, with the secret variable it could read.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from reviewbench.config import ValidateConfig
from reviewbench.tasks.export import export_base
from reviewbench.validate.products import SetupProducts
from reviewbench.validate.testcmd import TestCommand, VerdictKind
from reviewbench.validate.worker import ScratchTree

PYTEST = f"{shlex.quote(sys.executable)} -m pytest -p no:cacheprovider"

#: Plants everything into every git directory the tree can reach (a ``.git`` folder, the
#: folder a ``.git`` file points at), and, when ``.git`` is a file, replaces it by a folder.
PLANT = """\
import os
from pathlib import Path

MARK = {mark!r}
ROOT = Path({root!r}) if {root!r} else Path(__file__).resolve().parent
HOOK = "#!/bin/sh\\necho HOST-EXEC key=$OPENAI_API_KEY >> " + MARK + "\\ncat\\n"


def plant(gd):
    try:
        hooks = gd / "hooks"
        hooks.mkdir(parents=True, exist_ok=True)
        own = ROOT / "hooks-here"
        own.mkdir(exist_ok=True)
        for folder in (hooks, own):
            for name in ("post-checkout", "pre-commit", "post-index-change", "reference-transaction",
                         "pre-auto-gc", "post-rewrite"):
                path = folder / name
                path.write_text(HOOK)
                path.chmod(0o755)
        monitor = ROOT / "monitor.sh"
        monitor.write_text(HOOK)
        monitor.chmod(0o755)
        with open(gd / "config", "a") as handle:
            handle.write(f"[core]\\n\\tfsmonitor = {{monitor}}\\n\\thooksPath = {{own}}\\n"
                         f"[filter \\"evil\\"]\\n\\tclean = {{monitor}}\\n\\tsmudge = {{monitor}}\\n")
        (gd / "info").mkdir(exist_ok=True)
        (gd / "info" / "attributes").write_text("* filter=evil\\n")
        (ROOT / ".gitattributes").write_text("* filter=evil\\n")
    except OSError:
        pass


dot = ROOT / ".git"
if dot.is_file():
    text = dot.read_text().strip()
    if text.startswith("gitdir:"):
        plant(Path(text[7:].strip()))
    try:
        dot.unlink()
        plant(dot)
    except OSError:
        pass
else:
    plant(dot)
"""

TEST = "def test_ok():\n    assert True\n"


def _plant(mark: Path, root: str = "") -> str:
    return PLANT.format(mark=str(mark), root=root)


@pytest.fixture
def secret(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "REAL-KEY-VALUE")


def test_tests_that_plant_git_doors_in_the_scratch_tree_never_run_on_the_host(git_repo, tmp_path, secret):
    mark = tmp_path / "HOST-EXEC"
    repo = git_repo()
    repo.commit("init", {"conftest.py": _plant(mark), "tests/test_x.py": TEST, "app.py": "x = 1\n"})
    first = repo.git("rev-parse", "HEAD")
    repo.commit("two", {"app.py": "x = 2\n"})
    second = repo.git("rev-parse", "HEAD")
    patch = tmp_path / "case.diff"
    patch.write_text("--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 2\n+x = 3\n")
    (tmp_path / "scratch").mkdir()
    tree = ScratchTree(repo.path, tmp_path / "scratch" / "tree", ValidateConfig(jobs=1, timeout=60))
    command = TestCommand(PYTEST)
    try:
        for rev in (first, second, first, second):  # the worker reuses its tree case after case
            tree.checkout(rev)
            junit = tree.home / "junit.xml"
            log = tmp_path / "case.log"
            outcome, _ = tree.run_tests(command, command.shell([], junit), log)
            assert command.verdict(outcome, junit).kind is VerdictKind.PASS, log.read_text()
        tree.checkout(second)
        assert tree.apply(patch)
        SetupProducts.of(tree)  # untracked files of the tree, as the setup step lists them
        tree.checkout(first)
        assert SetupProducts.of(tree).restore(tree) == []
    finally:
        tree.close()
    assert not mark.exists(), mark.read_text()
    # The tree still works as a repository for the next case, and the host's view of it
    # is the commit's, whatever the tests left.
    assert (tree.path / "app.py").read_text() == "x = 1\n"


def test_a_setup_command_that_plants_git_doors_runs_nothing_on_the_host(git_repo, tmp_path, secret):
    """``--setup-cmd`` runs with the network in the tree; its products are then listed with
    git on the host."""
    mark = tmp_path / "HOST-EXEC"
    repo = git_repo()
    repo.commit("init", {"plant.py": _plant(mark), "tests/test_x.py": TEST})
    (tmp_path / "scratch").mkdir()
    config = ValidateConfig(jobs=1, timeout=60, setup_cmd=f"{shlex.quote(sys.executable)} plant.py")
    tree = ScratchTree(repo.path, tmp_path / "scratch" / "tree", config)
    try:
        tree.checkout(repo.git("rev-parse", "HEAD"))
        tree.setup(tmp_path / "setup.log")
        tree.checkout(repo.git("rev-parse", "HEAD"))
    finally:
        tree.close()
    assert not mark.exists(), mark.read_text()


def test_a_solver_that_plants_a_filter_in_its_tree_runs_nothing_when_its_patch_is_read(git_repo, tmp_path, secret):
    mark = tmp_path / "HOST-EXEC"
    repo = git_repo()
    repo.commit("init", {"app.py": "x = 1\n"})
    base = export_base(repo.path, repo.git("rev-parse", "HEAD"), "task-1")
    try:
        # What a command solver may do in its writable tree: plant, then change a file.
        namespace: dict[str, object] = {"__file__": str(base.path / "solver.py")}
        exec(compile(_plant(mark, str(base.path)), "solver", "exec"), namespace)  # noqa: S102 - the attack itself
        (base.path / "app.py").write_text("x = 2\n")
        patch = base.patch()
    finally:
        base.remove()
    assert not mark.exists(), mark.read_text()
    assert "+x = 2" in patch
