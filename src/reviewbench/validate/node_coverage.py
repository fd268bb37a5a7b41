"""Which files a Node test run executed, from V8's own coverage (``NODE_V8_COVERAGE``).

The Python probe (``probe.py``) records the modules pytest imported; for Node the record
is V8's: with ``NODE_V8_COVERAGE=DIR`` every Node process and worker thread writes, as it
exits, one ``coverage-PID-TIME-THREAD.json`` whose ``result[].url`` names each script it
compiled — ``file://`` URLs for modules Node loaded, plain paths for code jest and vitest
run through ``vm`` under its file name. That covers node:test's per-file subprocesses,
jest's and vitest's workers and mocha alike, at no extra run, with no hook in the
project's module system. (Node's module hooks were the alternative: jest and vitest load
modules through their own loaders, which the hooks never see.)

A run counts as probed only when its record names a file of the tree (its test files at
least): a wrapper that points ``NODE_V8_COVERAGE`` elsewhere (c8 does, for its own report;
it is never given the variable) leaves a record of the wrapper's own files only, which
must read "unknown", not "nothing of the tree ran".
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["COVERAGE_DIR", "SCRIPT_SUFFIXES", "coverage_prefix", "read_coverage", "runs_as_script", "takes_coverage"]

#: The folder of a scratch tree's home the coverage of one run is written to.
COVERAGE_DIR = "v8-coverage"
#: Files Node runs (a ``.d.ts`` declares types only and never runs: not among them).
SCRIPT_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
#: Scripts that never run: declarations, and tsd's and vitest's type tests (``index.test-d.ts``).
_TYPES_ONLY = (".d.ts", ".d.mts", ".d.cts", ".test-d.ts", ".test-d.tsx", ".test-d.mts", ".test-d.cts")
#: Wrappers that set ``NODE_V8_COVERAGE`` themselves, replacing ours.
_OWN_COVERAGE = frozenset({"c8"})
_URL = re.compile(rb'"url"\s*:\s*"((?:[^"\\]|\\.)*)"')
#: A record past this is read no further (a huge bundle's inline source is not a URL).
_MAX_BYTES = 256 << 20


def runs_as_script(path: str) -> bool:
    """Whether Node (or a runner) executes ``path``: a script that is not types only."""
    return path.endswith(SCRIPT_SUFFIXES) and not path.endswith(_TYPES_ONLY)


def takes_coverage(words: list[str]) -> bool:
    """Whether a Node runner command (its words) may be given ``NODE_V8_COVERAGE``: not
    when it sets the variable itself or runs under a wrapper that does (c8)."""
    return not any(w.startswith("NODE_V8_COVERAGE=") or Path(w).name in _OWN_COVERAGE for w in words)


#: Preloaded into every Node process of a covered run (``NODE_OPTIONS=--require``): V8
#: writes its record at exit, which a process ended by SIGTERM never reaches — vitest's
#: fork workers are ended so (on unjs/ufo 142 of 146 cases read "imports unknown"). On
#: SIGTERM the hook writes the record (``v8.takeCoverage``); when it is the only listener it
#: then dies of the signal as it would have, else the program's own listeners decide.
_EXIT_HOOK = """\
'use strict';
const onTerm = () => {
  try { require('v8').takeCoverage(); } catch (_) {}
  if (process.listenerCount('SIGTERM') === 1) {
    process.removeListener('SIGTERM', onTerm);
    process.kill(process.pid, 'SIGTERM');
  }
};
process.on('SIGTERM', onTerm);
"""
_HOOK_FILE = "reviewbench-v8-sigterm.cjs"


def coverage_prefix(folder: Path) -> str:
    """The assignments that make every Node process of a shell command write its coverage
    into ``folder``, SIGTERM'd ones included (the hook is written beside ``folder``)."""
    prefix = f"NODE_V8_COVERAGE={shlex.quote(str(folder))} "
    hook = folder.parent / _HOOK_FILE
    if re.search(r"[\s\"'\\$`]", str(hook)):
        return prefix  # NODE_OPTIONS cannot carry this path: records of SIGTERM'd processes are lost
    if not hook.is_file():
        hook.parent.mkdir(parents=True, exist_ok=True)
        hook.write_text(_EXIT_HOOK, encoding="utf-8")
    return prefix + f'NODE_OPTIONS="--require={hook} ${{NODE_OPTIONS-}}" '


def _path(url: str) -> str | None:
    if url.startswith("file://"):
        return unquote(urlsplit(url).path) or None
    return url if url.startswith("/") else None


def read_coverage(folder: Path, root: Path) -> dict[str, str] | None:
    """Every file the run's Node processes executed, path → path (the shape of the probe's
    module map, see ``probe.tree_files``); None when no record names a file of the tree
    ``root`` (no record, or a wrapper's own)."""
    try:
        records = sorted(p for p in folder.iterdir() if p.suffix == ".json")
    except OSError:
        return None
    files: dict[str, str] = {}
    for record in records:
        try:
            with record.open("rb") as handle:
                data = handle.read(_MAX_BYTES)
        except OSError:
            continue
        for match in _URL.finditer(data):
            try:  # a JSON string's text: escapes decoded as JSON does
                url = json.loads(b'"' + match.group(1) + b'"')
            except ValueError:
                continue
            path = _path(url)
            if path is not None:
                files[path] = path
    roots = tuple(dict.fromkeys((str(root), os.path.realpath(root))))
    inside = any(p.startswith(r + os.sep) and os.sep + "node_modules" + os.sep not in p[len(r):]
                 for p in files for r in roots)  # fmt: skip
    return files if inside else None
