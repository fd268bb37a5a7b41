"""Node projects: the test command from package.json, the fix's own test files first, failing
test ids and the failing assertion as the reason — with real node and real git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config import ValidateConfig
from reviewbench.errors import UsageError
from reviewbench.validate import validate_corpus
from reviewbench.validate.node import NodeRunner, detect_node_command, read_tap
from reviewbench.validate.testcmd import TestCommand, detect_test_command

from ..conftest import run_cli
from ..js_project import JS_PROJECT, RANGE, TEST_RANGE


def _package(tmp_path: Path, scripts: dict[str, str]) -> Path:
    (tmp_path / "package.json").write_text(json.dumps({"name": "x", "scripts": scripts}))
    return tmp_path


def test_the_test_script_is_the_command_with_node_modules_bin_on_path(tmp_path):
    root = _package(tmp_path, {"test": "node --test test/"})
    assert detect_test_command(root) == 'PATH="$PWD/node_modules/.bin:$PATH" node --test test/'


def test_npm_run_chains_resolve_and_hooks_and_linters_are_left_out_with_a_note(tmp_path):
    root = _package(tmp_path, {"pretest": "npm run lint", "lint": "eslint .", "posttest": "npx npm@'>=10' audit",
                               "test": "npm run lint && npm run tests-only", "tests-only": "nyc tape 'test/**/*.js'"})  # fmt: skip
    found = detect_node_command(root)
    assert found is not None
    assert found.command == 'PATH="$PWD/node_modules/.bin:$PATH" nyc tape \'test/**/*.js\''
    assert any("pretest" in n and "posttest" in n for n in found.notes)
    assert any("eslint ." in n for n in found.notes)
    assert TestCommand(found.command).runner is NodeRunner.TAPE


def test_package_manager_exec_forms_run_the_program(tmp_path):
    root = _package(tmp_path, {"lint": "eslint .", "test:types": "tsc --noEmit",
                               "test": "pnpm lint && pnpm test:types && pnpm vitest run"})  # fmt: skip
    found = detect_node_command(root)
    assert found is not None and found.command.endswith(" vitest run")
    assert any("eslint ." in n and "tsc --noEmit" in n for n in found.notes)
    assert TestCommand(found.command).runner is NodeRunner.VITEST


@pytest.mark.parametrize("script", ["vitest run --typecheck", "vitest --typecheck.enabled run",
                                    "vitest run --typecheck=true --reporter dot"])
def test_vitest_typecheck_is_left_out_with_a_note(tmp_path, script):
    """unjs/ufo's ``pnpm lint && vitest run --typecheck``: the type check runs tsc, which
    wrote into the shared read-only node_modules; the runtime tests are what observe."""
    found = detect_node_command(_package(tmp_path, {"lint": "eslint .", "test": f"pnpm lint && {script}"}))
    assert found is not None and "--typecheck" not in found.command
    assert found.command.startswith('PATH="$PWD/node_modules/.bin:$PATH" vitest ')
    assert TestCommand(found.command).runner is NodeRunner.VITEST
    assert any("--typecheck" in n for n in found.notes), found.notes


def test_a_typecheck_flag_of_another_program_is_kept(tmp_path):
    found = detect_node_command(_package(tmp_path, {"test": "mocha --typecheck test/"}))
    assert found is not None and found.command.endswith("mocha --typecheck test/") and not found.notes


@pytest.mark.parametrize("scripts", [{}, {"test": 'echo "Error: no test specified" && exit 1'}])
def test_no_test_script_is_a_usage_error_naming_test_cmd(tmp_path, scripts):
    with pytest.raises(UsageError, match="no test script: pass --test-cmd"):
        detect_test_command(_package(tmp_path, scripts))


@pytest.mark.parametrize(("command", "files", "expected"), [
    ("node --test test/", ["test/a.test.js"],
     ("node --test --test-reporter=spec --test-reporter-destination=stderr --test-reporter=junit "
      "--test-reporter-destination=R test/a.test.js")),
    ("vitest run", ["test/a.test.ts"], "vitest run --reporter=default --reporter=junit --outputFile=R test/a.test.ts"),
    ("jest --coverage", [], "jest --json --outputFile=R --coverage"),
    ("nyc mocha --recursive 'test/**/*.js'", ["test/a.js"],
     "nyc mocha --reporter xunit --reporter-option output=R --recursive test/a.js"),
    ("nyc tape 'test/**/*.js'", ["test/a.js"], "nyc tape test/a.js"),
    # mocha takes the last reporter given: the script's own is dropped (jshttp/negotiator's).
    ("mocha --reporter spec --check-leaks test/", ["test/a.js"],
     "mocha --reporter xunit --reporter-option output=R --check-leaks test/a.js"),
    ("mocha -R dot --reporter-options foo=1 --reporter=tap -O x=2 test/", [],
     "mocha --reporter xunit --reporter-option output=R test/"),
    # An option's path value is not a selection (mocha's --require of a setup file).
    ("mocha --require test/setup.js --recursive test/", ["test/a.js"],
     "mocha --reporter xunit --reporter-option output=R --require test/setup.js --recursive test/a.js"),
])  # fmt: skip
def test_each_runner_is_given_the_files_and_asked_for_a_report(command, files, expected):
    shell = TestCommand(f'PATH="$PWD/node_modules/.bin:$PATH" {command}').shell(files, Path("R"))
    assert shell == f'PATH="$PWD/node_modules/.bin:$PATH" {expected}'


TAPE_OUTPUT = """\
TAP version 13
# parses a query
ok 1 should be strictly equal
# handles arrays
ok 2 should be deeply equal
not ok 3 keeps the last value
  ---
    operator: deepEqual
    expected: |-
      { a: 'b' }
    actual: |-
      { a: 'c' }
    at: Test.<anonymous> (/tmp/x/test/parse.js:10:7)
  ...
