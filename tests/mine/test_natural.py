"""Natural history (SZZ): fixes traced to the commits that introduced their lines (issue 15)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config import ValidateConfig
from reviewbench.errors import CorpusError
from reviewbench.mine.natural import carries_code, is_cosmetic
from reviewbench.validate import validate_corpus

from ..conftest import run_cli

CALC_OK = (
    "def discount(price, rate):\n"
    "    return price * (1 - rate)\n"
    "\n"
    "\n"
    "def total(items):\n"
    "    acc = 0\n"
    "    for item in items:\n"
    "        acc += item\n"
    "    return acc\n"
)
GEOM_OK = "def scale(v, k):\n    return v * k\n\n\ndef area(w, h):\n    return w * h\n"


@pytest.fixture
def history(git_repo):
    """Three bugs, each introduced in a known commit, then hidden behind a reformat, a file
    rename and a listed mass edit, then fixed with tests."""
    repo = git_repo("history")
    repo.commit("Initial import", {
        "pkg/__init__.py": "",
        "pkg/calc.py": CALC_OK,
        "pkg/geometry.py": GEOM_OK,
        "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n",
        "tests/test_basic.py": "def test_nothing():\n    assert True\n",
    })  # fmt: skip
    bugs = {}
    # Bug 1: discount, later reformatted (the reformat must be skipped).
    calc1 = CALC_OK.replace("price * (1 - rate)", "price*rate")
    bugs["discount"] = repo.commit("Support rates as plain fractions", {"pkg/calc.py": calc1})
    calc2 = calc1.replace("price*rate", "(price * rate)").replace("    acc = 0\n", "    acc = 0  # running sum\n")
    reformat = repo.commit("Run the formatter", {"pkg/calc.py": calc2})
    # Bug 2: scale, then the file is renamed.
    bugs["scale"] = repo.commit("Scale by the square root", {"pkg/geometry.py": GEOM_OK.replace("v * k", "v * k ** 0.5")})
    repo.git("mv", "pkg/geometry.py", "pkg/shapes.py")
    repo.commit("Move geometry to shapes")
    # Bug 3: total skips the first item; a later mass edit listed in .git-blame-ignore-revs
    # rewrites that very line (not merely cosmetically).
    calc3 = calc2.replace("    for item in items:\n", "    for item in items[1:]:\n")
    bugs["total"] = repo.commit("Speed up total", {"pkg/calc.py": calc3})
    calc4 = calc3.replace("for item in", "for entry in").replace("acc += item", "acc += entry")
    mass = repo.commit("Rename item to entry everywhere", {"pkg/calc.py": calc4})
    repo.commit("Ignore the mass edit in blame", {".git-blame-ignore-revs": f"# mass rename\n{mass}\n"})
    # The fixes, with tests.
    repo.commit("Fix discount", {
        "pkg/calc.py": calc4.replace("(price * rate)", "price * (1 - rate)"),
        "tests/test_calc.py": "from pkg.calc import discount\n\n\ndef test_discount():\n    assert discount(100, 0.25) == 75\n",
    })  # fmt: skip
    shapes = (repo.path / "pkg/shapes.py").read_text()
    repo.commit("Fix scale", {
        "pkg/shapes.py": shapes.replace("v * k ** 0.5", "v * k"),
        "tests/test_shapes.py": "from pkg.shapes import scale\n\n\ndef test_scale():\n    assert scale(2, 4) == 8\n",
    })  # fmt: skip
    fixed = (repo.path / "pkg/calc.py").read_text().replace("items[1:]", "items")
    repo.commit("Fix total", {
        "pkg/calc.py": fixed,
        "tests/test_total.py": "from pkg.calc import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n",
    })  # fmt: skip
    repo.bugs, repo.reformat, repo.mass = bugs, reformat, mass
    return repo


def _natural(corpus: Path) -> dict[str, object]:
    data = read_corpus(corpus)
    cases = {c.case_id: c for c in data.cases}
    return {g.provenance.introduced_by: (cases[g.case_id], g) for g in data.gold if g.stratum == "natural"}


def test_szz_finds_exactly_the_introducing_commits(history, tmp_path):
    out = tmp_path / "corpus"
    summary = mine_corpus(MineConfig(repo=history.path, natural=True), out)
    natural = _natural(out)
    assert set(natural) == set(history.bugs.values())  # not the reformat, not the listed mass edit
    assert history.reformat not in natural and history.mass not in natural
    assert summary.natural.cosmetic_skipped >= 1 and summary.natural.cases == 3
    assert summary.meta.counts.by_stratum["natural"] == 3

    # Each case is the introducing commit's own diff on its parent; gold is the buggy line
    # numbered in the introducing commit's tree, with the fix as provenance.
    case, gold = natural[history.bugs["scale"]]
    assert case.base == history.git("rev-parse", f"{history.bugs['scale']}^")
    assert case.paths == ["pkg/geometry.py"]  # its name then, before the rename
    patch = (out / case.patch).read_text()
    assert "+    return v * k ** 0.5" in patch and "tests/" not in patch
    [location] = gold.defects[0].locations
    assert (location.path, location.start_line, location.end_line, location.symbol) == ("pkg/geometry.py", 2, 2, "scale")
    assert gold.provenance.subject == "Fix scale" and gold.provenance.test_paths == ["tests/test_shapes.py"]
    assert gold.source_date == history.git("show", "-s", "--format=%cI", history.bugs["scale"])

    _case, gold = natural[history.bugs["discount"]]
    assert [(loc.start_line, loc.symbol) for loc in gold.defects[0].locations] == [(2, "discount")]
    _case, gold = natural[history.bugs["total"]]
    assert [(loc.start_line, loc.symbol) for loc in gold.defects[0].locations] == [(7, "total")]


def test_natural_cases_validate_with_the_fix_tests(history, tmp_path):
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=history.path, natural=True), out)
    validate_corpus(out, ValidateConfig(jobs=2, timeout=60, test_cmd=f"{sys.executable} -m pytest"))
    natural = _natural(out)
    for bug in ("discount", "total"):
        _case, gold = natural[history.bugs[bug]]
        assert gold.validation.status == "observed", bug
        assert gold.validation.selection == "fix_tests"  # only the test patch brings those files in
        assert gold.validation.failing_tests
    # The fix's test imports pkg.shapes, a name the module got only after the bug went in:
    # it fails at the introducing commit's parent too, and says so.
    _case, gold = natural[history.bugs["scale"]]
    assert gold.validation.status == "base_failing"
    # The test patch is the validator's alone: no reviewer-facing record names it.
    cases = (out / "cases.jsonl").read_text()
    assert "tests.diff" not in cases and "test_shapes" not in cases


def test_cli_natural_reports_its_counts(history, tmp_path):
    out = tmp_path / "corpus"
    proc = run_cli("mine", history.path, "--out", out, "--natural", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["natural"]["cases"] == 3 and result["natural"]["traced_fixes"] == 3
    assert result["by_stratum"]["natural"] == 3
    bad = run_cli("mine", history.path, "--out", tmp_path / "x", "--natural", "--no-fixes", "--mutations", "1")
    assert bad.returncode == 2 and bad.stderr.startswith("reviewbench: error:") and "--natural" in bad.stderr


@pytest.mark.parametrize("old, new, language, expected", [
    ("x = f(a,b)\n", "x = f(\n    a, b\n)\n", "python", True),
    ("x = 'a'  # note\n", 'x = "a"\n', "python", True),
    ("def f():\n    'doc'\n    return 1\n", "def f():\n    '''Other doc.'''\n    return 1\n", "python", True),
    ("x = a + b\n", "x = a - b\n", "python", False),
    ("int f() { return a+b; } // x\n", "int f() {\n  return a + b;\n}\n", "c", True),
    ("int f() { return a+b; }\n", "int f() { return a-b; }\n", "c", False),
    # Rename-only commits (refactoring-aware SZZ): names bound in the file, renamed consistently.
    ("def f(v):\n    bytes = float(v)\n    return bytes * 2\n",
     "def f(v):\n    bytes_ = float(v)\n    return bytes_ * 2\n", "python", True),
    ("def f(a, b):\n    return a - b\n", "def f(x, y):\n    return x - y\n", "python", True),
    ("def f(a, b):\n    return a - b\n", "def f(a, b):\n    return b - a\n", "python", False),
    ("def f(x):\n    return len(x)\n", "def f(x):\n    return max(x)\n", "python", False),  # builtins are not bound
    ("def f(o):\n    return o.size\n", "def f(o):\n    return o.length\n", "python", False),  # nor attributes
])  # fmt: skip
def test_cosmetic_changes(old, new, language, expected):
    assert is_cosmetic(old, new, language) is expected


def test_a_test_patch_outside_the_corpus_is_refused(history, tmp_path):
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=history.path, natural=True), out)
    (tmp_path / "evil.diff").write_text("")
    gold = out / "gold.jsonl"
    gold.write_text(gold.read_text().replace('"test_patch":"patches/', '"test_patch":"../../', 1))
    # A hand edit alone is refused for changing gold; a shared corpus re-hashed after the edit
    # (corpus.json agrees) must still not reach outside it.
    meta = json.loads((out / "corpus.json").read_text())
    meta["gold_sha256"] = hashlib.sha256(gold.read_bytes()).hexdigest()
    (out / "corpus.json").write_text(json.dumps(meta))
    with pytest.raises(CorpusError, match="outside the corpus|inside patches|\\.\\."):
        validate_corpus(out, ValidateConfig(jobs=1, timeout=60, test_cmd=f"{sys.executable} -m pytest"))


def test_a_copied_line_is_blamed_on_the_commit_that_copied_it(git_repo, tmp_path):
    """``-M -C`` follows lines that moved; a line copied into new code was introduced by the
    commit that copied it, not by the one that first wrote it elsewhere."""
    repo = git_repo("copies")
    body = "    threshold_value = compute_threshold(values, margin=2)\n    return threshold_value\n"
    upper = "def upper(values):\n" + body
    scale = "def scale(vector, factor):\n    scaled_vector = [item * factor * factor for item in vector]\n"
    repo.commit("Initial import", {"pkg/__init__.py": "", "pkg/other.py": "X = 1\n"})
    origin = repo.commit("Add upper", {"pkg/lim.py": upper})
    wrote = repo.commit("Add scale", {"pkg/lim.py": upper + "\n\n" + scale})
    copied = repo.commit("Add lower", {"pkg/lim.py": upper + "\n\ndef lower(values):\n" + body + "\n\n" + scale})
    # scale moves to another file (deleted here): a move, which blame follows back to ``wrote``.
    lim = upper + "\n\ndef lower(values):\n" + body
    repo.commit("Move scale", {"pkg/lim.py": lim, "pkg/other.py": "X = 1\n\n\n" + scale})
    repo.commit("Fix lower and scale", {
        "pkg/lim.py": upper + "\n\ndef lower(values):\n" + body.replace("margin=2", "margin=-2"),
        "pkg/other.py": "X = 1\n\n\n" + scale.replace("factor * factor", "factor"),
        "tests/test_lim.py": "def test_lim():\n    pass\n",
    })  # fmt: skip
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, natural=True, controls_ratio=0), out)
    natural = _natural(out)
    assert set(natural) == {copied, wrote}
    assert origin not in natural
    _case, gold = natural[copied]
    assert [(loc.path, loc.start_line, loc.symbol) for loc in gold.defects[0].locations] == [("pkg/lim.py", 7, "lower")]
    _case, gold = natural[wrote]
    assert [(loc.path, loc.start_line, loc.symbol) for loc in gold.defects[0].locations] == [("pkg/lim.py", 7, "scale")]


def test_cli_text_summary_renders_its_markup_and_says_where_the_limit_stopped(history, tmp_path, cli):
    result = cli("mine", history.path, "--out", tmp_path / "c", "--natural", "--limit", "1", "--controls-ratio", "0")
    assert result.code == 0, result.stderr
    assert "[bold]" not in result.stdout and "[/]" not in result.stdout
    assert "→ 1 natural cases" in result.stdout
    assert "stopped at --limit 1: older history not scanned" in " ".join(result.stdout.split())


def test_a_fix_is_never_traced_through_a_blank_comment_or_docstring_line(git_repo, tmp_path):
    """Issue 28: a fix traced to "Add the dirty_tar rule" through one removed blank line.
    The fix removes a blank line, a comment and a docstring's opening quotes that a
    feature commit wrote beside its code, and rewrites one line of code: only that line's
    commit is traced."""
    repo = git_repo("blank")
    repo.commit("Initial import", {"pkg/__init__.py": "", "pkg/other.py": "X = 1\n"})
    code = repo.commit("Add limit", {"pkg/lim.py": "def limit(n):\n    return n > 3\n"})
    helper = ('def helper(n):\n    """\n    Twice.\n    """\n    return 2 * n\n\n\n'
              "# the bound\n")
    feature = repo.commit("Add helper", {"pkg/lim.py": helper + "def limit(n):\n    return n > 3\n"})
    repo.commit("Fix limit", {
        "pkg/lim.py": 'def helper(n):\n    Twice.\n    """\n    return 2 * n\n\n'
                      "def limit(n):\n    return n >= 3\n",
        "tests/test_lim.py": "def test_lim():\n    pass\n",
    })  # fmt: skip
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, natural=True, controls_ratio=0, mirrors=False), out)
    assert set(_natural(out)) == {code}
    assert feature not in _natural(out)


@pytest.mark.parametrize(("text", "language", "expected"), [
    ("", "python", False), ("   ", None, False), ("    # the bound", "python", False),
    ('    """', "python", False), ("r'''", "python", False), ('"""Bound."""', "python", True),
    ("x = 1  # why", "python", True), ("// why", "go", False), (" * why", "java", False),
    ("i++;", "java", True), ("-- why", "sql", False), ("# title", None, True),
])  # fmt: skip
def test_carries_code(text, language, expected):
    assert carries_code(text, language) is expected
