"""Entry point of the validity gate: run every pending case, record, never lose a result.

Each finished case is appended to a journal (``CORPUS/validation.journal.jsonl``, fsync'd)
before anything else; ``gold.jsonl`` and ``corpus.json`` are rewritten atomically at the
end. An interrupted run keeps its journal, and the next run resumes from it.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ValidateConfig, resolve_test_settings
from ..errors import CorpusError, UsageError
from ..git.repo import missing_commits, open_repository
from ..records import Case, GoldRecord, Stratum, TestEnvironment, Validation
from ..store.corpus import GOLD_FILE, META_FILE, dump_jsonl, patch_file, read_corpus, sha256_file
from ..store.journal import append_line, read_journal, write_atomic
from .environment import (
    AUTO,
    ENV_DIR,
    activation,
    build_environment,
    chosen_python,
    describe_interpreter,
    interpreter_of,
    locale_of_runs,
    require_supported,
)
from .executors import run_jobs
from .node import node_notes
from .npm import NODE_MODULES, build_node_modules
from .reasons import FAIL_FAST_CASES, FailFast, group_reasons
from .testcmd import TestCommand, detect_test_command, is_node_project
from .worker import CaseJob

__all__ = ["JOURNAL_FILE", "LOG_DIR", "ValidateSummary", "resolve_config", "validate_corpus"]

JOURNAL_FILE = "validation.journal.jsonl"
LOG_DIR = "logs"


@dataclass(frozen=True)
class ValidateSummary:
    """What a validation run did."""

    corpus: Path
    test_cmd: str
    attempted: int
    skipped: int
    by_status: dict[str, int]
    reasons: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    """Per status other than observed: the commonest reason lines and their counts."""
    environment: TestEnvironment | None = None
    """The Python environment the tests ran in, when known."""
    environment_built: bool = False
    """The environment was built (``--setup``) by this run, not reused."""
    notes: tuple[str, ...] = ()
    """Things the user should hear (e.g. uv was unavailable)."""


def _patch(corpus_path: Path, case: Case) -> Path:
    """The case's patch file; a missing one is left for the case's log to report, anything
    reached through a link or not a regular file is refused (a hostile corpus)."""
    try:
        return patch_file(corpus_path, case)
    except CorpusError:
        path = Path(os.path.abspath(corpus_path)) / case.patch
        if os.path.lexists(path) or not path.parent.is_dir():
            raise
        return path


def resolve_config(corpus: Path, overrides: dict) -> ValidateConfig:
    """Settings for a corpus: see :func:`~reviewbench.config.resolve_test_settings`."""
    return resolve_test_settings(Path(read_corpus(corpus).meta.repo.path), overrides)


def _check_bases(repo: Path, bases: set[str]) -> None:
    ordered = sorted(bases)
    missing = [sha for sha, gone in zip(ordered, missing_commits(repo, ordered), strict=True) if gone]
    if missing:
        raise CorpusError(
            f"{repo} lacks commit {missing[0]} (and {len(missing) - 1} more) named by the "
            "corpus: the repository was moved or rewritten since mining; re-mine it"
        )


def corpus_file(corpus: Path, name: str, case_id: str) -> Path:
    """``name`` inside ``corpus`` (a corpus is untrusted: no ``..`` or symlink out of it).

    Raises:
        CorpusError: the name leads out of the corpus or the file is missing.
    """
    root = corpus.resolve()
    path = (root / name).resolve()
    if root not in path.parents or not path.is_file():
        raise CorpusError(f"case {case_id}: {name} is missing or lies outside the corpus {corpus}")
    return path


def case_overlays(corpus: Path, case: Case, gold: GoldRecord) -> tuple[Path, ...]:
    """Patches validation applies to a case's base before anything runs: a rename
    variant's base patch, then the fix's test files of a natural case."""
    names = [n for n in (case.base_patch, gold.provenance.test_patch) if n]
    return tuple(corpus_file(corpus, name, case.case_id) for name in names)


def _journal_entry(raw: bytes) -> tuple[str, Validation]:
    entry = json.loads(raw)
    return entry["case_id"], Validation.model_validate(entry["validation"])


def _elsewhere(validation: Validation | None, environment: TestEnvironment | None) -> bool:
    """A recorded status that came from another test environment than this run's."""
    recorded = validation.environment if validation is not None else None
    return recorded is not None and environment is not None and recorded != environment