# skipped one
ok 4 later # SKIP

1..4
# tests 4
# pass  2
# fail  1
"""


def test_a_crash_before_any_report_names_the_thrown_error_not_the_node_footer():
    from reviewbench.validate.node import node_error_line

    output = ("/x/node_modules/nyc/index.js:90\n    throw err0;\n    ^\n\n"
              "Error: EROFS: read-only file system, mkdir '/t/node_modules/.cache'\n    at Object.mkdirSync\n\n"
              "Node.js v20.20.2\n")  # fmt: skip
    assert node_error_line(output) == "Error: EROFS: read-only file system, mkdir '/t/node_modules/.cache'"
    assert node_error_line("TypeError [ERR_INVALID_ARG_TYPE]: bad\n") == "TypeError [ERR_INVALID_ARG_TYPE]: bad"
    assert node_error_line("all good\n") is None


MOCHA_CRASH = """\

 Exception during run: TypeError: Cannot read properties of undefined (reading 'extensions')
    at forEachMimeType (/t/tree-1/index.js:156:21)
    at Array.forEach (<anonymous>)
    at populateMaps (/t/tree-1/index.js:155:19)
    at Object.<anonymous> (/t/tree-1/index.js:42:1)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)
    at require (node:internal/modules/helpers:182:18)
    at Object.<anonymous> (/t/tree-1/test/test.js:2:17)
    at ModuleWrap.<anonymous> (node:internal/modules/esm/translators:240:7)
    at async formattedImport (/t/tree-1/node_modules/mocha/lib/nodejs/esm-utils.js:9:14)
    at async singleRun (/srv/corpus/envs/node-1/project/node_modules/mocha/lib/cli/run-helpers.js:162:3)


Mime-score logic changes extension->type mappings for the following:
    at Object.<anonymous> (/t/tree-1/lib/later.js:1:1)
