"""A Node case whose changed module no test loaded is not_exercised (issue 29.6): V8's own
coverage (NODE_V8_COVERAGE) names every script each Node process ran — real node, real git."""

from __future__ import annotations

import json
import os

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config import ValidateConfig
from reviewbench.validate import validate_corpus
from reviewbench.validate.node_coverage import read_coverage
from reviewbench.validate.testcmd import TestCommand

from ..js_project import JS_PROJECT, RANGE

UNUSED = "'use strict';\n\nfunction shout(text) {\n  return text.toUpperCase() + '!';\n}\n\nmodule.exports = { shout };\n"


def _history(git_repo, files=None, executable=()):
    repo = git_repo("tiny")
    repo.write({**JS_PROJECT, **(files or {}), "lib/unused.js": UNUSED.replace("toUpperCase()", "toLowerCase()"),
                "lib/range.js": RANGE.replace("    sum += v;", "    sum -= v;")})  # fmt: skip
    for name in executable:
        os.chmod(repo.path / name, 0o755)
    repo.commit("Initial layout")
    repo.commit("Fix total", {"lib/range.js": RANGE})
    repo.commit("Fix shout", {"lib/unused.js": UNUSED})
    return repo


def _statuses(tmp_path, repo, **validate):
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=False), out)
    validate_corpus(out, ValidateConfig(jobs=1, timeout=120, reruns=1, **validate))
    return {g.provenance.subject: g.validation for g in read_corpus(out).gold}, out


def test_a_fix_of_a_module_no_test_loads_is_not_exercised(git_repo, tmp_path):
    statuses, out = _statuses(tmp_path, _history(git_repo))
    assert statuses["Fix total"].status == "observed"
    unused = statuses["Fix shout"]
    assert unused.status == "not_exercised", unused
    assert unused.reason == "no test loaded lib/unused.js from the tree"
    logs = "".join(p.read_text() for p in (out / "logs").glob("*.log"))
    assert "not exercised: no run loaded lib/unused.js from the tree" in logs
    assert "NODE_V8_COVERAGE=" in logs  # the command line as it ran


def test_a_change_the_tests_load_but_do_not_see_stays_not_observed(git_repo, tmp_path):
    repo = git_repo("tiny")
    repo.commit("Initial layout", JS_PROJECT)
    # A rename of a local: the tests load the module and see no difference.
    repo.commit("Fix windowOf's local name", {"lib/range.js": RANGE.replace("const end = start + size;\n  return items.slice(start, end);",
                                                                          "const stop = start + size;\n  return items.slice(start, stop);")})  # fmt: skip
    statuses, out = _statuses(tmp_path, repo)
    (validation,) = statuses.values()
    assert validation.status == "not_observed", validation
    logs = "".join(p.read_text() for p in (out / "logs").glob("*.log"))
    assert "loaded from the tree: lib/range.js" in logs


def test_a_runner_whose_coverage_goes_elsewhere_decides_nothing(git_repo, tmp_path):
    """A wrapper that points NODE_V8_COVERAGE elsewhere (as c8 does) leaves no record of the
    tree: the case stays not_observed, imports unknown, never not_exercised."""
    wrapper = "#!/bin/sh\nNODE_V8_COVERAGE=\"$TMPDIR/elsewhere\" exec \"$@\"\n"
    package = json.loads(JS_PROJECT["package.json"])
    package["scripts"]["test"] = "nyc node --test test/"
    repo = _history(git_repo, {"package.json": json.dumps(package), "node_modules/.bin/nyc": wrapper},
                    executable=["node_modules/.bin/nyc"])  # fmt: skip
    statuses, out = _statuses(tmp_path, repo)
    assert statuses["Fix shout"].status == "not_observed", statuses["Fix shout"]
    logs = "".join(p.read_text() for p in (out / "logs").glob("*.log"))
    assert "imports unknown" in logs


