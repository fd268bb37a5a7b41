"""The ``reviewbench`` command line: a thin click layer over the stage APIs.

Errors become one line on stderr and an exit code (2 usage, 1 failure, 130 Ctrl-C,
143 SIGTERM);
a traceback is shown only when ``REVIEWBENCH_DEBUG`` is set.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import sys
import threading

import click

from .._text import printable
from .._version import __version__
from ..errors import ReviewbenchError, Terminated
from ._errors import os_error_line
from ._group import HelpGroup
from .audit import audit_command
from .case import case_group
from .compare import compare_command
from .demo import demo_command
from .exclude import exclude_command
from .gate import gate_command
from .label import agreement_command, judge_group, label_group
from .label_read import read_command, sample_command
from .mine import mine_command
from .release import release_command
from .report import report_command
from .rerun import rerun_command
from .run import experiment_group, export_command, register_command, run_command, runs_command
from .schema import schema_command
from .score import score_command
from .show import show_command
from .tasks import tasks_group
from .validate import validate_command

__all__ = ["cli", "main"]

EPILOG = """\b
Examples:
  reviewbench demo                                    # the whole pipeline, offline, on a sample project
  reviewbench mine ~/src/mylib --out corpus          # fix reversals from history
  reviewbench mine . --out corpus --since 2024-01-01 --limit 50
  reviewbench validate corpus --jobs 2                # prove each case with the repo's tests
  reviewbench experiment init && reviewbench run experiment.toml --out runs/first
  reviewbench runs runs/first --json                  # every run with its state
  reviewbench score runs/first                        # metrics, intervals, decision
  reviewbench compare runs/first runs/second          # paired differences between two run directories
  reviewbench rerun runs/first --out runs/second      # the registered experiment again (after a prompt edit)
  reviewbench gate runs/second --baseline runs/first  # CI: exit 0 pass, 1 fail, 3 inconclusive
  reviewbench report runs/first --csv out --sarif f.sarif  # report.html, CSV, SARIF
  reviewbench show corpus --cases                     # what was mined, and what was dropped
  reviewbench case add corpus --base main --head rule-break --gold gold.toml --stratum rule_violation
  reviewbench schema gold                             # JSON Schema of gold.jsonl
"""


#: The commands in the order they are used (each stage, then what works on its output).
WORKFLOW = ("mine", "show", "case", "validate", "audit", "experiment", "register", "run", "runs", "rerun", "export",
            "exclude", "score", "compare", "gate", "report", "label", "agreement", "judge", "release", "tasks", "demo",
            "schema")  # fmt: skip

#: One line each in the command list (a command's own --help says the rest).
SUMMARIES = {
    "mine": "Mine REPO's history into a corpus of review cases.",
    "show": "Counts of a corpus by stratum, validation status and drop reason.",
    "case": "Add, list and remove hand-made cases of a corpus.",
    "validate": "Prove each case of CORPUS with the repository's own tests.",
    "audit": "Check the matcher with probes that never describe a defect, and diff shape alone.",
    "experiment": "Write a commented experiment template.",
    "register": "Freeze an experiment's inputs and analysis rules before any run.",
    "run": "Run every condition of EXPERIMENT on its corpus (resumable).",
    "runs": "List the runs of RUNDIR with their states and last errors.",
    "rerun": "Run the registered experiment of RUNDIR again into a new run directory.",
    "export": "Export runs as JSONL, CSV, inspect_ai logs or a Hugging Face dataset.",
    "exclude": "Leave one run or case out of the analysis, with a reason.",
    "score": "Score the runs of RUNDIR: metrics, 95% intervals and each condition's decision.",
    "compare": "Compare two run directories on the same cases, with paired intervals.",
    "gate": "CI gate: RUNDIR against a baseline run directory (pass, fail, inconclusive).",
    "report": "Write the offline HTML report of RUNDIR (and CSV, SARIF).",
    "label": "Human labels: packets for blinded raters, the labelling app, adjudication.",
    "agreement": "Inter-rater agreement: percent agreement, confusion table, Cohen's kappa.",
    "judge": "An LLM judge, used only once calibrated against people's labels.",
    "release": "Release the labels of RUNDIR: gold, final labels, adjudications, hashes.",
    "tasks": "Fix-task mode: grade coding models on the repository's own history.",
    "demo": "The whole pipeline, offline, on an embedded sample project.",
    "schema": "Print the JSON Schema of a corpus, run-directory or output file.",
}


@click.group(cls=HelpGroup, order=WORKFLOW, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="reviewbench")
def cli() -> None:
    """Measure an AI code reviewer on your own repository's history.

    Mine fixes from git history into a labelled benchmark, prove each case with the
    repository's tests, run reviewers against it and score them with honest statistics.
    """


cli.add_command(demo_command)
cli.add_command(mine_command)
cli.add_command(show_command)
cli.add_command(case_group)
cli.add_command(schema_command)
cli.add_command(validate_command)
cli.add_command(audit_command)
cli.add_command(experiment_group)
cli.add_command(run_command)
cli.add_command(rerun_command)
cli.add_command(runs_command)
cli.add_command(export_command)
cli.add_command(score_command)
cli.add_command(compare_command)
cli.add_command(gate_command)
cli.add_command(exclude_command)
cli.add_command(register_command)
cli.add_command(report_command)
cli.add_command(tasks_group)
cli.add_command(label_group)
label_group.add_command(read_command)  # hand readings (cli/label_read.py): no labels
label_group.add_command(sample_command)
cli.add_command(agreement_command)
cli.add_command(release_command)
cli.add_command(judge_group)
for _name, _summary in SUMMARIES.items():
    cli.commands[_name].short_help = _summary


def _fail(message: str, code: int) -> None:
    # One line whatever the message: click lists choices on lines of their own.
    message = re.sub(r"\s*\n\s*", " ", message.strip())
    # Paths in messages are the user's or a repository's: no control or bidi character.
    click.echo(f"reviewbench: error: {printable(message)}", err=True)
    sys.exit(code)


INTERNAL_ERROR_CHARS = 300
"""How much of an unexpected exception's text the one line keeps (a repr can be huge)."""


