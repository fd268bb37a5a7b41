"""Mining unusual content: odd file names, non-UTF-8 bytes, binaries, renames, whole files.

Every case mined here goes through :func:`assert_sound`: its patch applies to ``base`` in
a fresh worktree, turns every source file it names back into the fix's parent byte for
byte, and each line it reintroduces lies inside a gold location.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from reviewbench import read_corpus

from ..conftest import run_cli

_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def mine(repo_path: Path, out: Path, *args: str) -> dict:
    """``reviewbench mine --json`` through the real command line; returns the summary.

    Fix reversals only unless ``args`` ask for controls: these tests are about them (and
    no mirrors: they have tests of their own).
    """
    if "--controls-ratio" not in args:
        args = (*args, "--controls-ratio", "0")
    args = (*args, "--no-mirrors")
    proc = run_cli("mine", repo_path, "--out", out, "--json", *args)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return json.loads(proc.stdout)


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--literal-pathspecs", "-C", str(repo), *args],
                          capture_output=True, check=True).stdout  # fmt: skip


@dataclass(frozen=True)
class Change:
    """One file the reversal changes: its name at the fix and at the fix's parent."""

    status: str
    at_fix: str | None
    at_parent: str | None


def reversal_changes(repo: Path, fix: str, parent: str) -> list[Change]:
    """Every file ``git diff FIX PARENT`` changes, names read raw (NUL-separated)."""
    fields = git(repo, "diff", "-z", "--name-status", "-M", fix, parent).split(b"\0")
    changes: list[Change] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i].decode()[0]
        if status in "RC":
            old, new = os.fsdecode(fields[i + 1]), os.fsdecode(fields[i + 2])
            i += 3
        else:
            old = new = os.fsdecode(fields[i + 1])
            i += 2
        at_fix = None if status == "A" else old
        changes.append(Change(status, at_fix, None if status == "D" else new))
    return changes


def added_lines(repo: Path, fix: str, parent: str, change: Change) -> list[tuple[int, int]]:
    """(start, count) of each hunk of the reversal in the parent's numbering; count 0 is a seam."""
    paths = [p for p in (change.at_fix, change.at_parent) if p]
    diff = git(repo, "diff", "-U0", "-M", "--no-color", fix, parent, "--", *dict.fromkeys(paths))
    return [(int(m.group(1)), int(m.group(2) or b"1")) for m in _HUNK.finditer(diff)]


def assert_sound(repo, out: Path, tmp_path: Path) -> None:
    """Check every case of the corpus at ``out`` against the repository it came from."""
    corpus = read_corpus(out)
    gold = {g.case_id: g for g in corpus.gold}
    assert corpus.cases
    for case in corpus.cases:
        record = gold[case.case_id]
        fix, parent = record.provenance.commit, record.provenance.parent
        assert case.base == fix
        patch = out / case.patch
        work = tmp_path / f"wt-{case.case_id}"
        repo.git("worktree", "add", "-q", "--detach", str(work), case.base)
        subprocess.run(["git", "-C", str(work), "apply", "--check", str(patch)], check=True)
        subprocess.run(["git", "-C", str(work), "apply", str(patch)], check=True)

        changes = [c for c in reversal_changes(repo.path, fix, parent)
                   if (c.at_parent or c.at_fix) in case.paths]  # fmt: skip
        assert sorted(c.at_parent or c.at_fix for c in changes) == sorted(case.paths)
        [defect] = record.defects
        for change in changes:
            if change.at_parent is None:
                # The fix added this file; the patch deletes it again.
                assert not (work / change.at_fix).exists()
                assert any(loc.path == change.at_fix and loc.start_line == 0
                           for loc in defect.locations)  # fmt: skip
                continue
            assert (work / change.at_parent).read_bytes() == repo.show(parent, change.at_parent)
            if change.at_fix and change.at_fix != change.at_parent:
                assert not (work / change.at_fix).exists()
            located = [loc for loc in defect.locations if loc.path == change.at_parent]
            for start, count in added_lines(repo.path, fix, parent, change):
                if count:
                    for line in range(start, start + count):
                        assert any(loc.start_line <= line <= loc.end_line for loc in located), (
                            change, line, defect.locations)
                else:  # a pure deletion: some location must touch the seam after ``start``
                    assert any(loc.start_line <= start + 1 and loc.end_line >= start
                               for loc in located), (change, start, defect.locations)  # fmt: skip
        for test_path in record.provenance.test_paths:
            assert (work / test_path).exists()