def test_c8_is_not_given_a_coverage_folder_it_would_replace(tmp_path):
    command = TestCommand('PATH="$PWD/node_modules/.bin:$PATH" c8 node --test test/')
    assert "NODE_V8_COVERAGE" not in command.shell([], tmp_path / "r.xml", coverage=tmp_path / "cov")
    plain = TestCommand('PATH="$PWD/node_modules/.bin:$PATH" node --test test/')
    assert plain.shell([], tmp_path / "r.xml", coverage=tmp_path / "cov").startswith(f"NODE_V8_COVERAGE={tmp_path / 'cov'} ")


def test_coverage_records_name_files_by_url_or_path_and_skip_the_rest(tmp_path):
    tree, cov = tmp_path / "tree", tmp_path / "cov"
    (tree / "lib").mkdir(parents=True)
    cov.mkdir()
    record = {"result": [{"url": f"file://{tree}/lib/a%20b.js"}, {"url": "node:internal/main"},
                         {"url": f"{tree}/lib/c.ts"}, {"url": "evalmachine.<anonymous>"}, {"url": ""}]}  # fmt: skip
    (cov / "coverage-1-2-0.json").write_text(json.dumps(record))
    (cov / "junk.json").write_text("{not json")
    files = read_coverage(cov, tree)
    assert files is not None and set(files.values()) == {f"{tree}/lib/a b.js", f"{tree}/lib/c.ts"}
    empty = tmp_path / "none"
    empty.mkdir()
    assert read_coverage(empty, tree) is None  # no record: unknown, not "nothing ran"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "coverage-1-2-0.json").write_text(json.dumps({"result": [{"url": "file:///usr/lib/x.js"}]}))
    assert read_coverage(outside, tree) is None  # nothing of the tree, not even its tests: not this run's



WORKER_TEST = """\
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { spawn } = require('node:child_process');
const path = require('node:path');

test('a worker loads lib/unused.js and is ended by SIGTERM', async () => {
  // As vitest ends its fork workers: the worker never exits on its own.
  const worker = spawn(process.execPath, ['-e',
    `require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'unused.js'))});
     process.stdout.write('ready\\\\n'); setInterval(() => {}, 1000);`]);
  await new Promise((resolve) => worker.stdout.once('data', resolve));
  const ended = new Promise((resolve) => worker.once('exit', (code, signal) => resolve([code, signal])));
  worker.kill('SIGTERM');
  // The hook that writes its coverage keeps the way it dies: by the signal, not an exit code.
  assert.deepStrictEqual(await ended, [null, 'SIGTERM']);
});

test('a process with its own SIGTERM handler keeps it', async () => {
  const own = spawn(process.execPath, ['-e',
    "process.on('SIGTERM', () => process.exit(7)); process.stdout.write('ready\\\\n'); setInterval(() => {}, 1000);"]);
  await new Promise((resolve) => own.stdout.once('data', resolve));
  const ended = new Promise((resolve) => own.once('exit', (code, signal) => resolve([code, signal])));
  own.kill('SIGTERM');
  assert.deepStrictEqual(await ended, [7, null]);
});
"""


def test_a_worker_ended_by_sigterm_still_says_what_it_loaded(git_repo, tmp_path):
    """vitest ends its fork workers with SIGTERM, before V8 writes their coverage at exit:
    on unjs/ufo 142 of 146 cases read "imports unknown". Here only a SIGTERM'd worker loads
    lib/unused.js: the fix of it is seen loaded (not_observed, never not_exercised), and the
    worker still dies of the signal."""
    repo = _history(git_repo, {"test/worker.test.js": WORKER_TEST})
    statuses, out = _statuses(tmp_path, repo)
    unused = statuses["Fix shout"]
    assert unused.status == "not_observed", unused
    logs = "".join(p.read_text() for p in (out / "logs").glob("*.log"))
    assert "loaded from the tree: lib/unused.js" in logs
