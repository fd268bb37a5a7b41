"""``reviewbench run``, ``runs``, ``export`` and ``experiment init``: stage 3 at the CLI."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.table import Table

from ..errors import EndpointUnreachable, OutputExists, ReviewbenchError
from ..review.experiment import TEMPLATE, load_experiment
from ..store.lock import run_lock
from ..store.runs import RUNS_DB, RunRow, RunStore
from ._group import HelpGroup
from ._output import console, count_table, print_json, progress

if TYPE_CHECKING:
    from ..engine import OnUpdate, RunSummary

__all__ = ["experiment_group", "export_command", "register_command", "run_command", "run_loaded", "runs_command"]


#: Characters of an error shown in the progress line and under ``runs`` (the store keeps it whole).
ERROR_SHOWN = 160


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ERROR_SHOWN else text[: ERROR_SHOWN - 1] + "…"


def show_runs(label: str, execute: Callable[[OnUpdate], RunSummary], out: Path, as_json: bool,
              state_name: Callable[[str], str] = str) -> None:  # fmt: skip
    """Run ``execute(on_update)`` under a progress bar of run states, then print its summary
    (review runs and fix-task runs share the runner, hence this output; ``state_name`` says a
    run state in the caller's words: a fix task's ``patched`` for ``completed_findings``)."""
    with progress(label) as update:

        def on_update(counts: Counter, done: int, total: int, last_error: str | None = None) -> None:
            states = " ".join(f"{state_name(k)}={v}" for k, v in sorted(counts.items()))
            update(done, total, states + (f"; last error {_clip(last_error)}" if last_error else ""))

        summary = execute(on_update)
    by_state = {state_name(k): n for k, n in summary.by_state.items()}
    if as_json:
        print_json({"out": str(out), "planned": summary.planned, "already_done": summary.already_done,
                    "requests": summary.requests, "by_state": by_state,
                    "unanswered_conditions": summary.unanswered, "stopped_conditions": summary.stopped,
                    "not_started": summary.not_started})  # fmt: skip
    else:
        console.print(f"{summary.planned} runs planned, {summary.already_done} already done, "
                      f"{summary.requests} requests sent; results in {out}", markup=False)  # fmt: skip
        console.print(count_table("state", "runs", by_state, sum(by_state.values())))
    if summary.stopped:  # the cause in one line; the runs not started are resumed by running again
        name, cause = next(iter(sorted(summary.stopped.items())))
        more = f" (and {len(summary.stopped) - 1} more conditions)" if len(summary.stopped) > 1 else ""
        left = summary.not_started.get(name, 0)
        raise EndpointUnreachable(f"{cause}{more}; {left} of its runs not started: start the endpoint and run "
                                  "again to resume them (--retry-failed also redoes the failed ones)")  # fmt: skip
    if summary.unanswered:  # results are kept; the exit status tells scripts nothing was learnt
        name, error = next(iter(sorted(summary.unanswered.items())))
        more = f" (and {len(summary.unanswered) - 1} more conditions)" if len(summary.unanswered) > 1 else ""
        raise ReviewbenchError(f"every run of condition {name} failed or timed out{more}; first error: {error}")


@click.command("run")
@click.argument("experiment", type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="Run directory (created; an existing one of the same experiment is resumed).")
@click.option("--retry-failed", is_flag=True, help="Run again the runs that failed or timed out, as far as the "
              "experiment's retry rule (max_retries, retry_on) allows; earlier attempts are kept and stay "
              "missing reviews in completion.")
@click.option("--new-version", is_flag=True,
              help="If registered inputs changed, register them as a new benchmark version.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--no-endpoint-check", "no_check", is_flag=True,
              help="Do not ask each HTTP endpoint once before planning (an endpoint without a model list that "
                   "answers it with 401); an unreachable one then fails its runs until its condition is stopped.")
def run_command(experiment: Path, out: Path, retry_failed: bool, new_version: bool, as_json: bool,
                no_check: bool) -> None:  # fmt: skip
    """Run every condition of EXPERIMENT (a TOML file) on its corpus.

    Each run (case x condition x repetition) ends in exactly one state, recorded with its
    provenance in OUT/runs.sqlite. Running again resumes: finished runs are kept, and a
    cached response is never requested twice.

    Before planning, each HTTP endpoint is asked once: one refusing connections, not found,
    or rejecting the key stops here (exit 1, nothing recorded). During the runs, a condition
    whose attempts fail to connect stop_after_connection_failures times in a row (default 5)
    is stopped, with the cause in one line (exit 1); running again resumes it.
    """
    run_loaded(load_experiment(experiment), out, retry_failed, new_version, as_json, check_endpoints=not no_check)


def run_loaded(loaded, out: Path, retry_failed: bool = False, new_version: bool = False,
               as_json: bool = False, *, check_endpoints: bool = True) -> None:  # fmt: skip
    """Run a loaded experiment into ``out`` as ``run`` does (shared with ``rerun``)."""
    from ..review.runner import (  # the runner pulls in every reviewer kind
        check_conditions,
        check_data_controls,
        check_reachable,
        run_experiment,
    )
    from ..score.registration import check_registration

    # Configuration mistakes before anything is made on disk (the lock makes OUT).
    check_conditions(loaded.path, [(c.name, c.reviewer, c.context) for c in loaded.config.condition])
    if check_endpoints:
        check_reachable(loaded)  # nothing planned or made on disk for a server that is not there
    check_data_controls(loaded)  # after: asking an endpoint once sends it no code
    with run_lock(out):  # one writer per run directory
        # Refuses an edited registration or changed inputs (the first run records its digest).
        check_registration(loaded, out, new_version=new_version)
        show_runs("reviewing", lambda on_update: run_experiment(loaded, out, retry_failed=retry_failed,
                                                                on_update=on_update, check_endpoints=False),
                  out, as_json)  # fmt: skip


def _store(rundir: Path) -> RunStore:
    return RunStore(rundir / RUNS_DB)


_LISTED = ("run_id", "case_id", "condition", "repetition", "variant", "state", "model_requested",
           "model_returned", "tokens_in", "tokens_out", "latency_s")  # fmt: skip


_ATTEMPTS_HELP = ("Also the earlier attempts that 'run --retry-failed' (or a resume after Ctrl-C) replaced, "
                  "marked retired: each is a missing review in completion.")


def _attempts(store: RunStore, with_history: bool) -> list[tuple[RunRow, bool]]:
    """The runs (and, when asked, the retired attempts) as (row, retired), attempts in order."""
    rows = [(r, False) for r in store.runs()]
    if with_history:
        rows += [(r, True) for r in store.history()]
        rows.sort(key=lambda item: (item[0].case_id, item[0].condition, item[0].variant, item[0].repetition,
                                    item[0].try_no))  # fmt: skip
    return rows


@click.command("runs")
@click.argument("rundir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print as JSON (a list of runs).")
@click.option("--attempts", "with_history", is_flag=True, help=_ATTEMPTS_HELP)
def runs_command(rundir: Path, as_json: bool, with_history: bool) -> None:
    """List the runs of RUNDIR with their state and finding count, then each condition's last
    error (JSON: every run's error; JSON and --attempts: try number and failure code too)."""
    store = _store(rundir)
    try:
        rows = [{**{k: getattr(r, k) for k in _LISTED}, "try_no": r.try_no,
                 "failure_code": None if r.failure_code is None else str(r.failure_code),
                 **({"retired": retired} if with_history else {}), "findings": len(r.findings),
                 "error": r.error}
                for r, retired in _attempts(store, with_history)]  # fmt: skip
        last = store.last_errors()
        kept = 0 if with_history else len(store.history())
    finally:
        store.close()
    if as_json:
        print_json(rows)
        return
    # The table keeps its width (names must stay whole on a terminal); --attempts adds its columns.
    shown = (*_LISTED, *(("try_no", "failure_code", "retired") if with_history else ()), "findings")
    rows = [{k: row[k] for k in shown} for row in rows]
    table = Table(show_edge=False)
    for column in shown:
        table.add_column(column)
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row.values()))  # the console prints no markup
    console.print(table)
    for name, error in last.items():  # below the table: its columns keep their width
        console.print(f"last error of {name} ({error.state.value}, run {error.run_id}, case {error.case_id}): "
                      f"{_clip(error.error)}", markup=False)  # fmt: skip
    if kept:
        console.print(f"{kept} earlier attempt(s) retired by a retry or a resume are kept, not listed here "
                      "(runs --attempts lists them; each that gave no review is a missing review in completion)",
                      markup=False)  # fmt: skip


