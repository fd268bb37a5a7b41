"""Tool configuration is not source, and a change of comments only is no case (issue 29.8)."""

from __future__ import annotations

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config import DEFAULT_TEST_PATTERNS
from reviewbench.mine.languages import language_for
from reviewbench.mine.paths import FileKind, PathClassifier

from ..js_project import JS_PROJECT, RANGE, TEST_RANGE


@pytest.mark.parametrize("path", [
    "eslint.config.mjs", "vite.config.ts", "vitest.config.mts", "jest.config.js", "rollup.config.cjs",
    "packages/ui/tailwind.config.js", ".eslintrc.js", ".eslintrc.cjs", ".prettierrc.js", "prettier.config.mjs",
    "babel.config.js", ".babelrc.js", "webpack.config.js", "Gruntfile.js", "gulpfile.mjs",
])  # fmt: skip
def test_lint_formatter_and_bundler_configs_are_not_source(path):
    assert PathClassifier(DEFAULT_TEST_PATTERNS).kind(path) is FileKind.OTHER


@pytest.mark.parametrize("path", ["lib/range.js", "src/app/app.config.ts", "src/config.js", "config/index.ts",
                                  "setup.py", "pkg/config.py"])  # fmt: skip
def test_source_that_only_looks_like_config_stays_source(path):
    """An app's own ``app.config.ts`` under ``src/`` ships with it (Angular's providers)."""
    assert PathClassifier(DEFAULT_TEST_PATTERNS).kind(path) is FileKind.SOURCE


@pytest.mark.parametrize(("language", "removed", "added", "only"), [
    ("javascript", ["  // clamp to hihg"], ["  // clamp to high"], True),
    ("javascript", [" * @param {number} low teh floor"], [" * @param {number} low the floor"], True),
    ("javascript", ["  return a; /* old */"], ["  return a; /* new */"], True),
    ("javascript", ["  return 'hihg';"], ["  return 'high';"], False),  # a string is code
    ("javascript", ["  const s = `a ${b} c`;"], ["  const s = `a ${c} c`;"], False),
    ("javascript", ["  return /a/.test(s); // x"], ["  return /b/.test(s); // x"], False),
    ("javascript", ["  return a; // b"], ["  return b; // b"], False),
    ("typescript", ["  // TODO: remove"], [], True),
    ("python", ["    # the uper bound"], ["    # the upper bound"], True),
    ("python", ["    x = 1  # one"], ["    x = 1  # the one"], True),
    ("python", ["    return 'a # b'"], ["    return 'a # c'"], False),
    ("python", ['    """Teh docstring."""'], ['    """The docstring."""'], False),  # __doc__, doctests
    ("go", ["\t// Run runs"], ["\t// Run starts"], True),
    ("go", ["\ts := \"// a\""], ["\ts := \"// b\""], False),
    ("c", ["/* a */ int x = 1;"], ["/* b */ int x = 1;"], True),
])  # fmt: skip
def test_comment_only_changes_are_told_from_code_changes(language, removed, added, only):
    strip = language_for(language).uncommented
    assert ("".join("".join(strip(removed)).split()) == "".join("".join(strip(added)).split())) is only


@pytest.mark.parametrize(("path", "kind"), [
    ("test.js", FileKind.TEST), ("test.ts", FileKind.TEST), ("test.mjs", FileKind.TEST), ("tests.js", FileKind.TEST),
    ("index.test.js", FileKind.TEST), ("index.test.cjs", FileKind.TEST), ("index.test-d.ts", FileKind.TEST),
    ("lib/parse.spec.mjs", FileKind.TEST),
    # Only at the root: a module named "test" deeper down is the project's own.
    ("src/test.js", FileKind.SOURCE), ("lib/test.ts", FileKind.SOURCE), ("index.js", FileKind.SOURCE),
    # Python is as it was.
    ("test.py", FileKind.SOURCE), ("test_x.py", FileKind.TEST),
])  # fmt: skip
def test_a_packages_root_test_file_is_a_test(path, kind):
    assert PathClassifier(DEFAULT_TEST_PATTERNS).kind(path) is kind


def test_a_fix_with_a_root_test_js_keeps_it_in_the_base_and_selects_it(git_repo, tmp_path):
    """sindresorhus' layout: ``index.js`` and ``test.js`` at the root. The fix's test file
    stays in the base (not reversed) and is its first selection; the case is observed there."""
    from reviewbench.config import ValidateConfig
    from reviewbench.validate import validate_corpus

    test_js = TEST_RANGE.replace("../lib/range", "./index")
    files = {"package.json": JS_PROJECT["package.json"].replace("node --test test/", "node --test test.js"),
             "index.js": RANGE, "test.js": test_js}  # fmt: skip
    buggy = RANGE.replace("if (value > high) return high;", "if (value > high) return value;")
    repo = git_repo("rooted")
    repo.commit("init", {**files, "index.js": buggy, "test.js": test_js.replace("clamp(11, 0, 10), 10", "clamp(9, 0, 10), 9")})
    repo.commit("Fix clamp above the range", {"index.js": RANGE, "test.js": test_js})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=False), out)
    (gold,) = read_corpus(out).gold
    assert gold.provenance.test_paths == ["test.js"]
    assert {loc.path for d in gold.defects for loc in d.locations} == {"index.js"}
    validate_corpus(out, ValidateConfig(jobs=1, timeout=120, reruns=1))
    (gold,) = read_corpus(out).gold
    assert gold.validation.status == "observed" and gold.validation.selection == "fix_tests", gold.validation
    assert gold.validation.failing_tests == ["clamp", "describe"]  # describe() clamps too


def test_a_comment_only_fix_is_a_docs_only_drop_in_javascript_and_python(git_repo, tmp_path):
    repo = git_repo("tiny")
    buggy = RANGE.replace("if (value > high) return high;", "if (value > high) return value;")
    repo.commit("Initial layout", {**JS_PROJECT, "lib/range.js": buggy,
                                   "lib/util.py": "def f(x):\n    # retrun x\n    return x\n"})  # fmt: skip
    # Messages that say "fix" of no upkeep word (a typo fix is passed over before its diff is read).
    repo.commit("Fix clamp's contract", {"lib/range.js": buggy.replace(" * Clamps a value", " * Clamp a value")})
    repo.commit("Fix f", {"lib/util.py": "def f(x):\n    # return x\n    return x\n"})
    repo.commit("Fix eslint config", {"eslint.config.mjs": "export default [{ rules: {} }];\n"})
    repo.commit("Fix clamp above the range", {"lib/range.js": RANGE})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=False), out)
    corpus = read_corpus(out)
    assert [g.provenance.subject for g in corpus.gold] == ["Fix clamp above the range"]
    dropped = {k: v for k, v in corpus.meta.counts.dropped.items() if v}
    assert dropped == {"docs_only": 2, "no_source_change": 1}
