"""Issue 25 item 11: bidirectional and control characters in file names.

A file named with U+202E (RIGHT-TO-LEFT OVERRIDE) gave the neutral title "Tidy up <U+202E>yp.exe",
which a terminal or browser shows reversed; a newline in a name went into a title. Titles
name modules by sanitised names, and every place that prints a path (the consoles, ``show``,
``case list``, error lines, JSON on stdout, the HTML report) escapes control and bidi
characters instead of passing them to the terminal.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench._text import printable

RLO = "\u202e"
BIDI_NAME = f"{RLO}yp.exe.py"  # the stem is U+202E + "yp.exe"
NEWLINE_NAME = "evil\nname.py"


def _unsafe(text: str) -> list[str]:
    """Characters a terminal would act on or reorder by: controls but newline, format, bidi."""
    return [c for c in text if c != "\n" and (unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp"))]


@pytest.fixture
def corpus(git_repo, tmp_path) -> Path:
    repo = git_repo()
    repo.commit("init", {BIDI_NAME: "def a(x):\n    return x\n", NEWLINE_NAME: "def b(x):\n    return x\n"})
    repo.commit("fix a", {BIDI_NAME: "def a(x):\n    if x is None:\n        return 0\n    return x\n"})
    repo.commit("fix b", {NEWLINE_NAME: "def b(x):\n    if x is None:\n        return 1\n    return x\n"})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0), out)
    return out


def test_printable_escapes_controls_and_bidi_but_keeps_text():
    assert printable(f"a{RLO}b") == "a\\u202eb"
    assert printable("a\nb\tc\x1b[31m") == "a\\nb\\tc\\x1b[31m"
    assert printable("a\nb", newlines=True) == "a\nb"
    assert printable("naïve café/名前.py") == "naïve café/名前.py"
    assert printable("x\udcff") == "x\\xff"  # a name that is not UTF-8 (surrogate escape)
    assert printable("\u2066\u2069\u200f\ufeff") == "\\u2066\\u2069\\u200f\\ufeff"


def test_titles_name_modules_by_sanitised_names(corpus):
    data = read_corpus(corpus)
    assert {p for c in data.cases for p in c.paths} == {BIDI_NAME, NEWLINE_NAME}  # paths stay exact (mirrors too)
    for case in data.cases:
        assert _unsafe(case.title) == [] and "\n" not in case.title, case.title
    titles = " ".join(c.title for c in data.cases)
    assert "yp.exe" in titles and "evilname" in titles


def test_every_printer_escapes_them(corpus, tmp_path, cli):
    shown = cli("show", corpus, "--cases")
    assert shown.code == 0, shown.err
    assert _unsafe(shown.out) == [] and "\\u202eyp.exe.py" in shown.out and "evil\\nname.py" in shown.out
    listed = cli("case", "list", corpus, "--all")
    assert listed.code == 0, listed.err
    assert _unsafe(listed.out) == [] and "evil\\nname.py" in listed.out
    as_json = cli("show", corpus, "--cases", "--json")
    assert _unsafe(as_json.out) == []  # \u202e as a JSON escape: the same data, nothing for a terminal to act on
    paths = {p for row in json.loads(as_json.out)["case_rows"] for p in row["paths"]}
    assert paths == {BIDI_NAME, NEWLINE_NAME}
    # Error lines name the user's path: still one line, escaped.
    missing = tmp_path / f"no{RLO}such\ncorpus"
    line = cli("show", missing).one_line_error()
    assert _unsafe(line) == [] and "\\u202e" in line
    # Runs, the scoreboard and the HTML report.
    experiment = tmp_path / "experiment.toml"
    experiment.write_text(f"corpus = {json.dumps(str(corpus))}\nrepeats = 1\nseed = 1\n"
                          '[[condition]]\nname = "all"\nreviewer = { kind = "flag_all" }\n')  # fmt: skip
    rundir = tmp_path / "runs"
    assert cli("run", experiment, "--out", rundir).code == 0
    scored = cli("score", rundir, "--include-unvalidated")
    assert _unsafe(scored.out) == []
    html = tmp_path / "report.html"
    assert cli("report", rundir, "--html", html, "--include-unvalidated").code == 0
    assert RLO not in html.read_text()
