"""Diff extraction from chat answers: every variant must come out as a patch git applies."""

from __future__ import annotations

import subprocess

import pytest

from reviewbench.tasks.extract import extract_diff

BASE = "def clamp(v, lo, hi):\n    return max(lo, v)\n\n\ndef add(a, b):\n    return a + b\n"
FIXED = "def clamp(v, lo, hi):\n    return max(lo, min(v, hi))\n\n\ndef add(a, b):\n    return a + b\n"

GIT_DIFF = """\
diff --git a/calc.py b/calc.py
index 1111111..2222222 100644
--- a/calc.py
+++ b/calc.py
@@ -1,6 +1,6 @@
 def clamp(v, lo, hi):
-    return max(lo, v)
+    return max(lo, min(v, hi))
 
 
 def add(a, b):
"""
PLAIN = "\n".join(line for line in GIT_DIFF.splitlines() if not line.startswith(("diff --git", "index "))) + "\n"
NO_PREFIX = PLAIN.replace("a/calc.py", "calc.py").replace("b/calc.py", "calc.py")
WRONG_COUNTS = PLAIN.replace("@@ -1,6 +1,6 @@", "@@ -1,3 +1,9 @@")
STRIPPED_BLANKS = PLAIN.replace("\n \n \n", "\n\n\n")
WITH_TIMESTAMPS = PLAIN.replace("--- a/calc.py", "--- a/calc.py\t2024-01-01 00:00:00").replace(
    "+++ b/calc.py", "+++ b/calc.py\t2024-01-01 00:00:01")
NEW_FILE = """\
--- /dev/null
+++ b/util.py
@@ -0,0 +1,2 @@
+def double(x):
+    return 2 * x
"""


def _applies(tmp_path, patch: str) -> dict[str, str]:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "calc.py").write_text(BASE)
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    proc = subprocess.run(["git", "apply", "--check", "-"], cwd=tree, input=patch.encode(), capture_output=True)
    assert proc.returncode == 0, (patch, proc.stderr.decode())
    subprocess.run(["git", "apply", "-"], cwd=tree, input=patch.encode(), check=True)
    return {p.name: p.read_text() for p in tree.iterdir() if p.is_file()}


@pytest.mark.parametrize("answer", [
    GIT_DIFF,
    PLAIN,
    f"```diff\n{PLAIN}```",
    f"Here is the fix:\n\n```diff\n{GIT_DIFF}```\n\nThis makes clamp respect hi.",
    f"~~~patch\n{PLAIN}~~~\n",
    f"```\n{PLAIN}```",
    f"The bug is in clamp.\n\n{PLAIN}\nThat should do it.",
    f"```diff\n{NO_PREFIX}```",
    f"```diff\n{WRONG_COUNTS}```",
    f"```diff\n{STRIPPED_BLANKS}```",
    f"```diff\n{WITH_TIMESTAMPS}```",
    f"```diff\n{PLAIN}",  # unclosed fence
    PLAIN.replace("\n", "\r\n"),
], ids=["git", "plain", "fenced", "prose-around", "tilde", "bare-fence", "unfenced-prose", "no-prefix",
        "wrong-counts", "stripped-blank-context", "timestamps", "unclosed", "crlf"])  # fmt: skip
def test_variants_extract_to_a_patch_that_applies(tmp_path, answer):
    patch = extract_diff(answer)
    assert patch is not None and patch.endswith("\n")
    assert _applies(tmp_path, patch)["calc.py"] == FIXED


def test_several_fenced_blocks_are_joined(tmp_path):
    answer = f"First calc:\n```diff\n{PLAIN}```\nThen a new helper:\n```diff\n{NEW_FILE}```\nDone."
    files = _applies(tmp_path, extract_diff(answer))
    assert files["calc.py"] == FIXED and files["util.py"] == "def double(x):\n    return 2 * x\n"


def test_non_diff_fences_are_ignored(tmp_path):
    answer = f"Run this:\n```bash\npytest -q\n```\n```diff\n{PLAIN}```\n```python\nprint('x')\n```"
    assert _applies(tmp_path, extract_diff(answer))["calc.py"] == FIXED


def test_hunk_header_without_numbers_is_located_by_git(tmp_path):
    answer = "```diff\n--- a/calc.py\n+++ b/calc.py\n@@ ... @@\n def add(a, b):\n-    return a + b\n+    return b + a\n```"
    patch = extract_diff(answer)
    assert "@@ -2,2 +2,2 @@" in patch
    assert _applies(tmp_path, patch)["calc.py"] == BASE.replace("a + b", "b + a")


def test_deleted_file_and_rename_headers_are_kept(tmp_path):
    deleted = "diff --git a/calc.py b/calc.py\ndeleted file mode 100644\n--- a/calc.py\n+++ /dev/null\n@@ -1,6 +0,0 @@\n" + "".join(
        f"-{line}\n" for line in BASE.splitlines())  # fmt: skip
    assert "calc.py" not in _applies(tmp_path, extract_diff(deleted))
    renamed = "diff --git a/calc.py b/maths.py\nsimilarity index 100%\nrename from calc.py\nrename to maths.py\n"
    patch = extract_diff(f"```diff\n{renamed}```")
    assert "rename to maths.py" in patch


@pytest.mark.parametrize("answer", ["```diff\n```", "```diff\n\n```", "```patch\n```\n"])
def test_an_empty_diff_block_means_no_change(answer):
    assert extract_diff(answer) == ""


@pytest.mark.parametrize("answer", [
    "",
    "I cannot fix this without seeing the code.",
    "```python\ndef clamp(v, lo, hi):\n    return max(lo, min(v, hi))\n```",
    "--- just a markdown rule\n\nand text",
    "@@ clamp should use hi @@\n+ return max(lo, min(v, hi))\n",  # a hunk with no file
    "\x00\x01garbage\udcff",
], ids=["empty", "prose", "whole-file", "rule", "hunk-without-file", "binary-garbage"])  # fmt: skip
def test_answers_without_a_diff_give_none(answer):
    assert extract_diff(answer) is None


def test_paths_are_kept_as_data_for_the_grader_to_judge():
    answer = "--- a/../outside.txt\n+++ b/../outside.txt\n@@ -1 +1 @@\n-a\n+b\n"
    patch = extract_diff(answer)
    assert "+++ b/../outside.txt" in patch  # never applied here; the grader rejects it


def test_a_removed_line_that_looks_like_a_header_stays_in_its_hunk(tmp_path):
    base = "x = 1\n-- y\n"
    answer = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,1 @@\n x = 1\n--- y\n"
    patch = extract_diff(answer)
    assert patch.count("--- ") == 2 and patch.endswith("--- y\n")
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "f.txt").write_text(base)
    proc = subprocess.run(["git", "apply", "-"], cwd=tree, input=patch.encode(), capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert (tree / "f.txt").read_text() == "x = 1\n"
