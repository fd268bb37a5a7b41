"""Attack 1: host files reach a reviewer through symbolic links in a case's tree."""

from __future__ import annotations

import json
import os
from pathlib import Path

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.review.packet import PacketBuilder, drop_escaping_links, read_in_tree

from .conftest import case, gold, write_corpus

SECRET = "HOSTILE-SECRET-7f3a"


def _linked_corpus(git_repo, tmp_path: Path) -> tuple[Path, Path]:
    """A case whose patch turns settings.py into a link out of the tree (relative and to
    /proc/self/environ), adds a link to a host folder, and keeps an honest in-tree link."""
    (tmp_path / "secret.txt").write_text(SECRET)
    repo = git_repo()
    base = repo.commit("init", {"app.py": "def f(x):\n    return x\n"})
    repo.write({"app.py": "def f(x):\n    return x + 1\n"})
    os.symlink("../secret.txt", repo.path / "settings.py")
    os.symlink("/proc/self/environ", repo.path / "env.py")
    os.symlink("/etc", repo.path / "conf")
    os.symlink("app.py", repo.path / "alias.py")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "links")
    patch = repo.git("diff", "--binary", base, "HEAD").encode() + b"\n"
    paths = ["alias.py", "app.py", "conf/passwd", "env.py", "settings.py"]
    corpus = write_corpus(tmp_path / "corpus", repo.path, base, [case("case-1", base, paths=paths)],
                          [gold("case-1")], {"case-1.diff": patch})  # fmt: skip
    return corpus, repo.path


def test_changed_files_never_follow_a_link_out_of_the_tree(git_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("HOSTILE_API_KEY", SECRET)  # what /proc/self/environ would send
    corpus_path, repo = _linked_corpus(git_repo, tmp_path)
    corpus = read_corpus(corpus_path)
    builder = PacketBuilder(corpus.path, repo)
    try:
        packet = builder.packet(corpus.cases[0], "Review.", None, "files")
        tree = builder.tree(corpus.cases[0])
        assert sorted(packet.files) == ["app.py"]  # alias.py is a link too: left out
        assert SECRET not in packet.model_dump_json()
        # The exported tree keeps the in-tree link and loses the three that leave it.
        assert os.readlink(tree / "alias.py") == "app.py"
        for name in ("settings.py", "env.py", "conf"):
            assert not os.path.lexists(tree / name), name
    finally:
        builder.close()


def test_read_in_tree_refuses_links_on_the_way(tmp_path):
    root = tmp_path / "tree"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("ok")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "b.py").write_text(SECRET)
    os.symlink(tmp_path / "outside", root / "via")
    os.symlink("../outside/b.py", root / "pkg" / "b.py")
    assert read_in_tree(root, "pkg/a.py") == b"ok"
    for path in ("via/b.py", "pkg/b.py", "../outside/b.py", "pkg/../../outside/b.py", "pkg"):
        assert read_in_tree(root, path) is None, path


def test_links_that_escape_only_through_other_links_are_dropped(tmp_path):
    """Lexically inside, really outside: d1/d2/b -> ../../x is fine, but
    evil -> d1/d2/b/../.. climbs from x's parent (the root) to above it."""
    root = tmp_path / "tree"
    (root / "d1" / "d2").mkdir(parents=True)
    (root / "x").mkdir()
    os.symlink("../../x", root / "d1" / "d2" / "b")
    os.symlink("d1/d2/b/../..", root / "evil")
    os.symlink("missing/../../..", root / "dangling")
    removed = drop_escaping_links(root)
    assert sorted(removed) == ["dangling", "evil"]
    assert os.path.islink(root / "d1" / "d2" / "b")


def test_a_link_only_fix_is_not_a_source_case(git_repo, tmp_path):
    (tmp_path / "secret.txt").write_text(SECRET)
    repo = git_repo()
    repo.commit("init", {"app.py": "def f(x):\n    return x\n"})
    os.symlink("/proc/self/environ", repo.path / "settings.py")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "add settings")
    # The "fix" only retargets the link.
    (repo.path / "settings.py").unlink()
    os.symlink("../secret.txt", repo.path / "settings.py")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "fix settings link")
    # A fix that turns the link into a file: its case must not turn the file back into a link.
    (repo.path / "settings.py").unlink()
    repo.write({"settings.py": "DEBUG = False\n"})
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "fix settings: a real module")
    repo.commit("fix f", {"app.py": "def f(x):\n    return x or 0\n"})
    out = tmp_path / "corpus"
    summary = mine_corpus(MineConfig(repo=repo.path, controls_ratio=0), out)
    corpus = read_corpus(out)
    assert summary.meta.counts.dropped.get("no_source_change") == 1
    for c in corpus.cases:
        patch = (out / c.patch).read_bytes()
        assert b"120000" not in patch, patch
    builder = PacketBuilder(corpus.path, repo.path)
    try:
        for c in corpus.cases:
            packet = builder.packet(c, "Review.", None, "tree")
            assert SECRET not in json.dumps(packet.model_dump())
            assert "PATH=" not in json.dumps(packet.files)
    finally:
        builder.close()


LFS = "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize 1234\n"


def test_lfs_pointer_changes_are_dropped_as_lfs_pointer(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"model.py": LFS.format("a" * 64), "app.py": "def f(x):\n    return x\n"})
    repo.commit("fix model weights", {"model.py": LFS.format("b" * 64)})
    repo.commit("fix f", {"app.py": "def f(x):\n    return x or 0\n"})
    summary = mine_corpus(MineConfig(repo=repo.path, controls_ratio=0), tmp_path / "corpus")
    assert summary.meta.counts.dropped["lfs_pointer"] == 1
    corpus = read_corpus(tmp_path / "corpus")
    fixes = {g.case_id for g in corpus.gold if g.stratum == "fix_reversal"}
    assert [c.paths for c in corpus.cases if c.case_id in fixes] == [["app.py"]]
