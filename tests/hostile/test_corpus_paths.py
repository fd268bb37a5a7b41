"""Attack 2: a shared corpus whose fields are used as paths (and attack 9's gold edit)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import case, gold, write_corpus

PATCH = b"""\
diff --git a/app.py b/app.py
--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
 def f(x):
-    return x
+    return x + 1
"""


@pytest.fixture
def repo(git_repo):
    r = git_repo()
    r.base = r.commit(
        "init", {"app.py": "def f(x):\n    return x\n", "test_app.py": "def test_f():\n    pass\n"}
    )
    return r


HOSTILE = {
    "traversing case_id": ({"case_id": "../../victim"}, {"case_id": "../../victim"}, "case_id"),
    "case_id with a slash": ({"case_id": "a/b"}, {"case_id": "a/b"}, "case_id"),
    "absolute patch": ({"patch": "/etc/passwd"}, {}, "patch"),
    "patch outside patches/": ({"patch": "patches/../../../etc/passwd"}, {}, "patch"),
    "patch naming a corpus file": ({"patch": "gold.jsonl"}, {}, "patch"),
    "traversing path": ({"paths": ["../../.bashrc"]}, {}, "paths"),
    "absolute path": ({"paths": ["/home/user/.bashrc"]}, {}, "paths"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("command", ["show", "validate"])
def test_hostile_fields_are_refused_on_read(tmp_path, repo, cli, name, command):
    case_fields, gold_fields, field = HOSTILE[name]
    c = {**case("case-1", repo.base), **case_fields}
    g = {**gold("case-1"), **gold_fields}
    corpus = write_corpus(
        tmp_path / "corpus", repo.path, repo.base, [c], [g], {"case-1.diff": PATCH}
    )
    before = sorted(p.name for p in tmp_path.iterdir())
    result = (
        cli(command, corpus, "--test-cmd", "true")
        if command == "validate"
        else cli(command, corpus)
    )
    line = result.one_line_error("cases.jsonl:1" if case_fields else "gold.jsonl:1", field)
    assert "not a valid" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written beside the corpus


def test_traversing_test_path_in_gold_is_refused(tmp_path, repo, cli):
    g = gold("case-1", test_paths=["../../../home/user/.bashrc"])
    corpus = write_corpus(tmp_path / "corpus", repo.path, repo.base, [case("case-1", repo.base)], [g],
                          {"case-1.diff": PATCH})  # fmt: skip
    cli("validate", corpus, "--test-cmd", "true").one_line_error("gold.jsonl:1", "test_paths")


def test_a_patch_that_is_a_link_to_a_host_file_is_refused(tmp_path, repo, cli):
    (tmp_path / "host.diff").write_bytes(PATCH)
    corpus = write_corpus(tmp_path / "corpus", repo.path, repo.base, [case("case-1", repo.base)],
                          [gold("case-1")], {})  # fmt: skip
    os.symlink(tmp_path / "host.diff", corpus / "patches" / "case-1.diff")
    cli("validate", corpus, "--test-cmd", "true").one_line_error("symbolic link", "case-1")


def test_a_patches_folder_that_is_a_link_is_refused(tmp_path, repo, cli):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "case-1.diff").write_bytes(PATCH)
    corpus = write_corpus(tmp_path / "corpus", repo.path, repo.base, [case("case-1", repo.base)],
                          [gold("case-1")], {})  # fmt: skip
    (corpus / "patches").rmdir()
    os.symlink(elsewhere, corpus / "patches")
    cli("validate", corpus, "--test-cmd", "true").one_line_error("symbolic link")


def test_a_missing_patch_file_says_so_in_the_case_log(tmp_path, repo, cli):
    corpus = write_corpus(tmp_path / "corpus", repo.path, repo.base, [case("case-1", repo.base)],
                          [gold("case-1")], {})  # fmt: skip
    result = cli("validate", corpus, "--test-cmd", "true", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["by_status"] == {"apply_failed": 1}
    log = (corpus / "logs" / "case-1.log").read_text()
    assert "patch file" in log and "missing" in log


def test_hand_edited_gold_is_refused_by_every_reader(tmp_path, repo, cli):
    corpus = write_corpus(tmp_path / "corpus", repo.path, repo.base, [case("case-1", repo.base)],
                          [gold("case-1")], {"case-1.diff": PATCH})  # fmt: skip
    assert cli("show", corpus).code == 0
    text = (
        (corpus / "gold.jsonl")
        .read_text()
        .replace('"expect_finding": true', '"expect_finding": false')
    )
    (corpus / "gold.jsonl").write_text(text)
    for args in (("show", corpus), ("validate", corpus, "--test-cmd", "true")):
        cli(*args).one_line_error("gold.jsonl changed since corpus.json was written")


def test_corpus_files_stay_inside(tmp_path: Path, repo, cli):
    """A valid corpus next to a victim file: validate writes only under the corpus."""
    victim = tmp_path / "victim.log"
    victim.write_text("keep")
    corpus = write_corpus(tmp_path / "corpus", repo.path, repo.base, [case("case-1", repo.base)],
                          [gold("case-1")], {"case-1.diff": PATCH})  # fmt: skip
    result = cli("validate", corpus, "--test-cmd", "true", "--json")
    assert result.code == 0, result.err
    assert victim.read_text() == "keep"
