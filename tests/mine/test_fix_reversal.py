"""Fix-reversal mining on real repositories with genuine fixes and look-alikes."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.store.corpus import sha256_file

CALC_V1 = '''\
def clamp(value, low, high):
    """Clamp value into [low, high]."""
    if value < low:
        return low
    if value > high:
        return high
    return value


class Window:
    def __init__(self, size):
        self.size = size

    def contains(self, index):
        return 0 <= index <= self.size
'''

CALC_FIXED_BOUND = CALC_V1.replace("0 <= index <= self.size", "0 <= index < self.size")

PARSER_V1 = '''\
def parse_pairs(text):
    result = {}
    for item in text.split(","):
        key, value = item.split("=")
        result[key] = value
    return result
'''

PARSER_FIXED = '''\
def parse_pairs(text):
    result = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, value = item.split("=", 1)
        result[key.strip()] = value
    return result
'''

TEST_CALC = '''\
from calc import Window

def test_contains():
    assert not Window(3).contains(3)
'''


@pytest.fixture
def history(git_repo):
    """A repository whose history mixes two genuine fixes with every kind of look-alike."""
    repo = git_repo("project")
    repo.commit("Initial import", {
        "src/calc.py": CALC_V1, "src/parser.py": PARSER_V1, "README.md": "# project\n",
        "poetry.lock": "lock v1\n", "vendor/lib.py": "x = 1\n", "logo.png": b"\x89PNG\0\0\1",
        "src/big.py": "".join(f"v{i} = {i}\n" for i in range(100)),
    })  # fmt: skip
    genuine = {}
    genuine["bound"] = repo.commit(
        "Fix off-by-one in Window.contains",
        {"src/calc.py": CALC_FIXED_BOUND, "tests/test_calc.py": TEST_CALC},
    )
    repo.commit("Add prefix option to the parser", {"src/parser.py": PARSER_V1 + "\nPREFIX = ''\n"})
    repo.commit("fix the project's title", {"README.md": "# Project\n"})
    repo.commit("fix: bump poetry.lock", {"poetry.lock": "lock v2\n"})
    repo.commit("Fix vendored lib", {"vendor/lib.py": "x = 2\n"})
    repo.commit("Fixed the bound's layout", {"src/calc.py": CALC_FIXED_BOUND.replace("    return value", "    return  value")})
    repo.commit("hotfix: regenerate big table", {"src/big.py": "".join(f"v{i} = {i * 2}\n" for i in range(100))})
    repo.commit("Fixes logo", {"logo.png": b"\x89PNG\0\0\2"})
    repo.commit("Fix expectations only", {"tests/test_calc.py": TEST_CALC + "\n# more\n"})
    # A merge whose message matches.
    repo.git("checkout", "-q", "-b", "side")
    repo.commit("side work", {"src/other.py": "def other():\n    return 1\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("unrelated", {"docs/guide.md": "guide\n"})
    repo.git("merge", "-q", "--no-ff", "side", "-m", "Merge branch side (fixes #12)")
    parser_now = (repo.path / "src/parser.py").read_text()
    genuine["parser"] = repo.commit(
        "bugfix: tolerate empty items (closes #7)",
        {"src/parser.py": parser_now.replace(PARSER_V1, PARSER_FIXED),
         "tests/test_parser.py": "from parser import parse_pairs\n"},
    )  # fmt: skip
    return repo, genuine


def _mine(repo_path: Path, out: Path, **options) -> None:
    options.setdefault("controls_ratio", 0)  # fix reversals only: controls have their own tests
    mine_corpus(MineConfig(repo=repo_path, mirrors=False, **options), out)


def test_mines_exactly_the_genuine_fixes_and_counts_drops(history, tmp_path):
    repo, genuine = history
    out = tmp_path / "corpus"
    _mine(repo.path, out)
    corpus = read_corpus(out)
    assert sorted(g.provenance.commit for g in corpus.gold) == sorted(genuine.values())
    counts = corpus.meta.counts
    assert counts.cases == 2
    dropped = {k: v for k, v in counts.dropped.items() if v}
    assert dropped == {
        "merge": 1,
        "no_source_change": 2,  # README title, test-only
        "lockfile": 1,
        "vendored_or_generated": 1,
        "formatting_only": 1,
        "too_large": 1,
        "binary": 1,
    }
    assert counts.matched_commits == 2 + sum(dropped.values())


def test_patch_reverses_only_source_and_applies_to_the_fix(history, tmp_path):
    repo, genuine = history
    out = tmp_path / "corpus"
    _mine(repo.path, out)
    corpus = read_corpus(out)
    for case, gold in zip(corpus.cases, corpus.gold, strict=True):
        patch = (out / case.patch).read_bytes()
        assert b"tests/" not in patch
        assert case.base == gold.provenance.commit
        work = tmp_path / f"wt-{case.case_id}"
        repo.git("worktree", "add", "-q", "--detach", str(work), case.base)
        subprocess.run(["git", "-C", str(work), "apply", "--check", str(out / case.patch)], check=True)
        subprocess.run(["git", "-C", str(work), "apply", str(out / case.patch)], check=True)
        # The patched tree is the fix's parent for source files, while the tests stay.
        for path in case.paths:
            assert (work / path).read_bytes() == repo.show(gold.provenance.parent, path)
        for test_path in gold.provenance.test_paths:
            assert (work / test_path).exists()


def test_every_gold_location_contains_the_reintroduced_line(history, tmp_path):
    repo, genuine = history
    out = tmp_path / "corpus"
    _mine(repo.path, out)
    corpus = read_corpus(out)
    by_commit = {g.provenance.commit: g for g in corpus.gold}

    def lines_of(gold, needle):
        [defect] = gold.defects
        path = defect.locations[0].path
        text = repo.show(gold.provenance.parent, path).decode().splitlines()
        numbers = [i for i, line in enumerate(text, start=1) if needle in line]
        assert numbers, needle
        return defect, numbers

    defect, numbers = lines_of(by_commit[genuine["bound"]], "0 <= index <= self.size")
    for n in numbers:
        assert any(loc.start_line <= n <= loc.end_line for loc in defect.locations)
    assert defect.locations[0].symbol == "Window.contains"

    defect, numbers = lines_of(by_commit[genuine["parser"]], 'key, value = item.split("=")')
    assert any(loc.start_line <= numbers[0] <= loc.end_line for loc in defect.locations)
    assert {loc.symbol for loc in defect.locations} == {"parse_pairs"}
    # The fix added a guard; the patch deletes it, so a location spans the seam.
    seam = [i for i, line in enumerate(
        repo.show(by_commit[genuine["parser"]].provenance.parent, "src/parser.py").decode().splitlines(),
        start=1) if "for item in" in line][0]  # fmt: skip
    assert any(loc.start_line <= seam + 1 <= loc.end_line for loc in defect.locations)


def test_identifiers_removed_and_added_by_the_fix(history, tmp_path):
    repo, genuine = history
    out = tmp_path / "corpus"
    _mine(repo.path, out)
    gold = {g.provenance.commit: g for g in read_corpus(out).gold}
    [defect] = gold[genuine["parser"]].defects
    # The fix added ``strip`` and ``continue``; ``continue`` is a keyword, so only strip.
    assert defect.added_identifiers == ["strip"]
    assert defect.removed_identifiers == []
    assert "parse_pairs" in defect.symbols and "strip" in defect.symbols
    [bound] = gold[genuine["bound"]].defects
    assert bound.removed_identifiers == [] and bound.added_identifiers == []
    assert "contains" in bound.symbols


def test_nothing_a_reviewer_sees_reveals_the_fix(history, tmp_path):
    repo, genuine = history
    out = tmp_path / "corpus"
    _mine(repo.path, out, controls_ratio=None)  # the default: controls paired with the fixes
    assert {g.stratum for g in read_corpus(out).gold} == {"fix_reversal", "control"}
    visible = (out / "cases.jsonl").read_text() + "".join(
        p.read_text() for p in (out / "patches").iterdir()
    )
    for telling in (r"\bfix", r"\bbug", "revert", "closes #7", "off-by-one"):
        assert not re.search(telling, visible, re.IGNORECASE), telling
    for sha in genuine.values():
        assert sha not in visible.replace(f'"base":"{sha}"', "")


def test_ids_and_titles_are_deterministic_for_a_seed(history, tmp_path):
    repo, _ = history
    _mine(repo.path, tmp_path / "a", seed=3)
    _mine(repo.path, tmp_path / "b", seed=3)
    _mine(repo.path, tmp_path / "c", seed=4)
    for name in ("cases.jsonl", "gold.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    ids_a = [c.case_id for c in read_corpus(tmp_path / "a").cases]
    ids_c = [c.case_id for c in read_corpus(tmp_path / "c").cases]
    assert set(ids_a).isdisjoint(ids_c)


def test_gold_sha256_is_the_hash_of_gold_jsonl(history, tmp_path):
    repo, _ = history
    _mine(repo.path, tmp_path / "c")
    meta = json.loads((tmp_path / "c" / "corpus.json").read_text())
    assert meta["gold_sha256"] == sha256_file(tmp_path / "c" / "gold.jsonl")


def test_limit_keeps_the_newest_cases(history, tmp_path):
    repo, genuine = history
    summary = mine_corpus(MineConfig(repo=repo.path, mirrors=False, limit=1, controls_ratio=0), tmp_path / "c")
    corpus = read_corpus(tmp_path / "c")
    assert [g.provenance.commit for g in corpus.gold] == [genuine["parser"]]
    # Only the newest matching commit was examined: nothing older is tallied, and the
    # scanned count stops there too (HEAD is that fix), not where the log reader ran ahead to.
    assert corpus.meta.counts.matched_commits == 1
    assert summary.scanned_commits == 1


def test_max_lines_filter(history, tmp_path):
    repo, genuine = history
    _mine(repo.path, tmp_path / "c", max_lines=2)
    corpus = read_corpus(tmp_path / "c")
    assert [g.provenance.commit for g in corpus.gold] == [genuine["bound"]]
    assert corpus.meta.counts.dropped["too_large"] == 2


def test_grep_and_prefix_word_boundaries(history, tmp_path):
    repo, _ = history
    _mine(repo.path, tmp_path / "c", grep=(r"prefix",))
    corpus = read_corpus(tmp_path / "c")
    assert [g.provenance.subject for g in corpus.gold] == ["Add prefix option to the parser"]


def test_include_and_exclude_globs(history, tmp_path):
    repo, genuine = history
    _mine(repo.path, tmp_path / "inc", include=("src/parser.py",))
    assert [g.provenance.commit for g in read_corpus(tmp_path / "inc").gold] == [genuine["parser"]]
    _mine(repo.path, tmp_path / "exc", exclude=("**/parser.py",))
    assert [g.provenance.commit for g in read_corpus(tmp_path / "exc").gold] == [genuine["bound"]]


def test_custom_test_pattern_moves_files_into_the_patch(history, tmp_path):
    repo, genuine = history
    # With a pattern that matches nothing, the fix's test file becomes source and is reversed.
    _mine(repo.path, tmp_path / "c", test_patterns=("*.nomatch",))
    gold = {g.provenance.commit: g for g in read_corpus(tmp_path / "c").gold}
    assert gold[genuine["bound"]].provenance.test_paths == []
    cases = {c.base: c for c in read_corpus(tmp_path / "c").cases}
    assert "tests/test_calc.py" in cases[genuine["bound"]].paths


def test_since_and_until(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("start", {"a.py": "x = 1\n"})
    env_dates = []
    for year, value in ((2020, 2), (2022, 3), (2024, 4)):
        date = f"{year}-06-01T00:00:00+00:00"
        repo.write({"a.py": f"x = {value}\n"})
        repo.git("add", "-A")
        subprocess.run(["git", "-C", str(repo.path), "commit", "-q", "-m", f"fix value {value}"],
                       check=True, env={**__import__("os").environ, "GIT_AUTHOR_DATE": date,
                                        "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_NAME": "a",
                                        "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
                                        "GIT_COMMITTER_EMAIL": "a@b"})  # fmt: skip
        env_dates.append(date)
    _mine(repo.path, tmp_path / "c", since="2021-01-01", until="2023-01-01")
    assert [g.provenance.subject for g in read_corpus(tmp_path / "c").gold] == ["fix value 3"]


def test_a_fix_that_fills_an_empty_file_or_adds_one_is_mined(git_repo, tmp_path):
    """Reversing it empties (or deletes) the file; there is no symbol there, and no crash."""
    repo = git_repo("placeholder")
    repo.commit("Initial import", {"pkg/__init__.py": "", "pkg/size.py": "", "pkg/core.py": "X = 1\n"})
    filled = repo.commit(
        "Fix size: implement naturalsize",
        {"pkg/size.py": "def naturalsize(n):\n    return '%d B' % n\n", "tests/test_size.py": "def test_s(): pass\n"},
    )
    added = repo.commit(
        "Fix core: add the missing helper module",
        {"pkg/helper.py": "def helper():\n    return 2\n", "tests/test_helper.py": "def test_h(): pass\n"},
    )
    out = tmp_path / "corpus"
    _mine(repo.path, out)
    corpus = read_corpus(out)
    by_commit = {g.provenance.commit: g for g in corpus.gold}
    assert set(by_commit) == {filled, added}
    assert [(loc.path, loc.symbol) for loc in by_commit[filled].defects[0].locations] == [("pkg/size.py", None)]
    assert [loc.path for loc in by_commit[added].defects[0].locations] == ["pkg/helper.py"]
    for case in corpus.cases:
        work = tmp_path / f"wt-{case.case_id}"
        repo.git("worktree", "add", "-q", "--detach", str(work), case.base)
        subprocess.run(["git", "-C", str(work), "apply", str(out / case.patch)], check=True)
    assert (tmp_path / f"wt-{corpus.cases[0].case_id}").exists()
