"""Node test runners: the test command from ``package.json``, file selection, failing test ids.

``npm test`` would run the ``pretest``/``posttest`` hooks too (linters, ``npm audit``
that needs the network, builds), and it hides the runner behind ``npm run`` chains, so
the ``test`` script is resolved instead: ``npm run x``/``pnpm x``/``yarn x`` steps are
replaced by script ``x``, steps that run no known test runner (lint, type checks) are
dropped with a note, and what remains runs with ``node_modules/.bin`` on ``PATH``, as npm
would run it. The runner is then recognised (node:test, jest, vitest, mocha, tape, ava)
to select the fix's own test files and to ask it for a machine-readable report: JUnit
XML from node:test, vitest and mocha (``xunit``), jest's JSON, TAP from tape and ava.
A failing test's id is its name path (``group > test``), and the reason line is its
failure message — the failing assertion, not the runner's summary. See docs/LANGUAGES.md.
"""

from __future__ import annotations

import json
import re
import shlex
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

__all__ = [
    "NodeCommand",
    "NodeReport",
    "NodeRunner",
    "detect_node_command",
    "load_failure",
    "node_error_line",
    "node_notes",
    "node_runner",
    "read_report",
    "read_tap",
    "reporting",
    "selected",
    "tree_relative",
]


class NodeRunner(StrEnum):
    NODE_TEST = "node:test"
    JEST = "jest"
    VITEST = "vitest"
    MOCHA = "mocha"
    TAPE = "tape"
    AVA = "ava"


#: Programs that wrap a runner (coverage tools, env setters) and the runner names.
_WRAPPERS = frozenset({"nyc", "c8", "cross-env", "npx", "dotenv", "tsx", "ts-node"})
_RUNNERS = {"jest": NodeRunner.JEST, "vitest": NodeRunner.VITEST, "mocha": NodeRunner.MOCHA, "_mocha": NodeRunner.MOCHA,
            "tape": NodeRunner.TAPE, "ava": NodeRunner.AVA}  # fmt: skip