GREET_V1 = """\
def greet(name):
    prefix = "Hello"
    return prefix + ", " + name
"""
GREET_FIXED = GREET_V1.replace('", " + name', '", " + name.strip()')


# -- file names ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "with space.py",
    "two  spaces/and trailing .py",
    "café.py",
    "日本/ünïcödé.py",
    'say "hi".py',
    "back\\slash.py",
    "tab\there.py",
    "new\nline.py",
    "a b/c d.py",
    "-dash.py",
    "star*[x]?.py",
])  # fmt: skip
def test_odd_file_names(git_repo, tmp_path, name):
    repo = git_repo()
    repo.commit("Initial import", {name: GREET_V1, "other.py": "x = 1\n"})
    repo.commit("Fix greeting with padded names", {name: GREET_FIXED})
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    [case] = read_corpus(out).cases
    [gold] = read_corpus(out).gold
    assert case.paths == [name]
    [location] = gold.defects[0].locations
    assert location.path == name and location.symbol == "greet"
    assert_sound(repo, out, tmp_path)
    # Its control, at the fix commit, on the same oddly named file, applies as well.
    paired = tmp_path / "paired"
    assert mine(repo.path, paired, "--controls-ratio", "1")["by_stratum"]["control"] == 1
    corpus = read_corpus(paired)
    [control] = [c for c, g in zip(corpus.cases, corpus.gold, strict=True) if g.stratum == "control"]
    assert control.paths == [name] and control.base == case.base
    work = tmp_path / "control-tree"
    git(repo.path, "worktree", "add", "-q", "--detach", str(work), control.base)
    git(work, "apply", str(paired / control.patch))
    compile((work / name).read_text(), name, "exec")


def test_odd_names_in_paths_of_test_files_stay_out_of_the_patch(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"greet.py": GREET_V1})
    test_file = 'tests/test "q" é\t.py'
    repo.commit("Fix padded names", {"greet.py": GREET_FIXED, test_file: "def test():\n    pass\n"})
    out = tmp_path / "out"
    mine(repo.path, out)
    [gold] = read_corpus(out).gold
    assert gold.provenance.test_paths == ['tests/test "q" é\t.py']
    assert_sound(repo, out, tmp_path)


def test_a_file_name_that_is_not_utf8_is_left_out_instead_of_crashing(git_repo, tmp_path):
    # Regression: a latin-1 file name reached the JSON records as surrogate escapes and
    # "mine" died with an internal PydanticSerializationError.
    repo = git_repo()
    latin = os.fsdecode(b"caf\xe9.py")
    repo.commit("Initial import", {"greet.py": GREET_V1, latin: "x = 1\n"})
    repo.commit("Fix padded names and the latin file", {"greet.py": GREET_FIXED, latin: "x = 2\n"})
    repo.commit("Fix only the latin file", {latin: "x = 3\n"})
    out = tmp_path / "out"
    summary = mine(repo.path, out)
    assert summary["cases"] == 1 and summary["dropped"]["no_source_change"] == 1
    [case] = read_corpus(out).cases
    assert case.paths == ["greet.py"]
    assert_sound(repo, out, tmp_path)


# -- contents --------------------------------------------------------------------------------


def test_latin1_source_content(git_repo, tmp_path):
    v1 = (b"# -*- coding: latin-1 -*-\n"
          b"GREETING = 'H\xe9llo'\n"
          b"\n"
          b"def greet(name):\n"
          b"    return GREETING + ', ' + name + ' \xe0 bient\xf4t'\n")  # fmt: skip
    fixed = v1.replace(b"+ name +", b"+ name.strip() +")
    repo = git_repo()
    repo.commit("Initial import", {"legacy.py": v1})
    repo.commit("Fix padded names", {"legacy.py": fixed})
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    patch = (out / read_corpus(out).cases[0].patch).read_bytes()
    assert b"bient\xf4t" in patch  # the bytes travel untouched
    [location] = read_corpus(out).gold[0].defects[0].locations
    assert location.symbol == "greet"
    assert_sound(repo, out, tmp_path)