"""


def test_a_run_that_crashed_loading_names_the_test_file_the_runner_loaded():
    """mocha on jshttp/mime-types: a mutation made ``index.js`` throw as ``test/test.js``
    required it, before any test ran or any report was written. The outermost frame in
    the tree, outside node_modules, of the first stack is the file the runner loaded."""
    from reviewbench.validate.node import load_failure, tree_relative

    assert load_failure(MOCHA_CRASH, Path("/t/tree-1")) == "test/test.js"
    assert load_failure(MOCHA_CRASH, Path("/t/tree-2")) is None
    assert load_failure("Error: boom\n", Path("/t/tree-1")) is None
    assert tree_relative(frozenset({"/t/tree-1/test/a.test.js", "g > t"}), Path("/t/tree-1")) == {"test/a.test.js", "g > t"}


def test_a_test_file_that_fails_to_load_is_a_failing_id_relative_to_the_tree(git_repo, tmp_path):
    """node:test reports a test file that threw while loading under its absolute path,
    which names the scratch tree: the id is made relative, the same in every tree."""
    repo = git_repo("tiny")
    throwing = RANGE.replace("'use strict';\n", "'use strict';\nconst LIMITS = undefined;\nconst LOW = LIMITS.low;\n")
    repo.commit("Initial layout", {**JS_PROJECT, "lib/range.js": throwing})
    repo.commit("Fix loading lib/range", {"lib/range.js": RANGE, "test/range.test.js": TEST_RANGE + "\n"})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=False), out)
    validate_corpus(out, ValidateConfig(jobs=2, timeout=120, reruns=2))
    (gold,) = read_corpus(out).gold
    assert gold.validation.status == "observed", gold.validation
    assert gold.validation.failing_tests == ["test/range.test.js"]


def test_a_run_that_crashed_before_reporting_fails_on_the_file_it_loaded(git_repo, tmp_path):
    """A preload that requires the module crashes node before any test or report: the
    failing id is the tree's outermost file in the stack, the preload the runner loaded."""
    repo = git_repo("tiny")
    boot = "'use strict';\nrequire('./range');\n"
    package = JS_PROJECT["package.json"].replace("node --test test/", "node --require ./lib/boot.js --test test/")
    throwing = RANGE.replace("'use strict';\n", "'use strict';\nconst LIMITS = undefined;\nconst LOW = LIMITS.low;\n")
    repo.commit("Initial layout", {**JS_PROJECT, "package.json": package, "lib/boot.js": boot, "lib/range.js": throwing})
    repo.commit("Fix loading lib/range", {"lib/range.js": RANGE, "test/range.test.js": TEST_RANGE + "\n"})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=False), out)
    validate_corpus(out, ValidateConfig(jobs=1, timeout=120, reruns=1))
    (gold,) = read_corpus(out).gold
    assert gold.validation.status == "observed" and gold.validation.selection == "fix_tests", gold.validation
    assert gold.validation.failing_tests == ["lib/boot.js"]


def test_tape_tap_names_the_failing_test_and_assertion():
    report = read_tap(TAPE_OUTPUT)
    assert report is not None
    assert report.failing == {"handles arrays"} and report.passed == {"parses a query"}
    assert report.reason is not None and report.reason.startswith("keeps the last value (operator deepEqual")
    assert read_tap("no tap here\n") is None


def _fixed_project(git_repo):
    """A node:test project whose history holds a fix with its own test."""
    repo = git_repo("tiny")
    buggy = RANGE.replace("if (value > high) return high;", "if (value > high) return value;")
    repo.commit("Initial layout", {**JS_PROJECT, "lib/range.js": buggy,
                                   "test/range.test.js": TEST_RANGE.replace("  assert.strictEqual(clamp(11, 0, 10), 10);\n", "")})  # fmt: skip
    repo.commit("Fix clamp above the range", {"lib/range.js": RANGE, "test/range.test.js": TEST_RANGE})
    return repo