@click.command("export")
@click.argument("rundir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "inspect", "hf"]), default=None,
              help="Output format  [default: jsonl]")
@click.option("--out", "out", type=click.Path(path_type=Path),
              help="File to write (default: stdout); for inspect and hf, the directory to write (required).")
@click.option("--attempts", "with_history", is_flag=True, help=_ATTEMPTS_HELP)
@click.option("--manifest", is_flag=True, help="Write the artefact manifest instead: one JSON document with the "
              "SHA-256 of every diff, validation log and raw review, and of the run directory's and corpus's "
              "record files ('reviewbench schema manifest').")
def export_command(rundir: Path, fmt: str | None, out: Path | None, with_history: bool, manifest: bool) -> None:
    """Export the runs of RUNDIR as JSONL (full records, plus task/model/repeat/text columns)
    or CSV (one row per run); as inspect_ai evaluation logs (inspect: one log per condition in
    OUT, named as inspect names its logs, one sample per run with its scores; 'inspect view
    --log-dir OUT' lists and opens them); or the
    corpus's public side as a Hugging Face datasets directory (hf: OUT/data/test.jsonl and a
    dataset card; no gold, no mirrors or rename variants; datasets.load_dataset(OUT) reads it).
    With --manifest, the artefact manifest: publish it, and anyone can check the files."""
    if manifest:
        if fmt is not None or with_history:
            from ..errors import UsageError

            raise UsageError("--manifest writes one JSON document: give it without --format or --attempts")
        _export_manifest(rundir, out)
        return
    fmt = fmt or "jsonl"
    if fmt in ("inspect", "hf"):
        _export_elsewhere(rundir, fmt, out)
        return
    store = _store(rundir)
    try:
        attempts = _attempts(store, with_history)
    finally:
        store.close()
    runs = [run for run, _ in attempts]
    retired = {id(run) for run, old in attempts if old}
    buffer = io.StringIO()
    if fmt == "jsonl":
        for run in runs:
            record = run.as_dict()
            record.update(task=run.case_id, model=run.model_requested, repeat=run.repetition,
                          text=run.raw_output or "")  # fmt: skip
            if with_history:
                record["retired"] = id(run) in retired
            buffer.write(json.dumps(record, ensure_ascii=False) + "\n")
    else:
        from ..report.csv import defuse  # the report's formula guard; scoring loads only here

        writer = csv.writer(buffer)
        columns = [*_LISTED, "attempts", "cached", "started_at", "ended_at", "prompt_sha256",
                   "gold_sha256", "error", "findings", "try_no", "failure_code",
                   *(("retired",) if with_history else ())]  # fmt: skip
        writer.writerow(columns)
        for run in runs:
            row = run.as_dict()
            row["findings"] = len(run.findings)
            row.setdefault("failure_code", None)
            row["retired"] = id(run) in retired
            # Text gets the report's formula guard; other values are written as before.
            writer.writerow([defuse(v) if isinstance(v := row[c], str) else "" if v is None else v for c in columns])
    if out is None:
        sys.stdout.write(buffer.getvalue())
    else:
        try:
            out.write_text(buffer.getvalue(), encoding="utf-8")
        except OSError as exc:  # a failed write names no file: say which (a full disk, say)
            if exc.filename is None:
                exc.filename = str(out)
            raise