def test_crlf_line_endings_and_no_final_newline(git_repo, tmp_path):
    v1 = b"def greet(name):\r\n    return 'Hello, ' + name\r\n\r\ndef bye():\r\n    return 'Bye'"
    fixed = v1.replace(b"+ name", b"+ name.strip()").replace(b"'Bye'", b"'Bye.'")
    repo = git_repo()
    repo.commit("Initial import", {"win.py": v1})
    repo.commit("Fix greeting and farewell", {"win.py": fixed})
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    assert b"\\ No newline at end of file" in (out / read_corpus(out).cases[0].patch).read_bytes()
    symbols = {loc.symbol for loc in read_corpus(out).gold[0].defects[0].locations}
    assert symbols == {"greet", "bye"}
    assert_sound(repo, out, tmp_path)


def test_diff_lines_that_look_like_headers(git_repo, tmp_path):
    # Removed "-- x" and added "++ y" lines become "--- x" and "+++ y" in the diff.
    v1 = "select 1;\n-- count all rows\n++ counter\nselect 3;\n"
    fixed = "select 2;\n--- other\n+++ value\nselect 3;\n"
    repo = git_repo()
    repo.commit("Initial import", {"query.sql": v1})
    repo.commit("Fix the query", {"query.sql": fixed})
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    assert_sound(repo, out, tmp_path)


def test_binary_file_changed_with_a_source_fix_keeps_only_the_source(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"greet.py": GREET_V1, "logo.png": b"\x89PNG\r\n\x1a\n\0\0\1",
                                   "data.py": b"\0\1\2binary with a source name"})  # fmt: skip
    repo.commit("Fix padded names, new logo",
                {"greet.py": GREET_FIXED, "logo.png": b"\x89PNG\r\n\x1a\n\0\0\2",
                 "data.py": b"\0\1\3binary with a source name"})  # fmt: skip
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    [case] = read_corpus(out).cases
    assert case.paths == ["greet.py"]
    patch = (out / case.patch).read_bytes()
    assert b"Binary files" not in patch and b"GIT binary patch" not in patch
    assert b"logo.png" not in patch and b"data.py" not in patch
    assert_sound(repo, out, tmp_path)


# -- renames, whole files, one-sided hunks ------------------------------------------------------

LONG_V1 = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n\n" for i in range(8))


@pytest.mark.parametrize("new_name", ["src/renamed.py", "src/nouveau nom é.py", 'src/q"x\t.py'])
def test_rename_with_a_change(git_repo, tmp_path, new_name):
    repo = git_repo()
    repo.commit("Initial import", {"src/original.py": LONG_V1})
    repo.git("mv", "src/original.py", new_name)
    fixed = LONG_V1.replace("return value + 3", "return value + 30")
    repo.commit("Fix helper_3 and rename the module", {new_name: fixed})
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    [case] = read_corpus(out).cases
    [gold] = read_corpus(out).gold
    # Named as after the patch applies: the parent's name.
    assert case.paths == ["src/original.py"]
    [location] = gold.defects[0].locations
    assert location.path == "src/original.py" and location.symbol == "helper_3"
    assert b"rename from" in (out / case.patch).read_bytes()
    assert_sound(repo, out, tmp_path)


def test_fix_that_adds_a_guard_gives_a_deletion_only_patch(git_repo, tmp_path):
    v1 = "def first(items):\n    return items[0]\n"
    fixed = "def first(items):\n    if not items:\n        return None\n    return items[0]\n"
    repo = git_repo()
    repo.commit("Initial import", {"first.py": v1})
    repo.commit("Fix first() on empty lists", {"first.py": fixed})
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    patch = (out / read_corpus(out).cases[0].patch).read_text()
    assert "\n+" not in patch.split("@@", 2)[2]
    [location] = read_corpus(out).gold[0].defects[0].locations
    assert location.symbol == "first"
    assert_sound(repo, out, tmp_path)


def test_fix_that_deletes_lines_gives_an_addition_only_patch(git_repo, tmp_path):
    v1 = "def area(w, h):\n    w = abs(w)\n    return w * h\n"
    fixed = "def area(w, h):\n    return w * h\n"
    repo = git_repo()
    repo.commit("Initial import", {"area.py": v1})
    repo.commit("Fix area of negative widths", {"area.py": fixed})
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    [location] = read_corpus(out).gold[0].defects[0].locations
    assert (location.start_line, location.end_line, location.symbol) == (2, 2, "area")
    assert_sound(repo, out, tmp_path)