def test_a_node_fix_is_observed_by_its_own_test_file_with_failing_ids(git_repo, tmp_path):
    repo = _fixed_project(git_repo)
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=False), out)
    summary = validate_corpus(out, ValidateConfig(jobs=1, timeout=120, reruns=1))
    (gold,) = read_corpus(out).gold
    validation = gold.validation
    assert validation is not None and validation.status == "observed", (summary, validation)
    assert validation.selection == "fix_tests"
    assert validation.failing_tests == ["clamp", "describe"]  # describe() clamps too


def test_the_fixs_fixtures_and_type_tests_are_not_given_to_the_runner(git_repo, tmp_path):
    """unjs/ufo's fixes also change ``test/fixture/*.json`` and ``test/types.test-d.ts``:
    node:test would run a JSON file as a test and fail on it; only test scripts are selected."""
    repo = _fixed_project(git_repo)
    repo.commit("Fix clamp again", {"lib/range.js": RANGE.replace("if (value < low) return low;", "if (value < low) return low; // fixed"),
                                    "test/fixture/cases.json": '{"clamp": [[11, 10]]}\n',
                                    "test/range.test-d.ts": "import { clamp } from '../lib/range';\n",
                                    "test/range.test.js": TEST_RANGE + "// one more\n"})  # fmt: skip
    buggy = RANGE.replace("if (value < low) return low;", "if (value < low) return value;")
    repo.commit("init buggy", {"lib/range.js": buggy})
    repo.commit("Fix clamp below the range", {"lib/range.js": RANGE, "test/fixture/cases.json": '{"clamp": []}\n',
                                              "test/range.test-d.ts": "import { clamp } from '../lib/range.js';\n",
                                              "test/range.test.js": TEST_RANGE})  # fmt: skip
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=False, limit=1), out)
    validate_corpus(out, ValidateConfig(jobs=1, timeout=120, reruns=1))
    (gold,) = read_corpus(out).gold
    assert gold.provenance.subject == "Fix clamp below the range"
    assert set(gold.provenance.test_paths) == {"test/fixture/cases.json", "test/range.test-d.ts", "test/range.test.js"}
    assert gold.validation.status == "observed" and gold.validation.selection == "fix_tests", gold.validation
    assert gold.validation.failing_tests == ["clamp"]
    assert gold.validation.base_failures == []  # node cannot run the .test-d.ts: it failed at every base


def test_a_failing_base_is_reported_with_the_failing_assertion(git_repo, tmp_path):
    """The reason line names the assertion, not the runner's summary (`# fail 1`)."""
    repo = git_repo("tiny")
    buggy = RANGE.replace("if (value > high) return high;", "if (value > high) return value;")
    repo.commit("Initial layout", {**JS_PROJECT, "lib/range.js": buggy})
    # The fix's only test fails at the base too: base_failing (with a passing test of the
    # fix that the patch broke, the case would be observed, the base failure recorded).
    broken = ("'use strict';\nconst test = require('node:test');\nconst assert = require('node:assert');\n"
              "test('unrelated', () => {\n  assert.strictEqual('left', 'right');\n});\n")
    repo.commit("Fix clamp above the range", {"lib/range.js": RANGE, "test/range.test.js": broken})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=False), out)
    validate_corpus(out, ValidateConfig(jobs=1, timeout=120, reruns=1))
    (gold,) = read_corpus(out).gold
    assert gold.validation is not None and gold.validation.status == "base_failing"
    assert gold.validation.reason is not None
    assert gold.validation.reason.startswith("Expected values to be strictly equal: ")
    assert "+ 'left' - 'right'" in gold.validation.reason