def _interruption(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or SIGTERM) an exception was raised while unwinding, if any: a library
    whose clean-up fails under an interrupt (libcst's position provider raises KeyError)
    must not turn it into an internal error."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, KeyboardInterrupt):
            return current
        current = current.__cause__ or current.__context__
    return None


def _interrupted(interrupt: KeyboardInterrupt) -> None:
    if isinstance(interrupt, Terminated):
        _fail("terminated", 143)
    _fail("interrupted", 130)


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    # On Ctrl-C, a solver's process may be reaped by subprocess's own clean-up before
    # asyncio's child watcher gets to it; asyncio then logs "Unknown child process" on
    # stderr. The process is gone either way, and errors here are one line.
    logging.getLogger("asyncio").setLevel(logging.ERROR)
    try:
        cli.main(args=argv, prog_name="reviewbench", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:  # a bare group asks for its help: not an error
        click.echo(exc.ctx.get_help())
        sys.exit(0)
    except click.ClickException as exc:
        hint = " (see --help)" if isinstance(exc, click.UsageError) else ""
        _fail(exc.format_message() + hint, exc.exit_code)
    except (KeyboardInterrupt, click.exceptions.Abort) as exc:
        # click turns KeyboardInterrupt (hence Terminated) into Abort, keeping it as the cause.
        if isinstance(exc, Terminated) or isinstance(exc.__cause__, Terminated):
            _fail("terminated", 143)
        _fail("interrupted", 130)
    except ReviewbenchError as exc:
        if os.environ.get("REVIEWBENCH_DEBUG"):
            raise
        _fail(str(exc), exc.exit_code)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(1)
    except OSError as exc:  # a path the user gave: missing folder, a directory, a full disk
        if (interrupt := _interruption(exc)) is not None:
            _interrupted(interrupt)
        if os.environ.get("REVIEWBENCH_DEBUG"):
            raise
        _fail(os_error_line(exc), 1)
    except Exception as exc:  # a bug: still one line, unless debugging
        if (interrupt := _interruption(exc)) is not None:
            _interrupted(interrupt)
        if type(exc).__name__ in ("SchemaError", "PydanticSerializationError"):
            # pydantic-core interrupted mid-validator or mid-dump only names the signal.
            if "Terminated" in str(exc):
                _fail("terminated", 143)
            if "KeyboardInterrupt" in str(exc):
                _fail("interrupted", 130)
        if os.environ.get("REVIEWBENCH_DEBUG"):
            raise
        text = re.sub(r"\s+", " ", str(exc)).strip()
        if len(text) > INTERNAL_ERROR_CHARS:
            text = text[:INTERNAL_ERROR_CHARS] + "…"
        _fail(f"internal error: {type(exc).__name__}: {text} (set REVIEWBENCH_DEBUG=1 for details)", 1)
