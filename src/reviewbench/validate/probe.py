"""Which code a test run exercised, read from the probe plugin's record (``_probe_plugin.py``).

Validation makes two claims from a test run: "the tests see this defect" (``observed``)
and "they do not" (``not_observed``). Both are about the scratch tree's code, so both
are only true when that code is what the tests imported. The probe plugin writes down
every imported module and its file at the end of each pytest run, at no extra run:

- a case none of whose changed Python files was imported from the tree in any of its
  runs is ``not_exercised``, not ``not_observed``;
- a run that imported one of the tree's top-level packages from somewhere else (an
  installed copy shadowing the tree) is an ``error`` naming both places.

Only pytest commands a shell would not interpret (``[VAR=value ...] PROGRAM ARGS``) are
probed: the plugin must be put on ``PYTHONPATH`` literally (see ``TestCommand.prefixed``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from . import _bytecode_cache as bytecode_cache

__all__ = [
    "PLUGIN_MODULE",
    "first_error_line",
    "install_plugin",
    "plain",
    "read_probe",
    "shadowing",
    "top_level_packages",
    "tree_files",
]

PLUGIN_MODULE = "_reviewbench_probe"
PLUGIN_DIR = "probe-plugin"
_SOURCE = Path(__file__).with_name("_probe_plugin.py")
#: Loaded by the plugin: compiled code kept between cold runs (``_bytecode_cache.py``).
_BYTECODE = Path(__file__).with_name("_bytecode_cache.py")
BYTECODE_MODULE = "_reviewbench_bytecode"
#: Folders at the root that hold tests or tooling, never the project's importable code.
_NOT_CODE = frozenset({"tests", "test", "testing", "docs", "doc", "examples", "benchmarks", "scripts", "tools"})


def install_plugin(home: Path) -> Path:
    """Write the plugin and the bytecode cache it loads into ``home/probe-plugin/`` (a folder
    holding nothing else, so that putting it on ``PYTHONPATH`` can shadow no project
    module), make the cache's folder ``home/bytecode-cache/``; return the plugin's folder."""
    folder = home / PLUGIN_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for name, origin in ((PLUGIN_MODULE, _SOURCE), (BYTECODE_MODULE, _BYTECODE)):
        target = folder / f"{name}.py"
        source = origin.read_bytes()
        if not target.is_file() or target.read_bytes() != source:
            target.write_bytes(source)
    (home / bytecode_cache.FOLDER).mkdir(exist_ok=True)
    return folder


def read_probe(path: Path) -> dict[str, str] | None:
    """Module name → real path of its file, as the plugin recorded it; None when the run
    left no record (pytest stopped before its end, or the plugin was not loaded)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    modules = data.get("modules") if isinstance(data, dict) else None
    if not isinstance(modules, dict):
        return None
    return {str(k): str(v) for k, v in modules.items() if isinstance(v, str)}


def top_level_packages(root: Path) -> dict[str, str]:
    """The tree's own importable top-level names → their path in the tree: packages
    (``PKG/__init__.py``) at the root and packages or modules under ``src/``."""
    found: dict[str, str] = {}
    for parent in (root, root / "src"):
        if parent.is_symlink() or not parent.is_dir():
            continue
        for entry in sorted(parent.iterdir()):
            name = entry.name
            if entry.is_symlink() or not name.isidentifier() or (parent == root and name in _NOT_CODE):
                continue
            relative = entry.relative_to(root).as_posix()
            if entry.is_dir() and (entry / "__init__.py").is_file():
                found.setdefault(name, relative)
            elif parent != root and entry.suffix == ".py" and entry.stem.isidentifier():
                found.setdefault(entry.stem, relative)
    return found


def _inside(path: str, roots: tuple[str, ...]) -> str | None:
    for root in roots:
        if path == root or path.startswith(root + os.sep):
            return Path(os.path.relpath(path, root)).as_posix()
    return None


def _roots(root: Path) -> tuple[str, ...]:
    return tuple(dict.fromkeys((str(root), os.path.realpath(root))))