_NPM_DEFAULT = 'echo "Error: no test specified" && exit 1'
_PATHLIKE = re.compile(r"[/*]|\.(?:[cm]?[jt]sx?)$")
_RUN = re.compile(r"^(?:npm\s+(?:run(?:-script)?|test)|pnpm(?:\s+run)?|yarn(?:\s+run)?|bun\s+run)(?:\s+--silent|\s+-s)?\s+([\w:.-]+)\s*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class NodeCommand:
    """A Node project's test command and how it was found."""

    command: str
    notes: tuple[str, ...] = ()


def _package(root: Path) -> dict[str, object] | None:
    try:
        data = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _steps(command: str) -> list[str]:
    return [step.strip() for step in re.split(r"&&", command) if step.strip()]


def node_runner(command: str) -> NodeRunner | None:
    """The test runner a one-step command runs, looking past wrappers (``nyc tape …``)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for index, word in enumerate(words):
        if _ASSIGNMENT.match(word) or word.startswith("-"):
            continue
        name = Path(word).name
        if name == "node" and "--test" in words[index + 1 :]:
            return NodeRunner.NODE_TEST
        if name in _RUNNERS:
            return _RUNNERS[name]
        if name not in _WRAPPERS:
            return None
    return None


_EXEC = re.compile(r"^(?:npx(?:\s+--no-install|\s+--yes)?|pnpm(?:\s+exec)?|yarn(?:\s+exec)?|bunx|npm\s+exec\s+--)\s+(?!run\b)(\S.*)$")


def _resolve(step: str, scripts: dict[str, str], depth: int = 0) -> list[str]:
    """``step`` with ``npm run x`` replaced by script ``x``'s own steps, recursively, and
    ``pnpm vitest run`` / ``npx jest`` by the program they run (from ``node_modules/.bin``)."""
    match = _RUN.match(step)
    executed = _EXEC.match(step)
    if executed is not None and (match is None or match.group(1) not in scripts):
        return [executed.group(1)]
    if match is None or depth > 8:
        return [step]
    name = "test" if step.startswith("npm test") else match.group(1)
    if name not in scripts:
        return [step]
    return [s for inner in _steps(scripts[name]) for s in _resolve(inner, scripts, depth + 1)]


def detect_node_command(root: Path) -> NodeCommand | None:
    """The test command of a ``package.json`` project, or None when it has none (or no package.json)."""
    package = _package(root)
    if package is None:
        return None
    scripts = package.get("scripts")
    scripts = {k: v for k, v in scripts.items() if isinstance(v, str)} if isinstance(scripts, dict) else {}
    test = scripts.get("test")
    if not test or test.strip() == _NPM_DEFAULT:
        return None
    notes: list[str] = []
    hooks = [h for h in ("pretest", "posttest") if h in scripts]
    if hooks:
        notes.append("skipped the " + " and ".join(f"{h} script ({scripts[h]!r})" for h in hooks)
                     + ": hooks lint, audit or publish, and may need the network")  # fmt: skip
    steps = [s for step in _steps(test) for s in _resolve(step, scripts)]
    running = [s for s in steps if node_runner(s) is not None]
    if running and len(running) < len(steps):
        dropped = [s for s in steps if s not in running]
        notes.append(f"left out of the test script, as no test runner: {'; '.join(dropped)}")
        steps = running
    typechecked = [s for s in steps if _without_typecheck(s) != s]
    if typechecked:
        notes.append("left vitest's --typecheck out of the test script: its tsc run writes into node_modules, "
                     "which tests share read-only")  # fmt: skip
        steps = [_without_typecheck(s) for s in steps]
    command = " && ".join(steps)
    return NodeCommand(f'PATH="$PWD/node_modules/.bin:$PATH" {command}' if command else command, tuple(notes))


#: vitest's ``--typecheck.X`` options that take a value (``--typecheck.tsconfig tsconfig.json``).
_TYPECHECK_VALUES = frozenset({"checker", "include", "exclude", "tsconfig", "spawnTimeout"})


def _without_typecheck(step: str) -> str:
    """A vitest step without ``--typecheck`` and its ``--typecheck.X`` options; other steps as they are."""
    if node_runner(step) is not NodeRunner.VITEST or "--typecheck" not in step:
        return step
    words = shlex.split(step)
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "--typecheck" or word.startswith("--typecheck="):
            continue
        elif word.startswith("--typecheck."):
            skip = "=" not in word and word.removeprefix("--typecheck.") in _TYPECHECK_VALUES
        else:
            kept.append(word)
    return shlex.join(kept)


def node_notes(root: Path) -> tuple[str, ...]:
    """What :func:`detect_node_command` left out of the project's test script, to tell the user."""
    found = detect_node_command(root)
    return found.notes if found is not None else ()


#: Options whose value is a path that is not a test selection (``mocha --require test/setup.js``).
_PATH_OPTIONS = frozenset({"--require", "-r", "--import", "--loader", "--experimental-loader", "--config", "-c",
                           "--setupFiles", "--setupFilesAfterEnv", "--rootDir", "--root", "--dir", "--project",
                           "--tsconfig", "--env-file", "--file", "--ignore", "--exclude"})  # fmt: skip


def selected(command: str, runner: NodeRunner, files: list[str]) -> str:
    """``command`` running only ``files`` (its own path and glob arguments dropped; an
    option's path value, ``--require ./setup.js``, kept)."""
    words = shlex.split(command)
    kept = [w for i, w in enumerate(words) if not _PATHLIKE.search(w) or w.startswith("-") or _ASSIGNMENT.match(w)
            or (i > 0 and words[i - 1] in _PATH_OPTIONS)]  # fmt: skip
    return shlex.join(kept + files) if files else command


def reporting(command: str, runner: NodeRunner, report: Path) -> str:
    """``command`` also writing a machine-readable report to ``report`` (TAP runners print it)."""
    extra = {
        NodeRunner.NODE_TEST: ["--test-reporter=spec", "--test-reporter-destination=stderr",
                               "--test-reporter=junit", f"--test-reporter-destination={report}"],
        NodeRunner.VITEST: ["--reporter=default", "--reporter=junit", f"--outputFile={report}"],
        NodeRunner.JEST: ["--json", f"--outputFile={report}"],
        NodeRunner.MOCHA: ["--reporter", "xunit", "--reporter-option", f"output={report}"],
        NodeRunner.AVA: ["--tap"],
        NodeRunner.TAPE: [],
    }[runner]  # fmt: skip
    if not extra:
        return command
    words = shlex.split(command)
    if runner is NodeRunner.MOCHA:
        words = _without_reporter(words)
    # Runner flags go right after the runner (and node's --test), before any file.
    at = next(i for i, w in enumerate(words) if node_runner(shlex.join(words[i:])) is not None
              and not _ASSIGNMENT.match(w) and Path(w).name not in _WRAPPERS)  # fmt: skip
    at += 1
    if runner is NodeRunner.NODE_TEST:
        at = words.index("--test", at) + 1 if "--test" in words[at:] else at
    elif runner is NodeRunner.VITEST and at < len(words) and words[at] == "run":
        at += 1
    return shlex.join(words[:at] + extra + words[at:])


#: mocha's reporter options: it uses the last reporter given, so the command's own must go.
_MOCHA_REPORTER = frozenset({"--reporter", "-R", "--reporter-option", "--reporter-options", "-O"})


def _without_reporter(words: list[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _MOCHA_REPORTER:
            skip = True
        elif not word.startswith(tuple(f"{flag}=" for flag in _MOCHA_REPORTER if flag.startswith("--"))):
            kept.append(word)
    return kept


_NODE_ERROR = re.compile(r"^\s*(?:[A-Za-z_$][\w$.]*)?(?:Error|Exception)(?: \[[A-Z_]+\])?: \S.*")


def node_error_line(output: str) -> str | None:
    """The first thrown error of a Node run that left no report (``Error: EROFS: …``,
    ``TypeError [ERR_…]: …``, ``Error: Cannot find module 'x'``), not node's version footer."""
    for line in _ANSI.sub("", output).splitlines():
        if _NODE_ERROR.match(line):
            return line.strip()[:300]
    return None


_FRAME = re.compile(r"^\s*at (?:.*? \()?(?:file://)?(/[^()]+?):\d+:\d+\)?\s*$")


def load_failure(output: str, root: Path) -> str | None:
    """The tree's file (relative) whose loading crashed a run before it could report: the
    outermost frame of the first stack trace that lies in the tree outside ``node_modules``
    — the file the runner itself loaded, mocha's ``Exception during run: TypeError …``
    reached through ``test/test.js`` from the module it requires (jshttp/mime-types)."""
    prefix = str(root).rstrip("/") + "/"
    found: str | None = None
    started = False
    for line in _ANSI.sub("", output).splitlines():
        if not line.lstrip().startswith("at "):
            if started:
                break
            continue
        started = True
        frame = _FRAME.match(line)
        path = frame.group(1) if frame is not None else ""  # `node:internal/…` frames name no file
        if path.startswith(prefix) and not path[len(prefix):].startswith("node_modules/") \
                and "/node_modules/" not in path[len(prefix):]:  # fmt: skip
            found = path[len(prefix):]
    return found


def tree_relative(ids: frozenset[str], root: Path) -> frozenset[str]:
    """Test ids with the tree's absolute path made relative: node:test names a test file
    that failed to load by its absolute path, which differs from one scratch tree to the next."""
    prefix = str(root).rstrip("/") + "/"
    return frozenset(i[len(prefix):] if i.startswith(prefix) else i for i in ids)


@dataclass(frozen=True)
class NodeReport:
    failing: frozenset[str]
    passed: frozenset[str]
    reason: str | None = None


def read_report(runner: NodeRunner, report: Path, output: str) -> NodeReport | None:
    """The failing and passing test ids of one run, and the first failure's message; None
    when the run left no readable report (it crashed before testing, or was killed)."""
    if runner is NodeRunner.JEST:
        return _read_jest(report)
    if runner in (NodeRunner.TAPE, NodeRunner.AVA):
        return read_tap(output)
    return _read_junit(report)


_ERROR_PREFIX = re.compile(r"^(?:Error \[ERR_TEST_FAILURE\]|AssertionError(?: \[ERR_ASSERTION\])?|Error):\s*")


def _one_line(text: str | None) -> str | None:
    """A failure message as one line: its lines up to the stack trace, joined."""
    if not text:
        return None
    kept: list[str] = []
    for line in _ANSI.sub("", text).splitlines():
        stripped = line.strip()
        if stripped.startswith(("at ", "code:", "failureType:", "cause:")):
            break
        if stripped:
            kept.append(stripped)
    line = _ERROR_PREFIX.sub("", " ".join(kept).removeprefix("["))
    line = re.sub(r"\]?\s*\{$", "", line)  # node prints `[Error: message] {` before the error's fields
    return re.sub(r"\s+", " ", line)[:300] or None


def _read_junit(path: Path) -> NodeReport | None:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    failing: set[str] = set()
    passed: set[str] = set()
    reason: str | None = None

    def walk(node: ET.Element, prefix: list[str]) -> None:
        nonlocal reason
        for child in node:
            if child.tag == "testsuite":
                name = child.get("name", "")
                # vitest and mocha name a suite by its file or "Mocha Tests": not a test's name.
                own = [name] if name and not name.endswith((".js", ".ts", ".mjs", ".cjs", ".tsx", ".jsx")) \
                    and name not in ("Mocha Tests", "root") else []  # fmt: skip
                walk(child, prefix + own)
            elif child.tag == "testcase":
                classname = child.get("classname", "")
                inner = [p for p in classname.split(" > ")] if classname and classname not in ("test", "") \
                    and not classname.endswith((".js", ".ts", ".mjs", ".cjs", ".tsx", ".jsx")) else []  # fmt: skip
                test_id = " > ".join([*prefix, *[p for p in inner if p not in prefix], child.get("name", "")])
                problem = child.find("failure")
                if problem is None:
                    problem = child.find("error")
                if problem is not None:
                    failing.add(test_id)
                    if reason is None:
                        reason = _one_line(problem.text or problem.get("message"))
                elif child.find("skipped") is None:
                    passed.add(test_id)
            else:
                walk(child, prefix)

    if root.tag == "testsuite":  # a report of one suite: walk it as a child
        holder = ET.Element("testsuites")
        holder.append(root)
        root = holder
    walk(root, [])
    return NodeReport(frozenset(failing), frozenset(passed - failing), reason)


def _read_jest(path: Path) -> NodeReport | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    failing: set[str] = set()
    passed: set[str] = set()
    reason: str | None = None
    for suite in data.get("testResults", []) if isinstance(data, dict) else []:
        for test in suite.get("assertionResults", []):
            test_id = " > ".join([*test.get("ancestorTitles", []), test.get("title", "")])
            if test.get("status") == "failed":
                failing.add(test_id)
                if reason is None:
                    reason = _one_line(_ANSI.sub("", "\n".join(test.get("failureMessages", []))))
            elif test.get("status") == "passed":
                passed.add(test_id)
        if suite.get("status") == "failed" and not suite.get("assertionResults") and reason is None:
            reason = _one_line(_ANSI.sub("", suite.get("message", "")))
    return NodeReport(frozenset(failing), frozenset(passed - failing), reason)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_TAP_RESULT = re.compile(r"^(\s*)(not ok|ok)\b\s*\d*\s*(?:-\s*)?(.*?)\s*(?:#\s*(SKIP|TODO)\b.*)?$", re.IGNORECASE)
_TAPE_TEST = re.compile(r"^#\s+(.*\S)\s*$")
_TAP_SUMMARY = re.compile(r"^#\s+(tests|pass|fail|ok|skip|todo)\b", re.IGNORECASE)
_YAML_FIELD = re.compile(r"^\s+(operator|expected|actual|message|at):\s*(.*)$")


def read_tap(output: str) -> NodeReport | None:
    """Failing and passing ids from TAP: tape's ``# test name`` heads name the assertions
    under them (the id is the test's name; an assertion number moves when another fails),
    and the first failing assertion with its ``expected``/``actual`` is the reason."""
    lines = _ANSI.sub("", output).splitlines()
    if not any(_TAP_RESULT.match(line) for line in lines):
        return None
    failing: set[str] = set()
    passed: set[str] = set()
    reason: str | None = None
    current: str | None = None
    pending: list[str] = []  # the YAML block of the first failure
    in_failure = False
    for line in lines:
        test = _TAPE_TEST.match(line)
        if test and not _TAP_SUMMARY.match(line) and not line.startswith("# Subtest"):
            current = test.group(1)
            in_failure = False
            continue
        result = _TAP_RESULT.match(line)
        if result and not result.group(1):
            in_failure = False
            ok = result.group(2).lower() == "ok"
            name = current or result.group(3) or "?"
            if result.group(4):
                continue
            if ok:
                passed.add(name)
            else:
                failing.add(name)
                if reason is None:
                    reason = result.group(3) or name
                    in_failure = True
            continue
        if in_failure and (field := _YAML_FIELD.match(line)) and field.group(1) in ("expected", "actual", "operator"):
            pending.append(f"{field.group(1)} {field.group(2).strip()}")
    if reason is not None and pending:
        reason = f"{reason} ({', '.join(pending[:3])})"
    return NodeReport(frozenset(failing), frozenset(passed - failing), reason and reason[:300])