def test_validate_cli_on_a_node_project_without_a_test_script_is_one_line(git_repo, tmp_path):
    repo = git_repo("nodeless")
    files = {**JS_PROJECT, "package.json": json.dumps({"name": "tiny"})}
    buggy = RANGE.replace("if (value < low) return low;", "if (value <= low) return low;")
    repo.commit("init", {**files, "lib/range.js": buggy})
    repo.commit("Fix clamp at the low edge", {"lib/range.js": RANGE})
    out = tmp_path / "corpus"
    assert run_cli("mine", str(repo.path), "--out", str(out), "--controls-ratio", "0").returncode == 0
    proc = run_cli("validate", str(out))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no test script: pass --test-cmd" in proc.stderr


def test_mutations_of_a_node_project_are_observed_by_the_tests_that_load_them(git_repo, tmp_path):
    repo = git_repo("tiny")
    repo.commit("Initial layout", JS_PROJECT)
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, fixes=False, mutations=6, controls_ratio=0.5, mirrors=False), out)
    corpus = read_corpus(out)
    for gold in corpus.gold:
        if gold.stratum == "mutation":
            (path,) = {loc.path for d in gold.defects for loc in d.locations}
            assert gold.provenance.test_paths == [path.replace("lib/", "test/").replace(".js", ".test.js")]
    validate_corpus(out, ValidateConfig(jobs=2, timeout=120, reruns=1))
    gold = read_corpus(out).gold
    observed = [g for g in gold if g.validation and g.validation.status == "observed"]
    assert len(observed) >= 3, [(g.provenance.operator, g.validation) for g in gold]
    assert all(g.validation.failing_tests and g.validation.selection == "fix_tests" for g in observed)
    controls = [g for g in gold if g.stratum == "control"]
    assert controls and all(g.validation and g.validation.status == "not_observed" for g in controls)


def _with_dependency(git_repo, lockfile: dict[str, str] | None = None, manager: str = ""):
    """A Node project whose tests need a dependency (a local one, so npm needs no network)
    and whose history holds a fix; the lockfile is npm's own unless ``lockfile`` is given."""
    repo = git_repo("withdep")
    helper = {"vendor/helper/package.json": json.dumps({"name": "helper", "version": "1.0.0", "main": "index.js"}),
              "vendor/helper/index.js": "exports.double = (x) => x * 2;\n"}  # fmt: skip
    package = {"name": "withdep", "version": "1.0.0", "private": True, "scripts": {"test": "node --test test/"},
               "dependencies": {"helper": "file:vendor/helper"}, **({"packageManager": manager} if manager else {})}  # fmt: skip
    files = {**JS_PROJECT, **helper, **(lockfile or {}), "package.json": json.dumps(package, indent=2) + "\n",
             ".gitignore": "node_modules/\n",
             "test/helper.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                                    "const { double } = require('helper');\n"
                                    "const { total } = require('../lib/range');\n\n"
                                    "test('double total', () => {\n  assert.strictEqual(double(total([1, 2])), 6);\n});\n"}  # fmt: skip
    # A tool that writes its cache into node_modules, as nyc, babel and vite do.
    files["package.json"] = files["package.json"].replace('"node --test test/"', '"node cache.js && node --test test/"')
    files["cache.js"] = ("require('fs').mkdirSync('node_modules/.cache/tool', { recursive: true });\n"
                         "require('fs').writeFileSync('node_modules/.cache/tool/x', '1');\n")  # fmt: skip
    repo.write(files)
    if lockfile is None:
        subprocess.run(["npm", "install", "--package-lock-only", "--offline", "--no-audit", "--no-fund"], cwd=repo.path,
                       check=True, capture_output=True)  # fmt: skip
    buggy = RANGE.replace("    sum += v;", "    sum -= v;")
    repo.commit("init", {"lib/range.js": buggy})
    repo.commit("Fix total", {"lib/range.js": RANGE})
    return repo