def tree_files(modules: dict[str, str], root: Path) -> set[str]:
    """The files of ``modules`` that lie in the tree, relative to it (POSIX)."""
    roots = _roots(root)
    return {rel for path in modules.values() if (rel := _inside(path, roots)) is not None}


def shadowing(modules: dict[str, str], root: Path) -> str | None:
    """One line naming both places when a top-level package of the tree was imported from
    outside it (an installed copy shadowing the tree's code), else None."""
    roots = _roots(root)
    for name, relative in top_level_packages(root).items():
        path = modules.get(name)
        if path is not None and _inside(path, roots) is None:
            where = str(Path(path).parent) if Path(path).name == "__init__.py" else path
            return (f"package {name!r} was imported from {where}, not from the tree's {relative}: "
                    "an installed copy shadows the code under test")  # fmt: skip
    return None


_E_LINE = re.compile(r"^E\s+(\S.*)$")
_E_BLANK = re.compile(r"^E\s*$")
_LOCATION = re.compile(r'^File "[^"]*", line \d+')
_ERROR_LINE = re.compile(r"^(?:\S+: )?(?:[A-Za-z_][\w.]*(?:Error|Exception)|No module named)\b.*")
#: An argparse usage error, as pytest prints one for an option it does not know.
_USAGE_ERROR = re.compile(r"^\S.*?: error: \S.*")
_NOISE = re.compile(r"^(?:=+|_+|-+)( .*)?$|^\s*$")
#: A pytest section: a test's or a collection error's header, or a summary rule.
_SECTION = re.compile(r"^(?:_{3,} .* _{3,}|={3,}.*)$")
#: Terminal escape sequences (colour, cursor): pytest colours its output with --color=yes.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def plain(text: str) -> str:
    """``text`` without terminal escape sequences, other control characters shown as ``?``
    (newlines and tabs kept): what a log or a table may print."""
    return _CONTROL.sub("?", _ANSI.sub("", text))


def first_error_line(output: str, tree: Path) -> str | None:
    """The line that says why a run failed, without colour codes: the exception pytest
    reports first (its last ``E`` block within the first failure: a chained exception's
    context, e.g. the ``StopIteration`` behind a ``PackageNotFoundError``, comes before
    it), else the first line that names an error, else a usage error (``python -m pytest:
    error: unrecognized arguments: --flake8``: the lines after it only say where the
    configuration lies), else the last line of output; the
    tree's path replaced by ``<tree>`` (so that the same failure reads the same in every
    scratch tree)."""
    lines = plain(output).splitlines()
    chosen = _first_failure(lines)
    if chosen is None:
        chosen = next((line.strip() for line in lines if _ERROR_LINE.match(line.strip())), None)
    if chosen is None:
        chosen = next((line.strip() for line in lines if _USAGE_ERROR.match(line.strip())), None)
    if chosen is None:
        chosen = next((line.strip() for line in reversed(lines) if not _NOISE.match(line)), None)
    if chosen is None:
        return None
    for root in sorted(_roots(tree), key=len, reverse=True):
        chosen = chosen.replace(root, "<tree>")
    return chosen.strip()[:300] or None


def _first_failure(lines: list[str]) -> str | None:
    """The first line of the last run of ``E`` lines in the first section that has any;
    of a run that starts where the error is (a ``SyntaxError``'s ``File "…", line N``), the
    line that names the error."""
    chosen: list[str] = []
    previous_e = False
    for line in lines:
        match = _E_LINE.match(line)
        if match:
            if not previous_e:
                chosen = []
            chosen.append(match.group(1))
            previous_e = True
            continue
        if previous_e and _E_BLANK.match(line):
            continue  # an empty line inside the block
        previous_e = False
        if chosen and _SECTION.match(line):
            break
    if not chosen:
        return None
    if _LOCATION.match(chosen[0]):
        return next((line for line in chosen if _ERROR_LINE.match(line)), chosen[-1])
    return chosen[0]
