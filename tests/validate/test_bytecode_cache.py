"""Cold runs keep compiled code between runs, as checked-hash .pyc files, and only for the same bytes."""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from pathlib import Path

import pytest

from reviewbench.config import ValidateConfig
from reviewbench.validate import _bytecode_cache as cache
from reviewbench.validate.testcmd import TestCommand, VerdictKind
from reviewbench.validate.worker import ScratchTree

PYTEST = f"{shlex.quote(sys.executable)} -m pytest"
MODULE = "def a():\n    return 1\n"
TEST = "from pkg.a import a\n\ndef test_a():\n    assert a() == 1\n"


@pytest.fixture
def cold_tree(git_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("REVIEWBENCH_WARM_PYTEST", "0")
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/a.py": MODULE, "tests/test_a.py": TEST})
    (tmp_path / "scratch").mkdir()
    tree = ScratchTree(repo.path, tmp_path / "scratch" / "tree", ValidateConfig(jobs=1, timeout=60))
    tree.checkout(repo.git("rev-parse", "HEAD"))
    yield tree
    tree.close()


def _run(tree: ScratchTree, log: Path):
    command = TestCommand(PYTEST)
    junit = tree.home / "junit.xml"
    junit.unlink(missing_ok=True)
    outcome, warm = tree.run_tests(command, command.shell([], junit, tree.home / "probe.json"), log)
    return command.verdict(outcome, junit), warm


def _entries(tree: ScratchTree) -> list[Path]:
    return sorted((tree.home / cache.FOLDER).rglob("*.pyc"))


def _compile_entry(tree: ScratchTree, source: str) -> str:
    path = str(tree.path / "pkg" / "a.py")
    return cache.entry_path(str(tree.home / cache.FOLDER), "compile", path, source.encode(), (-1, sys.flags.optimize))


def _edit_keeping_size_and_mtime(path: Path, text: str) -> None:
    stamp = path.stat().st_mtime_ns
    assert len(text.encode()) == path.stat().st_size
    path.write_text(text)
    os.utime(path, ns=(stamp, stamp))


def test_a_cold_run_keeps_its_code_and_sees_an_edit_that_keeps_size_and_mtime(cold_tree, tmp_path):
    """The first cold run leaves checked-hash .pyc files (the module compiled, the test
    rewritten by pytest) outside the tree; edits that keep a file's size and modification
    time are still seen by the next runs, since entries are found by the source's bytes."""
    log = tmp_path / "case.log"
    first, warm = _run(cold_tree, log)
    assert not warm and first.kind is VerdictKind.PASS
    kept = _entries(cold_tree)
    assert Path(_compile_entry(cold_tree, MODULE)) in kept
    assert len(kept) >= 3  # pkg/__init__.py, pkg/a.py, tests/test_a.py (rewritten) at least
    header = kept[0].read_bytes()[:8]
    assert header == importlib.util.MAGIC_NUMBER + (0b11).to_bytes(4, "little")  # PEP 552: checked hash
    assert cold_tree.pristine()  # nothing was written in the tree

    _edit_keeping_size_and_mtime(cold_tree.path / "pkg" / "a.py", MODULE.replace("1", "2"))
    second, _ = _run(cold_tree, log)
    assert second.kind is VerdictKind.FAIL
    _edit_keeping_size_and_mtime(cold_tree.path / "tests" / "test_a.py", TEST.replace("== 1", "== 2"))
    third, _ = _run(cold_tree, log)
    assert third.kind is VerdictKind.PASS


def test_a_kept_entry_serves_the_same_bytes_and_no_others(cold_tree, tmp_path):
    """Other code planted under the entry of pkg/a.py's source shows that a cold run uses
    the kept code (the test fails on unchanged source: ``a()`` returns the planted 5) and
    only for those bytes: the same-sized ``   return  1`` (same meaning, other bytes) is
    compiled afresh and passes; the original bytes, restored, get the planted code again."""
    log = tmp_path / "case.log"
    module = cold_tree.path / "pkg" / "a.py"
    assert _run(cold_tree, log)[0].kind is VerdictKind.PASS
    planted = compile("def a():\n    return 5\n", str(module), "exec")
    cache.store(_compile_entry(cold_tree, MODULE), MODULE.encode(), planted)
    assert _run(cold_tree, log)[0].kind is VerdictKind.FAIL
    _edit_keeping_size_and_mtime(module, "def a():\n   return  1\n")
    assert _run(cold_tree, log)[0].kind is VerdictKind.PASS
    _edit_keeping_size_and_mtime(module, MODULE)
    assert _run(cold_tree, log)[0].kind is VerdictKind.FAIL


def test_warm_runs_leave_compiling_to_their_server(git_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("REVIEWBENCH_WARM_PYTEST", "1")
    repo = git_repo()
    repo.commit("init", {"pkg/__init__.py": "", "pkg/a.py": MODULE, "tests/test_a.py": TEST})
    (tmp_path / "scratch").mkdir()
    tree = ScratchTree(repo.path, tmp_path / "scratch" / "tree", ValidateConfig(jobs=1, timeout=60))
    tree.checkout(repo.git("rev-parse", "HEAD"))
    try:
        verdict, warm = _run(tree, tmp_path / "case.log")
        assert warm and verdict.kind is VerdictKind.PASS
        assert _entries(tree) == []
    finally:
        tree.close()


def test_an_entry_for_other_bytes_or_damaged_is_not_loaded(tmp_path):
    source = b"x = 1\n"
    entry = cache.entry_path(str(tmp_path), "compile", "/t/m.py", source, (-1, 0))
    code = compile(source, "/t/m.py", "exec")
    assert cache.load(entry, source) is None  # absent
    cache.store(entry, source, code)
    assert cache.load(entry, source) == code
    assert cache.load(entry, b"x = 2\n") is None  # the header's source hash differs
    data = Path(entry).read_bytes()
    Path(entry).write_bytes(data[:20])
    assert cache.load(entry, source) is None  # truncated
    assert cache.entry_path(str(tmp_path), "compile", "/t/n.py", source, (-1, 0)) != entry
    assert cache.entry_path(str(tmp_path), "rewrite", "/t/m.py", source, (-1, 0)) != entry
    assert cache.entry_path(str(tmp_path), "compile", "/t/m.py", source, (2, 0)) != entry


def test_a_file_keeps_the_versions_used_last(tmp_path):
    """KEEP = 4: versions 0..3 stored, oldest first; version 0 is used again, then version
    4 is stored: version 1, now the least recently used, is the one dropped."""
    entries = []
    for version in range(5):
        source = f"x = {version}\n".encode()
        entries.append((cache.entry_path(str(tmp_path), "compile", "/t/m.py", source, (-1, 0)), source))
    base = os.stat(tmp_path).st_mtime_ns - 100 * 10**9
    for version, (entry, source) in enumerate(entries[:4]):
        cache.store(entry, source, compile(source, "/t/m.py", "exec"))
        os.utime(entry, ns=(base + version * 10**9,) * 2)
    assert cache.load(*entries[0]) is not None
    cache.store(entries[4][0], entries[4][1], compile(entries[4][1], "/t/m.py", "exec"))
    assert [os.path.exists(entry) for entry, _ in entries] == [True, False, True, True, True]