def test_setup_auto_runs_npm_ci_once_and_every_tree_links_node_modules(git_repo, tmp_path):
    repo = _with_dependency(git_repo)
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mutations=3, controls_ratio=0.5, mirrors=False), out)
    summary = validate_corpus(out, ValidateConfig(jobs=2, timeout=120, reruns=1, setup="auto"))
    assert summary.environment_built and any("npm ci" in n for n in summary.notes), summary
    (installed,) = list((out / "envs").glob("node-*/project/node_modules"))
    assert (installed / "helper").exists()
    gold = read_corpus(out).gold
    fix = next(g for g in gold if g.stratum == "fix_reversal")
    assert fix.validation.status == "observed" and "double total" in fix.validation.failing_tests
    assert all(g.validation.status != "error" for g in gold), [g.validation for g in gold]
    # The trees' caches never reached the shared install.
    assert not (installed / ".cache").exists()
    # A second run reuses the install.
    again = validate_corpus(out, ValidateConfig(jobs=1, timeout=120, reruns=1, setup="auto", force=True))
    assert not again.environment_built and any("reused" in n for n in again.notes)


def test_a_failing_npm_install_is_one_line_naming_its_log(git_repo, tmp_path):
    repo = git_repo("badlock")
    package = {"name": "badlock", "version": "1.0.0", "scripts": {"test": "node --test test/"},
               "dependencies": {"helper": "file:vendor/missing"}}  # fmt: skip
    buggy = RANGE.replace("    sum += v;", "    sum -= v;")
    repo.commit("init", {**JS_PROJECT, "package.json": json.dumps(package), "lib/range.js": buggy,
                         "package-lock.json": json.dumps({"name": "badlock", "lockfileVersion": 3, "packages": {}})})  # fmt: skip
    repo.commit("Fix total", {"lib/range.js": RANGE})
    out = tmp_path / "corpus"
    assert run_cli("mine", str(repo.path), "--out", str(out), "--controls-ratio", "0").returncode == 0
    proc = run_cli("validate", "corpus", "--setup", "auto", cwd=tmp_path)  # a relative path, as users type it
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "npm ci" in proc.stderr and "setup.log" in proc.stderr
    assert "npm error" in proc.stderr  # npm's own line, not its notices
    (log,) = list((out / "envs").glob("node-*/setup.log"))
    assert "npm" in log.read_text()


YARN_1_LOCK = """\
# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.
# yarn lockfile v1


"helper@file:vendor/helper":
  version "1.0.0"
"""

#: What yarn 4.18 wrote for the same project (``yarn install``, its lockfile version 10).
BERRY_LOCK = """\
# This file is generated by running "yarn install" inside your project.
# Manual changes might be lost - proceed with caution!

__metadata:
  version: 10
  cacheKey: 10c0

"helper@file:vendor/helper::locator=withdep%40workspace%3A.":
  version: 1.0.0
  resolution: "helper@file:vendor/helper#vendor/helper::hash=e454b2&locator=withdep%40workspace%3A."
  checksum: 10c0/360eb68f15bc40f8108d2c1b92152ae52f087330702f3e9a3254e6c36f909d30aa1ba1ef2b4e98363865fb7b441b27df6310c57dcdac174d85b9abd808f55d10
  languageName: node
  linkType: hard

"withdep@workspace:.":
  version: 0.0.0-use.local
  resolution: "withdep@workspace:."
  dependencies:
    helper: "file:vendor/helper"
  languageName: unknown
  linkType: soft
"""


