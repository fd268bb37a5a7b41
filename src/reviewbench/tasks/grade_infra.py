"""What a solver may not change: the machinery that decides whether tests passed.

A solver's patch that adds a ``conftest.py`` hook forcing every outcome to "passed", edits
the graded test files, changes pytest's configuration or drops a ``sitecustomize.py`` or
``.pth`` file into the tree would grade itself. Before the grading tests run, every such
file the patch touched is put back as it was at the task's base (or removed, when the patch
created it), and the grade records ``touched_test_infra``: such a run is never resolved,
whatever the restored tests then say (docs/HOSTILE.md).

Node projects have the same machinery under other names: the runners' configuration
(``jest.config.*``, ``vitest.config.*`` and the ``vite.config.*`` vitest also reads,
``.mocharc*``, ``ava.config.*``, ``.taprc``, ``.c8rc*``, ``.nycrc*``), the Babel
configuration jest transforms tests with, anything under a ``node_modules`` folder, and a
``package.json`` whose test scripts (``test*``, ``pretest*``, ``posttest*``) or runner
tables (``jest``, ``mocha``, ``ava``, ``c8``, ``nyc``, ``babel``, ``tap``) changed.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from ..git.scratch import ScratchClone

__all__ = ["NODE_CONFIG_FILES", "PYTEST_CONFIG_FILES", "restore_test_infra", "test_infra_paths"]

#: Files pytest reads its configuration from (any of them, at any depth, can become the
#: inifile of a run whose arguments lie below it).
PYTEST_CONFIG_FILES = frozenset(
    {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini", "setup.cfg"}
)
#: Modules Python imports on its own at start-up, before any test.
STARTUP_MODULES = frozenset({"sitecustomize.py", "usercustomize.py"})
#: Files a Node test runner (or the transform it runs tests through) reads its configuration from.
NODE_CONFIG_FILES = re.compile(
    r"(?:jest|vitest|vite|ava|babel)\.config\.[cm]?[jt]s(?:on)?|vitest\.workspace\.\w+|\.mocharc(?:\.\w+)?"
    r"|\.babelrc(?:\.\w+)?|\.taprc|\.c8rc(?:\.\w+)?|\.nycrc(?:\.\w+)?"
)
#: The ``package.json`` tables a Node runner reads.
_RUNNER_TABLES = ("jest", "mocha", "ava", "c8", "nyc", "babel", "tap")
_TEST_SCRIPT = re.compile(r"^(?:pre|post)?test")


def _by_name(path: str, test_files: frozenset[str]) -> bool:
    name = PurePosixPath(path).name
    return (
        path in test_files
        or name == "conftest.py"
        or name in PYTEST_CONFIG_FILES
        or name in STARTUP_MODULES
        or name.endswith(".pth")
        or NODE_CONFIG_FILES.fullmatch(name) is not None
        or "node_modules" in PurePosixPath(path).parts
    )


def _node_tables(text: str | None) -> object:
    """What a ``package.json`` tells a Node runner: its test scripts and runner tables (a
    marker when it does not parse)."""
    if text is None:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return ("unparsable", text)
    if not isinstance(data, dict):
        return ("not an object", repr(data))
    scripts = data.get("scripts")
    tests = {k: v for k, v in scripts.items() if _TEST_SCRIPT.match(k)} if isinstance(scripts, dict) else scripts
    return {"scripts": tests, **{k: data[k] for k in _RUNNER_TABLES if k in data}}


def _pytest_tables(text: str | None) -> object:
    """The ``[tool.pytest*]`` tables of a pyproject.toml (a marker when it does not parse)."""
    if text is None:
        return {}
    try:
        tool = tomllib.loads(text).get("tool", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return ("unparsable", text)
    if not isinstance(tool, dict):
        return ("not a table", repr(tool))
    return {k: v for k, v in tool.items() if k.startswith("pytest")}


def _at_base(tree: ScratchClone, base: str, path: str) -> bytes | None:
    proc = tree.git("cat-file", "blob", f"{base}:{path}", check=False)
    return proc.stdout if proc.returncode == 0 else None


def _in_tree(tree: Path, path: str) -> str | None:
    target = tree / path
    if target.is_symlink() or not target.is_file():
        return None
    return target.read_text("utf-8", "surrogateescape")


def test_infra_paths(
    tree: ScratchClone, base: str, changed: Iterable[str], test_files: Iterable[str]
) -> list[str]:
    """The paths among ``changed`` (after the patch was applied in ``tree``) that are test
    machinery: graded test files, conftest.py, pytest configuration, start-up modules and
    ``.pth`` files, and a pyproject.toml whose ``[tool.pytest*]`` tables changed; a Node
    runner's configuration, ``node_modules``, and a package.json whose test scripts or
    runner tables changed."""
    tests = frozenset(test_files)
    found: list[str] = []
    for path in sorted(set(changed)):
        if _by_name(path, tests):
            found.append(path)
        elif PurePosixPath(path).name == "pyproject.toml":
            before = _at_base(tree, base, path)
            old = before.decode("utf-8", "surrogateescape") if before is not None else None
            if _pytest_tables(old) != _pytest_tables(_in_tree(tree.path, path)):
                found.append(path)
        elif PurePosixPath(path).name == "package.json":
            before = _at_base(tree, base, path)
            old = before.decode("utf-8", "surrogateescape") if before is not None else None
            if _node_tables(old) != _node_tables(_in_tree(tree.path, path)):
                found.append(path)
    return found


def restore_test_infra(tree: ScratchClone, base: str, paths: Iterable[str]) -> None:
    """Put each path back as it was at ``base``; remove it when ``base`` did not have it."""
    for path in paths:
        target = tree.path / path
        if _at_base(tree, base, path) is not None:
            tree.git("checkout", "--quiet", base, "--", path)
        elif target.is_symlink() or target.is_file():
            target.unlink()
