"""The test-run options ``validate``, ``tasks mine`` and ``tasks grade`` share, declared once.

Each command takes the options it uses (``omit`` the others) and may word an option's help
for itself (``help``); types, ranges and defaults are the same everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

import click

__all__ = ["test_run_options"]

F = TypeVar("F", bound=Callable[..., Any])

#: (flag, click keyword arguments), in --help order.
_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("--test-cmd", {"help": "Shell command running the tests (default: detected)."}),
    ("--setup", {"help": "Build an isolated test environment (cached in ~/.cache/reviewbench/envs): a fresh venv, "
                         "then this command inside it; 'auto': the project editable with its test extras or "
                         "requirements, and pytest."}),
    ("--setup-cmd", {"help": "Run once per scratch tree before tests (network allowed)."}),
    ("--python", {"metavar": "PYTHON",
                  "help": "The interpreter tests run under, for history that needs an older one (a path, or a name "
                          "on PATH such as python3.7; 3.7 or later): the base of the --setup environment, else of "
                          "the default test command [default: your active environment]."}),
    ("--jobs", {"type": click.IntRange(min=1), "help": "Parallel workers [default: cores]."}),
    ("--timeout", {"type": click.FloatRange(min=0, min_open=True), "help": "Seconds per test run [default: 600]."}),
    ("--reruns", {"type": click.IntRange(min=1),
                  "help": "A failure counts only if it reproduces on every one of N runs [default: 2]."}),
    ("--network", {"type": click.Choice(["deny", "allow"]), "help": "Network for tests [default: deny]."}),
    ("--memory-mb", {"type": click.IntRange(min=64), "help": "Memory limit per test run [default: 4096]."}),
    ("--max-file-mb", {"type": click.IntRange(min=1), "help": "Largest file a test run may write, its case log "
                                                             "included [default: 1024]; past it the run is stopped."}),
    ("--executor", {"type": click.Choice(["local", "ray"]), "help": "Where to run tests [default: local]."}),
    ("--ray-address", {"help": "Ray cluster address (default: start a local Ray)."}),
)  # fmt: skip

FLAGS = tuple(flag for flag, _ in _OPTIONS)


def test_run_options(*, omit: Collection[str] = (), help: Mapping[str, str] | None = None) -> Callable[[F], F]:  # noqa: A002
    """A decorator adding the shared test-run options (all but ``omit``), ``help`` rewording some."""
    unknown = (set(omit) | set(help or {})) - set(FLAGS)
    if unknown:
        raise ValueError(f"no such test-run option: {sorted(unknown)}")  # a programming error

    def decorate(command: F) -> F:
        for flag, kwargs in reversed(_OPTIONS):
            if flag not in omit:
                command = click.option(flag, **{**kwargs, **({"help": help[flag]} if help and flag in help else {})})(command)
        return command

    return decorate