def validate_corpus(
    corpus_path: Path,
    config: ValidateConfig,
    *,
    on_case: Callable[[str, Validation, int, int], None] | None = None,
) -> ValidateSummary:
    """Validate every pending case of a corpus (all of them with ``config.force``).

    Raises:
        CorpusError: the corpus is damaged or its repository lacks a base commit.
        UsageError: no test command can be found, or network cannot be denied.
        PrerequisiteError: the tests' interpreter is older than Python 3.7.
    """
    corpus = read_corpus(corpus_path)
    repo = open_repository(Path(corpus.meta.repo.path))
    notes: list[str] = []
    environment: TestEnvironment | None = None
    built = False
    python = None
    chosen = chosen_python(config.python) if config.python else None
    project: Path | None = None
    node_modules: Path | None = None
    if config.setup == AUTO and is_node_project(repo.path):
        # A Node project: its dependencies, once per lockfile, shared by every scratch tree.
        _check_bases(repo.path, {corpus.meta.repo.head})
        installed = build_node_modules(corpus_path / ENV_DIR, repo.path, corpus.meta.repo.head)
        node_modules, built = installed.path, installed.built
        notes.append(installed.note)
    elif config.setup:
        _check_bases(repo.path, {corpus.meta.repo.head})
        env = build_environment(corpus_path / ENV_DIR, repo.path, corpus.meta.repo.head, config.setup, base=chosen)
        python, environment, built, project = env.python, env.record, env.built, env.project
        # Every run happens inside it; the user's own entries still win.
        config = config.model_copy(update={"env": (*activation(python), *config.env)})
        notes += [env.note] if env.note else []
        if project is not None and (project / NODE_MODULES).is_dir():
            node_modules = project / NODE_MODULES  # what a custom setup installed, shared likewise
    command = TestCommand(config.test_cmd or detect_test_command(repo.path, python or chosen))
    if chosen and config.test_cmd and not config.setup:
        notes.append(f"--python {config.python} is unused: --test-cmd says how the tests run, and there is no --setup")
    if not config.test_cmd and command.runner is not None:
        notes += list(node_notes(repo.path))  # what the package.json test script ran without
    if environment is None or config.test_cmd:
        interpreter = interpreter_of(command.command, repo.path, config.env_set.get("PATH"))
        if python is None or interpreter is None or os.path.abspath(interpreter) != os.path.abspath(python):
            # A --test-cmd naming another interpreter (or none that can be told) is not --setup's.
            environment = describe_interpreter(interpreter) if interpreter else None
    require_supported(environment)
    if environment is not None:
        environment = environment.model_copy(update={"locale": locale_of_runs(config.env_set)})
    journal_path = corpus_path / JOURNAL_FILE
    if config.force:
        journal_path.unlink(missing_ok=True)
    # A result from another environment (a resumed run, now with --setup) is not reused.
    journal = {
        case_id: v for case_id, v in read_journal(journal_path, _journal_entry)
        if v.environment is None or environment is None or v.environment == environment
    }  # fmt: skip
    gold = {g.case_id: g for g in corpus.gold}
    # Nor is a status the gold holds from another environment: it says what those tests did there.
    elsewhere = {c.case_id for c in corpus.cases if _elsewhere(gold[c.case_id].validation, environment)}
    if elsewhere and not config.force and not config.cases:
        notes.append(f"{len(elsewhere)} of {len(corpus.cases)} cases were validated in another test environment: "
                     "validated again in this one")  # fmt: skip
    if config.cases:
        wanted = set(config.cases)
        unknown = sorted(wanted - set(gold))
        if unknown:
            more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
            raise UsageError(f"no case {unknown[0]} in {corpus_path}{more}")
        pending = [c for c in corpus.cases if c.case_id in wanted]  # again, whatever they hold
    else:
        pending = [
            c for c in corpus.cases
            if c.case_id not in journal and (config.force or gold[c.case_id].validation is None or c.case_id in elsewhere)
        ]  # fmt: skip
    _check_bases(repo.path, {c.base for c in pending})
    logs = corpus_path / LOG_DIR
    logs.mkdir(exist_ok=True)
    overlays = {c.case_id: case_overlays(corpus_path, c, gold[c.case_id]) for c in pending}
    bases = Counter((c.base, overlays[c.case_id]) for c in pending)
    # A mirror's patched tree is its base commit exactly (its patch undoes its base patch):
    # it counts as one more case there, so that commit's suite runs once and serves both.
    patched_bases = {c.case_id: c.base for c in pending if c.base_patch and gold[c.case_id].stratum == Stratum.MIRROR}
    bases.update((base, ()) for base in patched_bases.values())
    jobs = [
        CaseJob(
            case_id=c.case_id,
            base=c.base,
            patch=_patch(corpus_path, c),
            test_paths=tuple(gold[c.case_id].provenance.test_paths),
            log=(logs / f"{c.case_id}.log").resolve(),
            shared_base=bases[(c.base, overlays[c.case_id])] > 1,
            overlays=overlays[c.case_id],
            paths=tuple(c.paths),
            products=project,
            node_modules=node_modules,
            bounds_base=c.base if c.base_patch else None,
            patched_base=patched_bases.get(c.case_id),
        )
        for c in pending
    ]
    # Cases without tests of their own need the whole suite: start those first, so that
    # long runs do not bunch up at the end while other workers sit idle. Rename variants
    # come after the other cases of their kind: by then their original base's suite time,
    # which bounds their runs, is usually known. Mirrors come last: by then the suite at the
    # commit their patched tree is has usually run for the defect case, and decides them.
    jobs.sort(key=lambda job: (job.patched_base is not None, bool(job.test_paths), job.bounds_base is not None))
    # ... except one case of each of the first few bases, which go first of all: a wrong
    # environment shows as the same failure on every base, and fail-fast (reasons.py)
    # needs several bases to tell that from one broken commit.
    scouts: dict[str, int] = {}
    for index, job in enumerate(jobs):
        if len(scouts) < FAIL_FAST_CASES:
            scouts.setdefault(job.base, index)
    first = set(scouts.values())
    jobs = [jobs[i] for i in sorted(first)] + [job for i, job in enumerate(jobs) if i not in first]
    lock = threading.Lock()
    finished = 0
    fail_fast = FailFast((j.base for j in jobs), len(jobs), enabled=not config.keep_going, setup=config.setup,
                         pytest=environment.pytest if environment else None)  # fmt: skip

    def record(job: CaseJob, validation: Validation) -> None:
        nonlocal finished
        validation = validation.model_copy(update={"environment": environment})
        line = json.dumps(
            {"case_id": job.case_id, "validation": validation.model_dump(mode="json")}
        )
        with lock:
            append_line(journal_path, line)
            journal[job.case_id] = validation
            finished += 1
            if on_case:
                on_case(job.case_id, validation, finished, len(jobs))
            fail_fast.add(job.base, validation)

    if jobs:
        run_jobs(repo.path, command, config, jobs, record)
    merged = [
        g.model_copy(update={"validation": journal[g.case_id]}) if g.case_id in journal else g
        for g in corpus.gold
    ]
    by_status = Counter(g.validation.status.value for g in merged if g.validation)
    write_atomic(corpus_path / GOLD_FILE, dump_jsonl(merged))
    counts = corpus.meta.counts.model_copy(
        update={"by_validation": dict(sorted(by_status.items()))}
    )
    meta = corpus.meta.model_copy(update={
        "counts": counts, "gold_sha256": sha256_file(corpus_path / GOLD_FILE),
        "environment": environment or corpus.meta.environment,
    })  # fmt: skip
    write_atomic(corpus_path / META_FILE, meta.model_dump_json(indent=2).encode() + b"\n")
    journal_path.unlink(missing_ok=True)
    return ValidateSummary(
        corpus=corpus_path,
        test_cmd=command.command,
        attempted=len(jobs),
        skipped=len(corpus.cases) - len(jobs),
        by_status=dict(sorted(by_status.items())),
        reasons=group_reasons(g.validation for g in merged if g.validation),
        environment=environment,
        environment_built=built,
        notes=tuple(notes),
    )