def test_fix_that_adds_a_new_file_gives_a_patch_that_deletes_it(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"app.py": "def run(x):\n    return x\n"})
    repo.commit("Fix run() on bad input", {
        "app.py": "from checks import valid\n\ndef run(x):\n    return x if valid(x) else None\n",
        "checks.py": "def valid(x):\n    return x is not None\n",
    })  # fmt: skip
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    [case] = read_corpus(out).cases
    assert sorted(case.paths) == ["app.py", "checks.py"]
    assert b"deleted file mode" in (out / case.patch).read_bytes()
    assert_sound(repo, out, tmp_path)


def test_empty_files_added_and_deleted_with_a_fix(git_repo, tmp_path):
    # Sections without hunks: the paths come from the "diff --git" line alone.
    repo = git_repo()
    repo.commit("Initial import", {"pkg dir/old marker.py": "", "pkg dir/a b.py": GREET_V1})
    repo.commit("Fix padded names", {"pkg dir/a b.py": GREET_FIXED, "pkg dir/new marker.py": ""})
    repo.commit("Fix padded names again", {"pkg dir/a b.py": GREET_V1},
                remove=("pkg dir/old marker.py",))  # fmt: skip
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 2
    paths = sorted(sorted(case.paths) for case in read_corpus(out).cases)
    assert paths == [["pkg dir/a b.py", "pkg dir/new marker.py"],
                     ["pkg dir/a b.py", "pkg dir/old marker.py"]]  # fmt: skip
    assert_sound(repo, out, tmp_path)


def test_pure_rename_beside_a_fix(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"greet.py": GREET_V1, "util/long name.py": LONG_V1})
    repo.git("mv", "util/long name.py", "util/shorter.py")
    repo.commit("Fix padded names, rename util", {"greet.py": GREET_FIXED})
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    [case] = read_corpus(out).cases
    assert sorted(case.paths) == ["greet.py", "util/long name.py"]
    assert_sound(repo, out, tmp_path)


def test_fix_that_deletes_a_file_gives_a_patch_that_restores_it(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {
        "app.py": "from hack import patch_it\n\ndef run(x):\n    return x\n",
        "hack.py": "def patch_it():\n    return 1\n",
    })  # fmt: skip
    repo.commit("Fix import side effects", {"app.py": "def run(x):\n    return x\n"},
                remove=("hack.py",))  # fmt: skip
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    [case] = read_corpus(out).cases
    assert sorted(case.paths) == ["app.py", "hack.py"]
    assert_sound(repo, out, tmp_path)


def test_fix_that_changes_an_executable_bit_with_the_content(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("Initial import", {"tool.sh": "#!/bin/sh\necho $1\n"})
    (repo.path / "tool.sh").chmod(0o755)
    repo.commit("Fix quoting and make runnable", {"tool.sh": '#!/bin/sh\necho "$1"\n'})
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    assert_sound(repo, out, tmp_path)
    [case] = read_corpus(out).cases
    work = tmp_path / f"wt-{case.case_id}"
    assert not os.access(work / "tool.sh", os.X_OK)


# -- other languages ----------------------------------------------------------------------------

GO_V1 = """\
package server

type Server struct {
	limit int
}

func (s *Server) Allow(n int) bool {
	return n <= s.limit
}
"""

JS_V1 = """\
const DEFAULT = 10;

export function parseLimit(text) {
  const value = parseInt(text);
  return value || DEFAULT;
}
"""


@pytest.mark.parametrize("path, v1, old, new, symbol, language", [
    ("server/server.go", GO_V1, "n <= s.limit", "n < s.limit", "Allow", "go"),
    ("web/limit.js", JS_V1, "parseInt(text)", "parseInt(text, 10)", "parseLimit", "javascript"),
])  # fmt: skip
def test_other_languages_get_a_best_effort_symbol(git_repo, tmp_path, path, v1, old, new, symbol,
                                                  language):  # fmt: skip
    repo = git_repo()
    test_file = "server/server_test.go" if language == "go" else "web/limit.test.js"
    repo.commit("Initial import", {path: v1})
    repo.commit("Fix the limit", {path: v1.replace(old, new), test_file: "// test\n"})
    out = tmp_path / "out"
    assert mine(repo.path, out)["cases"] == 1
    [case] = read_corpus(out).cases
    [gold] = read_corpus(out).gold
    assert case.paths == [path] and case.language == language
    assert gold.provenance.test_paths == [test_file]
    [location] = gold.defects[0].locations
    assert location.symbol == symbol
    assert_sound(repo, out, tmp_path)
