"""Why cases were not observed: grouping by first error line, and stopping early.

A wrong environment fails every case the same way (a missing module, an installed copy
shadowing the tree, old commits failing on new tools). Validation then stops after the
first few cases instead of spending hours saying the same thing, and tells the user what
to type; ``--keep-going`` validates everything anyway.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from ..errors import ValidationStopped
from ..records import Validation, ValidationStatus
from .probe import plain

__all__ = ["FAIL_FAST_CASES", "FailFast", "blames_environment", "group_reasons", "has_remedy", "remedy"]

#: Stop when the first results, covering this many distinct bases (all of them, when the
#: run has fewer) and this many cases, all fail with the same first error line (runs of
#: this many cases or fewer always finish).
FAIL_FAST_CASES = 5
_FAILING = frozenset({ValidationStatus.ERROR, ValidationStatus.BASE_FAILING})
NO_LINE = "(no error line)"


def group_reasons(validations: Iterable[Validation], top: int = 3) -> dict[str, list[tuple[str, int]]]:
    """Per status other than ``observed``, its most common reason lines with their counts."""
    counts: dict[str, Counter[str]] = {}
    for validation in validations:
        if validation.status is ValidationStatus.OBSERVED:
            continue
        line = plain(validation.reason) if validation.reason else (
            "the tests passed with the patch" if validation.status is ValidationStatus.NOT_OBSERVED else NO_LINE
        )
        counts.setdefault(validation.status.value, Counter())[line] += 1
    return {status: c.most_common(top) for status, c in sorted(counts.items())}


_MISSING = re.compile(r"No module named '([\w.]+)'")
_NO_METADATA = re.compile(r"No package metadata was found for (\S+)")
#: What only Python 2 had: itertools' lazy variants, modules Python 3 renamed.
_PY2 = re.compile(r"cannot import name '(?:izip|imap|ifilter|ifilterfalse|izip_longest)' from 'itertools'|"
                  r"No module named '(?:urlparse|urllib2|cPickle|cStringIO|StringIO|ConfigParser|Queue|httplib|"
                  r"__builtin__|HTMLParser|cookielib|Cookie|SocketServer|xmlrpclib|commands)'|"
                  r"multiple exception types must be parenthesized|Missing parentheses in call to 'print'")
_NO_FIXTURE = re.compile(r"fixture '([\w.]+)' not found")
#: A deprecation (of pytest N-1) that the project's ``filterwarnings = error`` makes fatal.
_TOO_NEW = re.compile(r"PytestRemovedIn(\d+)Warning")
_TOO_OLD = re.compile(r"requires pytest-([\d.]+), actual pytest-")
#: An API of pytest's that old test suites use and a newer pytest removed.
_PYTEST_API = re.compile(
    r"'(?:Function|Module|Class|Instance|Item|Node|Package|Session|Config|FixtureRequest|SubRequest|CallInfo|"
    r"TestReport|MarkDecorator|MarkInfo)' object has no attribute '\w+'|Marks cannot be applied to fixtures|"
    r"module 'pytest' has no attribute '\w+'|Applying a mark to a fixture function|pytest\.yield_fixture"
)
#: Tests written for nose (2010s): nose does not import on Python 3.10+ (``collections.Callable``),
#: and its yield tests ran under pytest until 4.0.
_NOSE = re.compile(r"No module named 'nose(?:\.[\w.]+)?'|module 'collections' has no attribute '(?:Callable|Mapping|"
                   r"MutableMapping|Sequence|Iterable)'")
_NOSE_REMEDY = ("the tests are nose-era (nose needs Python 3.9 or older; its yield tests, pytest<4): build the "
                "environment on an older interpreter, e.g. --python python3.7 --setup \"pip install -e . nose "
                "'pytest<4'\", or mine a recent range (mine --since)")
_FALLBACK = ("old commits may fail with today's tools: mine a recent range (mine --since), or pin the "
             "project's tools with --setup 'pip install ...'")  # fmt: skip


_NODE_MISSING = re.compile(r"Cannot find (?:module|package) '([^']+)'")
_NODE_FALLBACK = ("old commits may fail with today's tools: mine a recent range (mine --since), or install the "
                  "project's own dependencies with --setup auto (npm ci once per lockfile)")  # fmt: skip


def remedy(line: str, setup: str | None = None, pytest: str | None = None) -> str:
    """What to type about a failure that every case shares; ``setup``: the ``--setup``
    the run already had (then suggesting it again would help nobody); ``pytest``: the
    version of pytest the tests ran under, when known."""
    if (node := _NODE_MISSING.search(line)) or "Node.js v" in line or "node_modules" in line:
        if node and not setup:
            return f"the tests cannot find {node.group(1)!r}: pass --setup auto (npm ci once, shared by every tree)"
        return _NODE_FALLBACK if not setup else f"{_NODE_FALLBACK.split(', or ')[0]}, or pass --test-cmd"
    built = f"the environment built by --setup {setup!r}" if setup else None
    if _PY2.search(line):
        return ("these commits are Python 2 code (reviewbench validates on Python 3.7 and later): mine a recent "
                "range (mine --since), from when the project ran on Python 3")  # fmt: skip
    if "collects no test" in line:
        return ("pytest collects no test at these commits: add their test files to the test command's "
                "python_files (-o 'python_files=tests.py test_*.py' at the end of --test-cmd, with --force), or "
                "mine a recent range (mine --since)")  # fmt: skip
    if _NOSE.search(line):
        return _NOSE_REMEDY
    missing = _MISSING.search(line)
    if "shadows the code under test" in line:
        if built:
            return (f"{built} has an installed copy of the package: install the project editable "
                    "(pip install -e .) or not at all")  # fmt: skip
        return ("the tests imported an installed copy instead of the tree: drop it from the test "
                "environment, put the tree's folder first on PYTHONPATH in --test-cmd, or use --setup auto")  # fmt: skip
    if missing and "." in missing.group(1) and "version" in missing.group(1).rsplit(".", 1)[1]:
        # A module of the package itself: a version file written at install (hatch-vcs,
        # setuptools-scm), which no commit has.
        if built:
            return (f"the tree lacks {missing.group(1)}, a file written when the project is installed, and "
                    f"{built} did not write it: make it install the project editable (pip install -e .)")  # fmt: skip
        return (f"the tree lacks {missing.group(1)}, a file written when the project is installed: pass "
                "--setup auto (its generated files are copied into every scratch tree)")  # fmt: skip
    if _NO_METADATA.search(line):
        name = _NO_METADATA.search(line).group(1)  # type: ignore[union-attr]
        if built:
            return f"{built} does not have {name} installed: make it install the project (pip install -e .)"
        return (f"the project reads its version from the installed {name}, which the test environment lacks: "
                "pass --setup auto, or activate the project's own environment with it installed")  # fmt: skip
    fixture = _NO_FIXTURE.search(line)
    if fixture:
        if built:
            return (f"{built} lacks the pytest plugin that provides fixture {fixture.group(1)!r}: pass a --setup "
                    "command that installs it too (e.g. --setup 'pip install -e .[test] pytest-PLUGIN')")  # fmt: skip
        return (f"the tests use fixture {fixture.group(1)!r} of a pytest plugin the test environment lacks: "
                "pass --setup auto (or --setup 'pip install ...'), or activate the project's own environment")  # fmt: skip
    if missing or "ModuleNotFoundError" in line or "ImportError" in line:
        if built:
            what = f"what provides {missing.group(1).split('.')[0]!r}" if missing else "what the tests import"
            return (f"{built} lacks {what}: pass a --setup command that installs it too, e.g. "
                    f"--setup 'pip install -e .[test] PACKAGE' (or a requirements file), or mine a recent "
                    "range (mine --since) if only old commits need it")  # fmt: skip
        return ("the tests need a package the test environment lacks: pass --setup auto (or --setup "
                "'pip install ...'), or activate the project's own environment")  # fmt: skip
    new, old = _TOO_NEW.search(line), _TOO_OLD.search(line)
    if _PYTEST_API.search(line) and not new:
        major = pytest.split(".", 1)[0] if pytest and pytest.split(".", 1)[0].isdigit() else None
        which = f"pytest {pytest}" if pytest else "today's pytest"
        pin = f"pytest<{major}" if major else "pytest<N"
        return (f"old commits use a pytest API that {which} no longer has: pin an older one, e.g. "
                f"--setup \"pip install -e '.[test]' '{pin}'\", or mine a recent range (mine --since)")  # fmt: skip
    if new:
        pin = f"pytest<{int(new.group(1)) - 1}"
        return (f"old commits fail with today's pytest (a deprecation the project's settings make an error): "
                f"pin it, e.g. --setup \"pip install -e '.[test]' '{pin}'\", or mine a recent range (mine --since)")  # fmt: skip
    if old:
        pin = f"pytest>={old.group(1)}"
        if built:
            return f"{built} has an older pytest than the project asks for: pass a --setup command with '{pin}'"
        return (f"the test environment's pytest is older than the project asks for: pass --setup auto (it "
                f"installs the current pytest), or --setup \"pip install -e . '{pin}'\"")  # fmt: skip
    return _FALLBACK


def has_remedy(line: str) -> bool:
    """Whether :func:`remedy` knows what ``line`` calls for (not only its general advice)."""
    return remedy(line) != _FALLBACK


def blames_environment(line: str) -> bool:
    """Whether ``line`` says the test environment is wrong (a missing module, package
    metadata or generated file; an installed copy shadowing the tree)."""
    return bool(
        "shadows the code under test" in line or _MISSING.search(line) or _NO_METADATA.search(line)
        or _NO_FIXTURE.search(line) or "ModuleNotFoundError" in line or "ImportError" in line
    )  # fmt: skip


class FailFast:
    """Watches results in the order they finish; :meth:`add` raises to stop the run.

    It stops when the first results all failed with the same line, or all with lines
    that blame the environment (on dateutil old commits lack ``six``, newer ones
    ``hypothesis``: one ``--setup`` cures both)."""

    def __init__(self, bases: Iterable[str], cases: int, enabled: bool = True, setup: str | None = None,
                 pytest: str | None = None) -> None:  # fmt: skip
        self.setup = setup
        self.pytest = pytest
        distinct = len(set(bases))
        self.need_bases = min(FAIL_FAST_CASES, distinct)
        self.need_cases = FAIL_FAST_CASES
        self.armed = enabled and cases > FAIL_FAST_CASES  # stopping must spare some cases
        self._bases: set[str] = set()
        self._cases = 0
        self._statuses: set[str] = set()
        self._lines: Counter[str] = Counter()

    def add(self, base: str, validation: Validation) -> None:
        """Count one result.

        Raises:
            ValidationStopped: the results so far all failed the same way.
        """
        if not self.armed:
            return
        line = plain(validation.reason) if validation.reason else None
        if validation.status not in _FAILING or not line or (
            self._lines and line not in self._lines and not all(map(blames_environment, [line, *self._lines]))
        ):
            self.armed = False  # one different result: the environment is not what fails
            return
        self._lines[line] += 1
        self._bases.add(base)
        self._cases += 1
        self._statuses.add(validation.status.value)
        if len(self._bases) >= self.need_bases and self._cases >= self.need_cases:
            self.armed = False
            statuses = " or ".join(sorted(self._statuses))
            (line, _), *others = self._lines.most_common()
            more = (f" (and {len(others)} other line{'s' if len(others) != 1 else ''} of that kind: {others[0][0]})"
                    if others else "")  # fmt: skip
            raise ValidationStopped(
                f"validation stopped: the first {self._cases} cases ({len(self._bases)} "
                f"base{'s' if len(self._bases) != 1 else ''}) all ended {statuses} with: {line}{more} — "
                f"{remedy(line, self.setup, self.pytest)}; --keep-going validates every case anyway"
            )
