"""Every error raised to the user is in the ReviewbenchError tree and has one exit code."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
from pathlib import Path

import reviewbench
from reviewbench import errors
from reviewbench.errors import EXIT_CODES, ReviewbenchError

ROOT = Path(reviewbench.__file__).parent

#: Built-in exceptions allowed outside pydantic validators: a caller's bug (wrong arguments
#: to a pure function), or a Python protocol. The CLI reports them as "internal error".
PROGRAMMING_ERRORS = {
    ("tasks/grade_metrics.py", "pass_at_k"),
    ("tasks/grade_metrics.py", "pass_hat_k"),
    ("tasks/context.py", "context_files"),
    ("config/experiment.py", "unique_names"),  # called from a field validator
    ("git/quote.py", "read_quoted"),  # a pure parser's error: callers raise their own (PatchRejected)
    ("mine/mutations/_base.py", "register"),
    ("mine/script_mutations/_base.py", "register"),
    ("mine/languages/_base.py", "register"),
    # A kind registered twice (reviewer kinds, solvers, judges): a programming error at import.
    ("reviewers/base.py", "decorate"),
    ("tasks/solvers.py", "decorate"),
    ("label/judge.py", "decorate"),
    ("mine/shape.py", "mann_whitney_auc"),  # a pure statistic called without both samples: a caller's bug
    ("cli/_testrun.py", "test_run_options"),  # a command asking for an option that does not exist: a bug
    ("score/stats.py", "exact_interval"),  # asked for the interval of an empty column: a caller's bug
    ("score/frame.py", "add"),  # a column added after resampling: a caller's bug
    ("score/frame.py", "_drawn"),  # read before resampling: a caller's bug
    # Validators used through Annotated[..., AfterValidator(...)]: pydantic turns them into
    # a validation error, which the reader reports as one line.
    ("records.py", "_relative_path"),
    ("records.py", "_patch_path"),
    ("config/reviewers.py", "parse_host_port"),  # the network list's field validator: one line at load
    ("config/reviewers.py", "_plain_headers"),  # headers, base_url, a forge remote holding a credential
    ("config/reviewers.py", "_public_url"),
    ("config/reviewers.py", "_push_url"),
    # An OSError re-raised with the file it concerns; the CLI prints OS errors as one line.
    ("cli/run.py", "export_command"),
    ("store/corpus.py", "_write"),
    ("store/corpus.py", "add"),  # a writer handed a file outside patches/ by its caller: a bug
    # The engine's protocol: a TimeoutError from an attempt is the run's `timed_out`.
    ("reviewers/forge.py", "_await_review"),
    ("git/repo.py", "raise_if_interrupted"),  # git died of Ctrl-C: unwind as Ctrl-C does
}


def _raises():
    """(file, enclosing function, its decorators, raised name) for every ``raise X``."""
    for path in ROOT.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        enclosing: dict[int, ast.AST] = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Raise):
                        enclosing[id(sub)] = node  # the innermost wins: walked outermost first
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                name = exc.id if isinstance(exc, ast.Name) else getattr(exc, "attr", None)
                function = enclosing.get(id(node))
                decorators = [ast.unparse(d) for d in getattr(function, "decorator_list", [])]
                yield path, getattr(function, "name", None), decorators, name


def _module(path: Path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return importlib.import_module(".".join(parts))


def test_every_raised_class_is_in_the_tree_or_a_documented_programming_error():
    strays = []
    for path, function, decorators, name in _raises():
        if name is None or name in {"exc", "error"}:  # re-raising a caught exception
            continue
        rel = str(path.relative_to(ROOT))
        if hasattr(builtins, name):
            validator = any("validator" in d for d in decorators)
            protocol = bool(function) and function.startswith("__") and function.endswith("__")
            if not (validator or protocol) and (rel, function) not in PROGRAMMING_ERRORS:
                strays.append(f"{rel}:{function} raises {name}")
            continue
        cls = getattr(_module(path), name, None)
        if not inspect.isclass(cls):
            continue  # a name in an example string of source code
        if issubclass(cls, BaseException) and not issubclass(cls, ReviewbenchError):
            private = name.startswith("_") or issubclass(cls, KeyboardInterrupt)
            if not private:
                strays.append(f"{rel}:{function} raises {name}, outside the ReviewbenchError tree")
    assert strays == []


def test_every_class_maps_to_one_exit_code_and_is_drawn_in_the_docstring():
    classes = [c for c in vars(errors).values() if inspect.isclass(c) and issubclass(c, ReviewbenchError)]
    assert set(classes) == set(EXIT_CODES)
    for cls in classes:
        assert EXIT_CODES[cls] in {1, 2, 130}, cls
        assert cls.__name__ in errors.__doc__, cls
    assert EXIT_CODES[errors.UsageError] == 2 and EXIT_CODES[errors.Cancelled] == 130
    assert EXIT_CODES[errors.CorpusError] == 1


def test_cli_turns_each_class_into_one_line_and_its_exit_code(monkeypatch, cli):
    from reviewbench.cli import cli as group

    for cls, code in EXIT_CODES.items():
        @group.command(f"raise-{cls.__name__.lower()}")
        def boom(cls=cls) -> None:
            raise cls("something\nwent wrong") if cls is not errors.ReviewerError else cls("went wrong")

        result = cli(f"raise-{cls.__name__.lower()}")
        group.commands.pop(f"raise-{cls.__name__.lower()}")
        assert result.code == code, cls
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("reviewbench: error: "), cls