def _registry_reachable() -> bool:
    import socket

    try:
        socket.create_connection(("registry.npmjs.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


@pytest.mark.parametrize(("lockfile", "manager", "installer"), [
    (YARN_1_LOCK, "", "corepack yarn install --frozen-lockfile"),
    (BERRY_LOCK, "", "@yarnpkg/cli-dist@4 yarn install --immutable"),
])  # fmt: skip
def test_setup_auto_installs_a_yarn_project_with_its_own_yarn(git_repo, tmp_path, lockfile, manager, installer):
    """yarn 1 and yarn 2+ read different lockfiles: each gets its own yarn, which fetches
    from the registry (yarn's own release), so the test needs the network."""
    if not _registry_reachable():
        pytest.skip("the npm registry is not reachable: yarn cannot be fetched")
    repo = _with_dependency(git_repo, {"yarn.lock": lockfile}, manager)
    repo.commit("yarn lockfile", {"yarn.lock": lockfile})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mutations=0, controls_ratio=0, mirrors=False), out)
    summary = validate_corpus(out, ValidateConfig(jobs=1, timeout=120, reruns=1, setup="auto"))
    assert summary.environment_built and any(installer in n for n in summary.notes), summary
    (installed,) = list((out / "envs").glob("node-*/project/node_modules"))
    assert (installed / "helper" / "index.js").is_file()  # a node_modules folder, not Plug'n'Play
    fix = next(g for g in read_corpus(out).gold if g.stratum == "fix_reversal")
    assert fix.validation.status == "observed" and "double total" in fix.validation.failing_tests


def test_a_yarn_lockfile_out_of_date_fails_with_yarns_own_error_line(git_repo, tmp_path):
    """The lockfile's hash of the helper folder is another's: ``--immutable`` refuses, and
    the line names yarn's reason (YN0028), not its closing "Failed with errors"."""
    if not _registry_reachable():
        pytest.skip("the npm registry is not reachable: yarn cannot be fetched")
    stale = BERRY_LOCK.replace("hash=e454b2", "hash=10a38d")
    repo = _with_dependency(git_repo, {"yarn.lock": stale})
    repo.commit("yarn lockfile", {"yarn.lock": stale})
    out = tmp_path / "corpus"
    assert run_cli("mine", str(repo.path), "--out", str(out), "--controls-ratio", "0").returncode == 0
    proc = run_cli("validate", str(out), "--setup", "auto")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "YN0028" in proc.stderr and "lockfile would have been modified" in proc.stderr and "setup.log" in proc.stderr


BERRY_GIT_FAILURE = """\
=== YARN_NODE_LINKER=node-modules npx --yes -p @yarnpkg/cli-dist@4.4.1 yarn install --immutable
➤ YN0000: ┌ Fetch step
➤ YN0086: │ Some peer dependencies are incorrectly met by dependencies; run yarn explain peer-requirements for details.
➤ YN0001: │ @yarnpkg/eslint-config@https://github.com/yarnpkg/berry.git#commit=f737f7c: Failed cloning the repository
➤ YN0001: │   Repository URL: https://github.com/yarnpkg/berry.git
➤ YN0001: │   Fatal Error: unable to access 'https://github.com/yarnpkg/berry.git/': Could not resolve host: github.com
➤ YN0001: │   Exit Code: 128
➤ YN0000: └ Completed in 12s
➤ YN0000: · Failed with errors in 31s
npm notice New minor version of npm available! 11.19.1 -> 11.21.2
"""


def test_a_yarn_2_failure_is_named_by_its_message_not_its_details():
    """arcanis/clipanion (yarn 4.4.1) offline from github.com: the message is the coded
    line the indented details (``Exit Code: 128``) belong to; warnings above it are not it."""
    from reviewbench.validate.npm import install_error_line

    assert install_error_line(BERRY_GIT_FAILURE).endswith("YN0001: │ @yarnpkg/eslint-config@https://github.com/"
                                                          "yarnpkg/berry.git#commit=f737f7c: Failed cloning the repository")
    assert install_error_line("=== x\n➤ YN0028: │ -  resolution: a\n➤ YN0028: │ The lockfile would have been modified\n"
                              "➤ YN0000: · Failed with errors\n").endswith("YN0028: │ The lockfile would have been modified")
    assert install_error_line("=== x\nnpm error code E404\nnpm error 404 Not Found\n") == "npm error code E404"


def test_the_install_command_follows_the_lockfile_and_pins_pnpm():
    from reviewbench.validate.npm import node_install_command

    assert node_install_command({"package.json", "package-lock.json"}).startswith("npm ci")
    assert node_install_command({"pnpm-lock.yaml"}, "pnpm@10.33.0+sha512.abc") == (
        "npx --yes pnpm@10.33.0 install --frozen-lockfile")
    assert node_install_command({"pnpm-lock.yaml"}) == "npx --yes pnpm install --frozen-lockfile"
    assert "--no-package-lock" in node_install_command({"package.json"})


