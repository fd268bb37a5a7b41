"""The repository's test command: detecting it, selecting tests, reading its verdict.

Verdicts come from exit codes and, for pytest, its JUnit XML report, never from printed
text: a test that prints "PASSED" and exits 1 has failed.
"""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import sys
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from ..errors import UsageError
from .sandbox import RunOutcome

__all__ = ["TestCommand", "Verdict", "VerdictKind", "detect_test_command"]


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


def detect_test_command(root: Path) -> str:
    """``python -m pytest`` when the repository looks like a pytest project.

    Raises:
        UsageError: nothing to detect; the user must pass ``--test-cmd``.
    """
    if _has_pytest_config(root) or (root / "tests").is_dir() or (root / "test").is_dir():
        if importlib.util.find_spec("pytest") is not None:
            return f"{shlex.quote(sys.executable)} -m pytest"
        return "python3 -m pytest"
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
    def is_pytest(self) -> bool:
        words = shlex.split(self.command)
        return any(Path(w).name in ("pytest", "py.test") for w in words[:4]) or "pytest" in words[1:4]

    def shell(self, selection: list[str], junit: Path) -> str:
        """The command line for one run of ``selection`` (empty: the whole suite)."""
        if not self.is_pytest:
            return self.command
        extra = ["-p", "no:cacheprovider", f"--junitxml={junit}", *selection]
        return self.command + " " + " ".join(shlex.quote(a) for a in extra)

    def verdict(self, outcome: RunOutcome, junit: Path) -> Verdict:
        """Grade one run from its exit code and JUnit report."""
        if outcome.timed_out:
            return Verdict(VerdictKind.TIMEOUT, None, duration_s=outcome.duration_s)
        code = outcome.exit_code
        assert code is not None
        failing = _junit_failures(junit) if self.is_pytest else None
        if code == 0:
            kind = VerdictKind.PASS
        elif code in (126, 127):
            kind = VerdictKind.ERROR  # the shell could not run the command
        elif self.is_pytest and code == 5:
            kind = VerdictKind.NO_TESTS
        elif self.is_pytest and code in (3, 4):
            kind = VerdictKind.ERROR  # pytest internal or usage error
        else:
            kind = VerdictKind.FAIL
        if code < 0:
            kind = VerdictKind.FAIL  # killed by a signal (e.g. the memory limit)
        return Verdict(kind, code, frozenset(failing or ()), outcome.duration_s)


def _junit_failures(path: Path) -> set[str] | None:
    """Ids of failed or errored test cases in a JUnit XML file, or None if unreadable."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    failing: set[str] = set()
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            classname, name = case.get("classname", ""), case.get("name", "")
            failing.add(f"{classname}::{name}" if classname else name)
    return failing
