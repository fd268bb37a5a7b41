"""The repository's test command: detecting it, selecting tests, reading its verdict.

Verdicts come from exit codes and, for pytest, its JUnit XML report, never from printed
text: a test that prints "PASSED" and exits 1 has failed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from ..errors import UsageError
from ..sandbox import RunOutcome
from .environment import default_python, src_layout
from .node import NodeRunner, detect_node_command, node_runner, read_report, reporting, selected
from .node_coverage import coverage_prefix, takes_coverage
from .probe import PLUGIN_DIR, PLUGIN_MODULE
from .warm import plain_command

__all__ = ["PYTEST_NO_TESTS", "TestCommand", "Verdict", "VerdictKind", "detect_test_command", "is_node_project", "node_id", "read_junit"]

#: pytest's exit status when it collected no test at all ("no tests ran").
PYTEST_NO_TESTS = 5


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class VerdictKind(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NO_TESTS = "no_tests"
    TIMEOUT = "timeout"
    ERROR = "error"


@dataclass(frozen=True)
class Verdict:
    kind: VerdictKind
    exit_code: int | None
    failing: frozenset[str] = frozenset()
    duration_s: float = 0.0
    passed: frozenset[str] = frozenset()
    """Ids of the test cases that passed (JUnit ``classname::name``; pytest only)."""
    cpu_s: float | None = None
    """CPU seconds of the run, when known (warm runs)."""
    modules: dict[str, str] | None = field(default=None, compare=False)
    """Module name → file, every module the run imported (probed pytest runs), or file →
    file, every script a probed Node run executed."""
    error_line: str | None = None
    """The line of the run's output that says why it failed (see ``probe.first_error_line``)."""


def _has_pytest_config(root: Path) -> bool:
    if (root / "pytest.ini").is_file() or (root / "conftest.py").is_file():
        return True
    for name, marker in (("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]")):
        path = root / name
        if path.is_file() and marker in path.read_text(errors="replace"):
            return True
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(errors="replace"))
        except tomllib.TOMLDecodeError:
            return False
        return "pytest" in data.get("tool", {})
    return False


def is_node_project(root: Path) -> bool:
    """A ``package.json`` at the root and no pytest configuration: tested by Node."""
    return (root / "package.json").is_file() and not _has_pytest_config(root)


def detect_test_command(root: Path, python: str | None = None) -> str:
    """``PYTHON -m pytest`` when the repository looks like a pytest project, with ``src``
    on ``PYTHONPATH`` for a src layout (the tree's code, not an installed copy).

    Args:
        python: the interpreter; default: the user's active environment (never
            reviewbench's own, see ``environment.default_python``).

    Raises:
        UsageError: nothing to detect; the user must pass ``--test-cmd``.
    """
    if is_node_project(root):
        found = detect_node_command(root)
        if found is None:
            raise UsageError(f"package.json of {root} has no test script: pass --test-cmd "
                             "(or set test_cmd under [validate] in reviewbench.toml)")  # fmt: skip
        return found.command
    if _has_pytest_config(root) or (root / "tests").is_dir() or (root / "test").is_dir():
        prefix = "PYTHONPATH=src " if src_layout(root) else ""
        return f"{prefix}{shlex.quote(python or default_python())} -m pytest"
    raise UsageError(
        f"cannot tell how to run the tests of {root}: pass --test-cmd "
        "(or set test_cmd under [validate] in reviewbench.toml)"
    )