def test_yarn_1_and_yarn_2_plus_are_told_apart_by_the_lockfile_or_package_manager():
    from reviewbench.validate.npm import node_install_command

    files = {"package.json", "yarn.lock"}
    assert "corepack yarn install --frozen-lockfile" in node_install_command(files, "", YARN_1_LOCK)
    assert "corepack yarn install" in node_install_command(files, "yarn@1.22.22", YARN_1_LOCK)
    berry = node_install_command(files, "", BERRY_LOCK)
    assert "@yarnpkg/cli-dist@4 yarn install --immutable" in berry and "YARN_NODE_LINKER=node-modules" in berry
    for version, major in (("4", "2"), ("6", "3"), ("8", "4")):
        lock = BERRY_LOCK.replace("version: 10", f"version: {version}")
        assert f"@yarnpkg/cli-dist@{major} yarn" in node_install_command(files, "", lock)
    # packageManager pins the release (its hash dropped), whatever the lockfile says.
    assert "@yarnpkg/cli-dist@3.6.4 yarn install" in node_install_command(files, "yarn@3.6.4+sha224.abc", YARN_1_LOCK)
    # Another lockfile wins over yarn.lock, as before.
    assert node_install_command(files | {"package-lock.json"}, "yarn@4.5.0", BERRY_LOCK).startswith("npm ci")


def test_the_fail_fast_advice_for_node_names_npm_not_pip():
    from reviewbench.validate.reasons import remedy

    missing = "Error: Cannot find module 'tape'"
    assert "--setup auto" in remedy(missing) and "pip" not in remedy(missing)
    assert "pip" not in remedy("Node.js v20.20.2") and "--since" in remedy("Node.js v20.20.2")
    assert "--setup auto" not in remedy(missing, "auto") and "--test-cmd" in remedy(missing, "auto")


WASM_TEST = """\
const test = require('node:test');
const assert = require('node:assert');
test('instantiates wasm memory', () => {
  // V8 reserves gigabytes of address space per wasm memory, and touches almost none.
  assert.ok(new WebAssembly.Memory({ initial: 1 }).buffer.byteLength > 0);
});
"""

HOG_TEST = """\
const test = require('node:test');
test('fills memory', () => {
  const kept = [];
  for (let i = 0; i < 64; i++) kept.push(Buffer.alloc(32 * 1024 * 1024, 1));
});
"""


@pytest.mark.parametrize(("memory_mb", "test_file", "stopped"), [
    (4096, WASM_TEST, []),  # the default limit lets WebAssembly (vitest's) start
    (256, HOG_TEST, ["fills memory"]),  # and a test filling 2 GiB is still stopped at 256 MiB
])  # fmt: skip
def test_the_memory_limit_lets_wasm_start_and_still_limits_node(git_repo, tmp_path, memory_mb, test_file, stopped):
    repo = git_repo("mem")
    repo.commit("init", {**JS_PROJECT, "test/extra.test.js": test_file,
                         "lib/range.js": RANGE.replace("    sum += v;", "    sum -= v;")})  # fmt: skip
    repo.commit("Fix total", {"lib/range.js": RANGE})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=False), out)
    # The fix changed no test: the whole suite decides, with the extra test in it.
    validate_corpus(out, ValidateConfig(jobs=1, timeout=120, reruns=1, memory_mb=memory_mb))
    (gold,) = read_corpus(out).gold
    # Observed: total's test fails; the wasm test passes, the hog fails at the base already
    # (a base failure that does not discard the case: validate keeps it in base_failures).
    assert gold.validation.status == "observed", gold.validation
    assert gold.validation.base_failures == stopped
