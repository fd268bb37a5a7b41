"""parse_patch: what a solver's diff changes, and which diffs are refused unapplied."""

from __future__ import annotations

import subprocess

import pytest

from reviewbench.tasks.grade_patch import PatchRejected, parse_patch

SIMPLE = """\
diff --git a/pkg/calc.py b/pkg/calc.py
index 1111111..2222222 100644
--- a/pkg/calc.py
+++ b/pkg/calc.py
@@ -1,3 +1,3 @@
 def clamp(v, lo, hi):
-    return max(lo, v)
+    return max(lo, min(v, hi))
 # end
\\ No newline at end of file
"""


def test_a_git_diff_gives_files_and_lines():
    parsed = parse_patch(SIMPLE)
    assert parsed.paths == {"pkg/calc.py"} and parsed.lines == 2 and len(parsed.files) == 1


def test_prose_around_the_diff_is_ignored_as_git_apply_ignores_it():
    parsed = parse_patch("Here is my fix:\n\n" + SIMPLE + "\nHope this helps.\n")
    assert parsed.paths == {"pkg/calc.py"} and parsed.lines == 2


def test_lines_after_a_complete_hunk_are_not_part_of_it_as_for_git():
    # git apply --check accepts this and applies only '-a +b'; the size must say the same.
    assert parse_patch("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n+c\n").lines == 2


def test_traditional_diffs_new_deleted_renamed_and_quoted_files():
    text = (
        "--- a/one.py\t2024-01-01 00:00:00\n+++ b/one.py\t2024-01-01 00:00:01\n@@ -1 +1,2 @@\n x\n+y\n"
        "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+z\n"
        "diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n"
        "diff --git a/old name.py b/new name.py\nsimilarity index 100%\nrename from old name.py\nrename to new name.py\n"
        'diff --git "a/na\\303\\257ve.py" "b/na\\303\\257ve.py"\n--- "a/na\\303\\257ve.py"\n+++ "b/na\\303\\257ve.py"\n'
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    parsed = parse_patch(text)
    assert parsed.paths == {"one.py", "new.py", "gone.py", "old name.py", "new name.py", "naïve.py"}
    assert parsed.lines == 1 + 1 + 1 + 0 + 2 and len(parsed.files) == 5


@pytest.mark.parametrize("text, reason", [
    ("", "no file changes"),
    ("I could not find the bug, sorry.\n", "no file changes"),
    ("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n+b\n", "ends early"),
    ("--- a/x.py\n+++ b/x.py\n@@ here @@\n-a\n", "bad hunk header"),
    ("diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n", "has no hunk"),
    ("diff --git a/x.py b/x.py\nwhat is this\n", "neither a header nor a hunk"),
    ("diff --git a/x.bin b/x.bin\nGIT binary patch\nliteral 0\n", "binary"),
    ("diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n", "symbolic link"),
])  # fmt: skip
def test_unparsable_or_binary_diffs_are_rejected(text, reason):
    with pytest.raises(PatchRejected, match=reason):
        parse_patch(text)


@pytest.mark.parametrize("text", [
    "--- /dev/null\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+x\n",
    "--- /dev/null\n+++ ../outside.txt\n@@ -0,0 +1 @@\n+x\n",
    "--- /dev/null\n+++ b/sub/../../outside.txt\n@@ -0,0 +1 @@\n+x\n",
    "--- /dev/null\n+++ /tmp/outside.txt\n@@ -0,0 +1 @@\n+x\n",
    "--- /dev/null\n+++ b//etc/cron.d/x\n@@ -0,0 +1 @@\n+x\n",
    "--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+x\n",
    "--- /dev/null\n+++ b/sub/.GIT/config\n@@ -0,0 +1 @@\n+x\n",
    "--- /dev/null\n+++ b\\..\\outside.txt\n@@ -0,0 +1 @@\n+x\n",
    'diff --git "a/../x" "b/../x"\nnew file mode 100644\n--- /dev/null\n+++ "b/\\056\\056/x"\n@@ -0,0 +1 @@\n+x\n',
    "diff --git a/x.py b/x.py\nsimilarity index 100%\nrename from x.py\nrename to ../x.py\n",
    "diff --git a/x.py b/x.py\nsimilarity index 90%\ncopy from /etc/passwd\ncopy to x.py\n",
    "diff --git a/../x.py b/../x.py\ndeleted file mode 100644\n",
])  # fmt: skip
def test_paths_outside_the_tree_are_rejected(text):
    with pytest.raises(PatchRejected, match="outside the tree|climbs out|inside .git"):
        parse_patch(text)


def test_what_parses_git_also_applies(git_repo):
    """The parser agrees with git: its accepted example applies with strict --check."""
    repo = git_repo()
    repo.commit("base", {"pkg/calc.py": "def clamp(v, lo, hi):\n    return max(lo, v)\n# end"})
    parse_patch(SIMPLE)
    check = subprocess.run(["git", "-C", str(repo.path), "apply", "--check", "-"], check=False, input=SIMPLE.encode(),
                           capture_output=True)  # fmt: skip
    assert check.returncode == 0, check.stderr