@dataclass(frozen=True)
class TestCommand:
    """A shell command that runs tests; pytest commands get selection and JUnit XML."""

    __test__ = False  # not a pytest test class

    command: str

    def __post_init__(self) -> None:
        try:
            words = shlex.split(self.command)
        except ValueError as exc:
            raise UsageError(f"test command {self.command!r} cannot be parsed: {exc}") from None
        if not words:
            raise UsageError("the test command is empty")
        program = words[0]
        if "=" not in program and shutil.which(program) is None and not Path(program).is_file():
            raise UsageError(f"test command not found: {program}")

    @property
    def runner(self) -> NodeRunner | None:
        """The Node test runner of a one-step command (``docs/LANGUAGES.md``), if any."""
        _prefix, rest = _split_prefix(self.command)
        return node_runner(rest) if "&&" not in rest and ";" not in rest and "|" not in rest else None

    @property
    def node_probed(self) -> bool:
        """Whether the Node runner's runs record the files they ran (``node_coverage.py``)."""
        return self.runner is not None and takes_coverage(shlex.split(self.command))

    @property
    def selects(self) -> bool:
        """Whether a run can be limited to some test files (pytest and the Node runners)."""
        return self.is_pytest or self.runner is not None

    @property
    def is_pytest(self) -> bool:
        words = shlex.split(self.command)
        return (
            any(Path(w).name in ("pytest", "py.test") for w in words[:4]) or "pytest" in words[1:4]
        )

    @property
    def chooses_tracebacks(self) -> bool:
        """Whether the command sets pytest's traceback style itself (``--tb``)."""
        return any(word == "--tb" or word.startswith("--tb=") for word in shlex.split(self.command))

    def prefixed(self, plugin_dir: Path) -> str | None:
        """The command with ``plugin_dir`` added at the end of its ``PYTHONPATH`` (the
        command's own ``PYTHONPATH=`` word, else the environment's), so that the probe
        plugin can be loaded; None when a shell would interpret the command (its
        ``PYTHONPATH`` cannot be known) or it is not pytest."""
        if not self.is_pytest or not plain_command(self.command):
            return None
        words = shlex.split(self.command)
        count = 0
        while count < len(words) and _ASSIGNMENT.match(words[count]):
            count += 1
        env = dict(word.split("=", 1) for word in words[:count])
        existing = env.pop("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
        value = f"{existing}{os.pathsep}{plugin_dir}" if existing else str(plugin_dir)
        assignments = [f"{name}={text}" for name, text in env.items()] + [f"PYTHONPATH={value}"]
        return shlex.join([*assignments, *words[count:]])

    def shell(self, selection: list[str], junit: Path, probe: Path | None = None,
              coverage: Path | None = None, tracebacks: str | None = None) -> str:  # fmt: skip
        """The command line for one run of ``selection`` (empty: the whole suite); with
        ``probe``, the probe plugin (installed in ``probe.parent``, see ``probe.py``)
        records the run's imports there, when the command allows it; with ``coverage``, a
        Node runner's processes write V8's coverage there (``node_coverage.py``); with
        ``tracebacks``, pytest's ``--tb`` style, unless the command names its own."""
        runner = self.runner
        if runner is not None:
            prefix, rest = _split_prefix(self.command)
            rest = selected(rest, runner, selection) if selection else rest
            if coverage is not None and self.node_probed:
                prefix = coverage_prefix(coverage) + prefix
            return prefix + reporting(rest, runner, junit)
        if not self.is_pytest:
            return self.command
        command = self.command
        extra = ["-p", "no:cacheprovider", f"--junitxml={junit}"]
        if tracebacks and not self.chooses_tracebacks:
            extra.append(f"--tb={tracebacks}")
        prefixed = self.prefixed(probe.parent / PLUGIN_DIR) if probe is not None else None
        if prefixed is not None and probe is not None:
            command = prefixed
            extra += ["-p", PLUGIN_MODULE, f"--reviewbench-probe={probe}"]
        return command + " " + " ".join(shlex.quote(a) for a in [*extra, *selection])

    def verdict(self, outcome: RunOutcome, junit: Path, output: str = "") -> Verdict:
        """Grade one run from its exit code and JUnit report (a Node runner's report, or
        its TAP ``output``)."""
        if outcome.timed_out:
            return Verdict(VerdictKind.TIMEOUT, None, duration_s=outcome.duration_s, cpu_s=outcome.cpu_s)
        code = outcome.exit_code
        assert code is not None
        runner = self.runner
        if runner is not None:
            return self._node_verdict(runner, outcome, junit, output)
        failing, passed = read_junit(junit) if self.is_pytest else (None, None)
        if code == 0:
            kind = VerdictKind.PASS
        elif code in (126, 127):
            kind = VerdictKind.ERROR  # the shell could not run the command
        elif self.is_pytest and code == PYTEST_NO_TESTS:
            kind = VerdictKind.NO_TESTS
        elif self.is_pytest and code in (3, 4):
            kind = VerdictKind.ERROR  # pytest internal or usage error
        else:
            kind = VerdictKind.FAIL
        if code < 0:
            kind = VerdictKind.FAIL  # killed by a signal (e.g. the memory limit)
        return Verdict(
            kind, code, frozenset(failing or ()), outcome.duration_s, frozenset(passed or ()), outcome.cpu_s
        )


    def _node_verdict(self, runner: NodeRunner, outcome: RunOutcome, report_path: Path, output: str) -> Verdict:
        code = outcome.exit_code
        assert code is not None
        report = read_report(runner, report_path, output)
        if code == 0:
            kind = VerdictKind.PASS
        elif code in (126, 127):
            kind = VerdictKind.ERROR
        elif report is not None and not report.failing and not report.passed:
            kind = VerdictKind.NO_TESTS  # e.g. jest's and vitest's "No tests found" (exit 1)
        else:
            kind = VerdictKind.FAIL
        failing, passed = (report.failing, report.passed) if report is not None else (frozenset(), frozenset())
        return Verdict(kind, code, failing, outcome.duration_s, passed, outcome.cpu_s,
                       error_line=report.reason if report is not None and kind is VerdictKind.FAIL else None)  # fmt: skip


_PREFIX = re.compile(r"""^((?:[A-Za-z_][A-Za-z0-9_]*=(?:"[^"]*"|'[^']*'|\S*)\s+)*)(.*)$""", re.DOTALL)


def _split_prefix(command: str) -> tuple[str, str]:
    """(the leading ``NAME=value`` words as written, the rest): the prefix keeps its quoting
    (``PATH="$PWD/node_modules/.bin:$PATH"`` must reach the shell unquoted)."""
    match = _PREFIX.match(command)
    assert match is not None  # the pattern matches any text
    return match.group(1), match.group(2)


def read_junit(path: Path) -> tuple[set[str] | None, set[str] | None]:
    """Ids of the failed (or errored) and of the passed test cases in a JUnit XML file.

    Skipped cases are in neither set. ``(None, None)`` when the file is missing or
    unreadable: the run cannot be graded test by test.
    """
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None, None
    failing: set[str] = set()
    passed: set[str] = set()
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        test_id = f"{classname}::{name}" if classname else name
        if case.find("failure") is not None or case.find("error") is not None:
            failing.add(test_id)
        elif case.find("skipped") is None:
            passed.add(test_id)
    return failing, passed - failing


def node_id(test_id: str, root: Path) -> str | None:
    """The pytest node id of a JUnit ``classname::name`` id, resolved against the tree.

    JUnit writes ``tests.test_x.TestCls`` for ``tests/test_x.py::TestCls``: the longest
    dotted prefix that names a file is the module. None when the id cannot be resolved
    (a collection error has no class name).
    """
    # JUnit class names are dotted, never "::"; a parametrised name may hold "::" (IPv6).
    classname, _, name = test_id.partition("::") if "::" in test_id else ("", "", test_id)
    parts = classname.split(".") if classname else []
    for cut in range(len(parts), 0, -1):
        module = "/".join(parts[:cut]) + ".py"
        if (root / module).is_file():
            return "::".join([module, *parts[cut:], name])
    return None
