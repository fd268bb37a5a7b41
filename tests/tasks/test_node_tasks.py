"""Fix tasks of a Node project (issue 29.7): FAIL_TO_PASS / PASS_TO_PASS from the runner's own
test ids, and grading that restores the runner's configuration — real node, real git."""

from __future__ import annotations

import json

import pytest

from reviewbench.config import MineConfig, ValidateConfig
from reviewbench.tasks import grade_infra, mine_tasks, read_tasks
from reviewbench.tasks.grade_run import grade_solutions
from reviewbench.tasks.solutions import Solution

from ..js_project import JS_PROJECT, RANGE, TEST_RANGE

BUGGY = RANGE.replace("if (value > high) return high;", "if (value > high) return value;")
OLD_TEST = TEST_RANGE.replace("  assert.strictEqual(clamp(11, 0, 10), 10);\n", "").replace(
    "test('describe', () => {\n  assert.strictEqual(describe(12, 0, 10), 'range 10 items in 0..10');\n});\n", "")


@pytest.fixture(scope="module")
def mined(tmp_path_factory):
    from ..conftest import GitRepo

    root = tmp_path_factory.mktemp("node-tasks")
    repo = GitRepo(root / "tiny")
    repo.commit("Initial layout", {**JS_PROJECT, "lib/range.js": BUGGY, "test/range.test.js": OLD_TEST})
    repo.commit("Fix clamp above the range", {"lib/range.js": RANGE, "test/range.test.js": TEST_RANGE})
    out = root / "tasks"
    summary = mine_tasks(MineConfig(repo=repo.path), out, ValidateConfig(jobs=1, timeout=120, reruns=2))
    return repo, out, summary


def test_a_node_fix_becomes_a_task_with_the_runners_test_ids(mined):
    _repo, out, summary = mined
    (task,) = read_tasks(out).tasks
    assert summary.meta.counts.tasks == 1
    assert task.FAIL_TO_PASS == ["clamp", "describe"]  # the fix's own assertion, and a test it added
    assert task.PASS_TO_PASS == ["total", "windowOf"]
    assert task.test_files == ["test/range.test.js"] and task.gold_files == ["lib/range.js"]
    assert "node --test" in task.test_cmd


def _grade(mined, tmp_path, patches: dict[str, str]):
    _repo, out, _summary = mined
    taskset = read_tasks(out)
    (task,) = taskset.tasks
    solutions = [Solution(run_id=f"A-{name}-0", instance_id=task.instance_id, condition="A", repetition=0,
                          state="patched", patch=patch) for name, patch in patches.items()]  # fmt: skip
    (tmp_path / "rundir").mkdir()
    summary = grade_solutions(tmp_path / "rundir", taskset, solutions, ValidateConfig(jobs=1, timeout=120))
    return task, {g.run_id.split("-")[1]: g for g in summary.grades}


def test_grading_a_node_task_resolves_the_gold_patch_and_restores_the_test_script(mined, tmp_path):
    _repo, out, _summary = mined
    (task,) = read_tasks(out).tasks
    cheat = task.patch
    package = json.loads(JS_PROJECT["package.json"])
    # A solver that makes "the tests" a command that always passes, and a config that skips them.
    rewritten = json.dumps({**package, "scripts": {"test": "node -e 0"}}, indent=2) + "\n"
    script = ("diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n"
              + "@@ -1,{} +1,{} @@\n".format(len(JS_PROJECT["package.json"].splitlines()), len(rewritten.splitlines()))
              + "".join(f"-{line}\n" for line in JS_PROJECT["package.json"].splitlines())
              + "".join(f"+{line}\n" for line in rewritten.splitlines()))  # fmt: skip
    _task, grades = _grade(mined, tmp_path, {"gold": task.patch, "nothing": "", "script": script,
                                                       "cheat": cheat + script})  # fmt: skip
    assert grades["gold"].tests_pass and grades["gold"].f2p_passed == 2 and grades["gold"].p2p_passed == 2
    assert not grades["nothing"].tests_pass and grades["nothing"].f2p_passed == 0
    assert grades["script"].touched_test_infra and not grades["script"].tests_pass, grades["script"].reason
    assert grades["cheat"].status == "tested", grades["cheat"].reason
    assert grades["cheat"].touched_test_infra and not grades["cheat"].tests_pass
    assert grades["cheat"].f2p_passed == 2  # the restored tests ran, and passed: still never resolved


def _tree(tmp_path, git_repo, files):
    repo = git_repo("infra")
    base = repo.commit("base", {"package.json": json.dumps({"name": "x", "scripts": {"test": "jest", "build": "tsc"},
                                                            "jest": {"testEnvironment": "node"}}),
                                "lib/a.js": "exports.a = 1;\n"})  # fmt: skip
    from reviewbench.git.scratch import ScratchClone

    tree = ScratchClone(repo.path, tmp_path / "scratch")
    tree.checkout(base)
    for name, text in files.items():
        (tree.path / name).parent.mkdir(parents=True, exist_ok=True)
        (tree.path / name).write_text(text)
    return tree, base


@pytest.mark.parametrize(("files", "infra"), [
    ({"jest.config.js": "module.exports = {};\n"}, ["jest.config.js"]),
    ({"vitest.config.ts": "export default {};\n", "vite.config.mts": "export default {};\n"},
     ["vite.config.mts", "vitest.config.ts"]),
    ({".mocharc.yml": "spec: none\n", "packages/a/.mocharc.cjs": "module.exports = {};\n"},
     [".mocharc.yml", "packages/a/.mocharc.cjs"]),
    ({"ava.config.js": "export default {};\n", "babel.config.js": "module.exports = {};\n"},
     ["ava.config.js", "babel.config.js"]),
    ({"package.json": json.dumps({"name": "x", "scripts": {"test": "node -e 0", "build": "tsc"},
                                  "jest": {"testEnvironment": "node"}})}, ["package.json"]),
    ({"package.json": json.dumps({"name": "x", "scripts": {"test": "jest", "build": "tsc"},
                                  "jest": {"testMatch": []}})}, ["package.json"]),
    # A dependency or build script changed: the tests' machinery did not.
    ({"package.json": json.dumps({"name": "x", "version": "2.0.0", "scripts": {"test": "jest", "build": "tsc -b"},
                                  "jest": {"testEnvironment": "node"}, "dependencies": {"y": "1"}})}, []),
    ({"lib/a.js": "exports.a = 2;\n"}, []),
])  # fmt: skip
def test_node_test_machinery_is_restored_and_ordinary_edits_are_not(tmp_path, git_repo, files, infra):
    tree, base = _tree(tmp_path, git_repo, files)
    assert grade_infra.test_infra_paths(tree, base, files, []) == infra
