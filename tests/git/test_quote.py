"""Git's path quoting, read once for mined diffs (lenient) and solvers' patches (strict)."""

from __future__ import annotations

import subprocess

import pytest

from reviewbench.git.quote import read_quoted, unquote_path


def test_a_name_git_quotes_round_trips(tmp_path):
    """The quoted name comes from git itself: a tab, a quote, UTF-8 and a non-UTF-8 byte."""
    name = "ta\tb \"q\" caf\u00e9 \udcff.py"
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    path = repo.as_posix().encode() + b"/" + name.encode("utf-8", "surrogateescape")
    open(path, "wb").close()
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    listed = subprocess.run(["git", "-C", str(repo), "-c", "core.quotePath=true", "diff", "--cached", "--name-only"],
                            capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape").strip()  # fmt: skip
    assert listed.startswith('"') and "\\t" in listed and "\\303\\251" in listed
    assert unquote_path(listed) == name
    assert read_quoted(listed + " rest") == (name, " rest")


def test_plain_and_malformed_names():
    assert unquote_path("plain/name.py") == "plain/name.py"
    assert unquote_path('"bad \\q escape"') == '"bad \\q escape"'  # not git's: left as it is
    with pytest.raises(ValueError, match="bad escape"):
        read_quoted('"bad \\q escape"')
    with pytest.raises(ValueError, match="unterminated"):
        read_quoted('"no end')
    with pytest.raises(ValueError, match="bad escape"):
        read_quoted('"\\777"')  # octal above a byte
