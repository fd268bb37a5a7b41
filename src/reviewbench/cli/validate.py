"""``reviewbench validate``: the validity gate."""

from __future__ import annotations

from pathlib import Path

import click

from ..records import Validation
from ..validate import resolve_config, validate_corpus
from ._output import console, count_table, err_console, print_json, progress
from ._testrun import test_run_options
from ._validation import environment_json, print_environment, print_reasons

__all__ = ["validate_command"]


@click.command("validate")
@click.argument("corpus", type=click.Path(path_type=Path))
@test_run_options(help={
    "--test-cmd": "Shell command running the tests (default: PYTHON -m pytest, when the repository has pytest "
                  "configuration or a tests/ folder; PYTHON is your active environment ($VIRTUAL_ENV, else "
                  "python3 on PATH) or the --setup environment; a src layout gets PYTHONPATH=src. A package.json "
                  "project: its test script, without pre/post hooks or lint steps, node_modules/.bin on PATH).",
    "--setup": "Build one isolated test environment for the corpus (cached under CORPUS/envs/): a fresh venv, then "
               "this command inside it, e.g. \"pip install -e '.[test]'\"; 'auto': the project editable with its "
               "test extras or requirements, pytest and the plugins its pytest config names. Test runs "
               "happen inside it too (its bin first on PATH, so a --test-cmd's python is its own).",
    "--setup-cmd": "Run once per scratch tree before tests, e.g. to build extensions (network allowed).",
    "--timeout": "Seconds per test run [default: 600]. Where several cases share a base, runs there stop sooner: "
                 "after 5x the suite's passing time (at least 5 s; warm runs: 5x its CPU time, at least 1 CPU s).",
    "--memory-mb": "Memory limit per test run [default: 4096]: address space (for a Node test runner, writable "
                   "memory: WebAssembly reserves more address space than it uses).",
    "--executor": "Where to run [default: local].",
})
@click.option("--case", "cases", multiple=True, metavar="ID", help="Validate only this case (repeatable), again "
              "if it has a status; the others keep theirs.")
@click.option("--force", is_flag=True, help="Re-validate cases that already have a status.")
@click.option("--keep-going", is_flag=True, help="Validate every case even when the first ones (5 "
              "cases, over up to 5 bases) all fail with the same error line, or all with missing modules.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def validate_command(corpus: Path, test_cmd, setup, setup_cmd, python, jobs, timeout, reruns, network, memory_mb,
                     max_file_mb, executor, ray_address, cases: tuple[str, ...], force: bool, keep_going: bool,
                     as_json: bool) -> None:  # fmt: skip
    """Prove each case of CORPUS with the repository's own tests.

    In scratch clones (never your checkout), the selected tests must pass on the case's
    base and fail, on every rerun, once the patch is applied: the fix's own tests first,
    the whole suite only if they do not observe the bug. Tests run without network, with
    time, memory and file-size limits, on a read-only view of the host (only their scratch tree,
    HOME and TMPDIR writable) and without secret-looking variables (*_KEY, *_TOKEN, ...;
    [validate] env lists exceptions). Results go to gold.jsonl; logs to CORPUS/logs/.
    Settings may also come from [validate] in the repository's reviewbench.toml.
    """
    config = resolve_config(corpus, {
        "test_cmd": test_cmd, "setup_cmd": setup_cmd, "jobs": jobs, "timeout": timeout,
        "reruns": reruns, "network": network, "memory_mb": memory_mb, "max_file_mb": max_file_mb, "executor": executor,
        "ray_address": ray_address, "force": force or None, "setup": setup, "keep_going": keep_going or None,
        "python": python, "cases": cases or None,
    })  # fmt: skip
    with progress("validating") as update:

        def on_case(case_id: str, validation: Validation, done: int, total: int) -> None:
            update(done, total, f"{case_id}: {validation.status}")

        summary = validate_corpus(corpus, config, on_case=on_case)
    total = sum(summary.by_status.values())
    if as_json:
        print_json({"corpus": str(corpus), "test_cmd": summary.test_cmd, "attempted": summary.attempted,
                    "skipped": summary.skipped, "by_status": summary.by_status,
                    "reasons": {k: [{"line": line, "cases": n} for line, n in v] for k, v in summary.reasons.items()},
                    "environment": environment_json(summary.environment),
                    "environment_built": summary.environment_built, "notes": list(summary.notes)})  # fmt: skip
        return
    for note in summary.notes:
        err_console.print(f"note: {note}", markup=False)
    console.print(f"Validated {summary.attempted} cases ({summary.skipped} already done) with: {summary.test_cmd}",
                  markup=False)  # fmt: skip
    print_environment(summary.environment, summary.environment_built)
    console.print(count_table("status", "cases", summary.by_status, total))
    print_reasons(summary.reasons, summary.environment.setup if summary.environment else config.setup,
                  summary.environment.pytest if summary.environment else None)  # fmt: skip
