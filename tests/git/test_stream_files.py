"""``iter_log(files=True)``: the files each commit touched, read with the log in one pass.

Mining uses them to skip diffing commits that cannot be a co-edit (docs/MINING.md,
"Cost"), so a wrong status or a mangled path would silently lose candidates.
"""

from __future__ import annotations

from reviewbench.git.stream import FileStatus, iter_log


def test_files_give_status_and_paths_of_each_commit(git_repo):
    repo = git_repo()
    repo.commit("Initial import", {"pkg/a.py": "x = 1\n" * 20, "tests/test_a.py": "def test(): pass\n"})
    repo.commit(":100644 100644 a message line that looks like a raw line\n\nbody",
                {"pkg/a.py": "x = 2\n" + "x = 1\n" * 19, "pkg/café b.py": "y = 1\n"})  # fmt: skip
    repo.git("mv", "pkg/a.py", "pkg/renamed.py")
    repo.commit("Move a", remove=("tests/test_a.py",))
    entries = list(iter_log(repo.path, files=True))
    assert [e.subject for e in entries] == ["Move a", ":100644 100644 a message line that looks like a raw line",
                                            "Initial import"]  # fmt: skip
    moved, edited, root = (e.files for e in entries)
    assert moved == (FileStatus("R", "pkg/a.py", "pkg/renamed.py"), FileStatus("D", "tests/test_a.py", "tests/test_a.py"))
    assert edited == (FileStatus("M", "pkg/a.py", "pkg/a.py"), FileStatus("A", "pkg/café b.py", "pkg/café b.py"))
    assert {f.status for f in root or ()} == {"A"}
    assert entries[1].message == ":100644 100644 a message line that looks like a raw line\n\nbody"


def test_without_files_the_log_carries_none(git_repo):
    repo = git_repo()
    repo.commit("Initial import", {"a.py": "x = 1\n"})
    assert [e.files for e in iter_log(repo.path)] == [None]