def _export_manifest(rundir: Path, out: Path | None) -> None:
    """``export --manifest``: the SHA-256 of every artefact, to stdout or ``out``."""
    from ..report.manifest import artefact_manifest

    text = json.dumps(artefact_manifest(rundir).model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(out)
        raise
    console.print(f"wrote {out}", markup=False)


def _export_elsewhere(rundir: Path, fmt: str, out: Path | None) -> None:
    """The ecosystem formats: a directory each, written from the scored run directory."""
    from datetime import UTC, datetime

    from ..errors import UsageError
    from ..store.corpus import read_corpus

    if out is None:
        raise UsageError(f"--format {fmt} writes a directory: give it with --out")
    store = _store(rundir)
    try:
        runs = list(store.runs())
        corpus_path = store.get_meta("corpus_path")
    finally:
        store.close()
    if not corpus_path:
        raise UsageError(f"{rundir} records no corpus; was it written by 'reviewbench run'?")
    corpus = read_corpus(Path(corpus_path))
    if fmt == "hf":
        from ..report.hf_dataset import public_cases, write_hf_dataset

        write_hf_dataset(corpus, out)
        console.print(f"wrote {out}: {len(public_cases(corpus))} of {len(corpus.cases)} cases, public side only "
                      "(no gold, no mirrors or rename variants)")  # fmt: skip
        return
    from ..report.inspect_log import inspect_logs, write_inspect_logs
    from ..score import score_run

    result = score_run(rundir)
    created = datetime.now(UTC).isoformat(timespec="seconds")
    written = write_inspect_logs(inspect_logs(result, runs, corpus, created), out)
    console.print(f"wrote {len(written)} inspect_ai log(s) to {out}: " + ", ".join(p.name for p in written))


@click.group("experiment", cls=HelpGroup)
def experiment_group() -> None:
    """Experiment files: write a commented template."""


@experiment_group.command("init")
@click.argument("path", type=click.Path(path_type=Path), default=Path("experiment.toml"))
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def experiment_init(path: Path, force: bool) -> None:
    """Write a commented experiment template to PATH (default experiment.toml)."""
    if path.exists() and not force:
        raise OutputExists(f"{path} exists (use --force to overwrite it)")
    path.write_text(TEMPLATE, encoding="utf-8")
    console.print(f"wrote {path}", markup=False)


@click.command("register")
@click.argument("experiment", type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="The run directory the experiment will run into (registration.json goes there).")
@click.option("--gates", type=click.Path(path_type=Path), help="Gates TOML (default: the built-in table).")
@click.option("--bootstrap-seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="Seed scoring will use (0 or more).")
@click.option("--bootstrap", "resamples", default=10_000, show_default=True, type=click.IntRange(min=100),
              help="Bootstrap resamples scoring will use.")
@click.option("--tolerance", default=3, show_default=True, type=click.IntRange(min=0),
              help="Lines either side of a gold range that count as located.")
@click.option("--include-unvalidated", is_flag=True, help="Score unvalidated cases too (frozen with the rest).")
@click.option("--owner", help="Who owns the experiment (recorded).")
@click.option("--approver", help="Who approved the registration (recorded).")
@click.option("--late", is_flag=True,
              help="Register a run directory that already holds runs, recorded as NOT pre-registered.")
@click.option("--new-version", is_flag=True, help="Register a new version over an existing registration.")
def register_command(experiment: Path, out: Path, gates: Path | None, bootstrap_seed: int, resamples: int,
                     tolerance: int, include_unvalidated: bool, owner: str | None, approver: str | None,
                     late: bool, new_version: bool) -> None:  # fmt: skip
    """Freeze EXPERIMENT before any run: the SHA-256 of the experiment, prompts, guidance,
    gates and corpus gold, the seeds and the analysis rules (tolerance, eligibility,
    bootstrap count). 'run' and 'score' then refuse changed inputs. A run directory that
    already holds runs is refused unless --late."""
    from ..score.registration import register  # reads the gates: pulls in the scoring stack

    rules = {"tolerance": tolerance, "bootstrap": resamples, "include_unvalidated": include_unvalidated}
    data = register(load_experiment(experiment), out, gates, bootstrap_seed, new_version=new_version, rules=rules,
                    late=late, owner=owner, approver=approver)  # fmt: skip
    latest = data["versions"][-1]
    when = "" if latest["pre_registered"] else " AFTER runs (not pre-registered)"
    console.print(f"registered version {latest['version']}{when} in {out / 'registration.json'} "
                  f"(gold {latest['frozen']['corpus']['gold_sha256'][:12]}, gates "
                  f"{latest['frozen']['gates']['sha256'][:12]})", markup=False)  # fmt: skip
    digest = hashlib.sha256((out / "registration.json").read_bytes()).hexdigest()
    console.print(f"registration.json SHA-256 {digest} (publish it: the first run records it, and run, score "
                  "and report refuse the file once it differs)", markup=False)  # fmt: skip
