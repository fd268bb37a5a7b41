"""The review runner (SPEC 7): every planned run, exactly once, with full provenance.

Runs are planned as case × condition × repetition (rename variants included when asked),
shuffled by the experiment's seed so conditions interleave in time, and executed
concurrently under each condition's concurrency and rate limit. Each run ends in exactly
one terminal state and is written, with its findings and the response that produced them,
in one transaction. A response cache keyed on (packet, condition, repetition) means a
re-run sends no request for a run whose response is already known.

The engine (:class:`_Runner`) knows nothing of reviews: what a run asks and how its answer
is read is a :class:`Job`. :class:`ReviewJob` runs reviewers on a corpus; the fix-task job
(``review/solve.py``) runs solvers on tasks with the same plan, limits, retries, states,
cache and store.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from .._version import __version__
from ..errors import UsageError
from ..records import Case, Finding, RunState
from ..reviewers import ReviewerError, make_reviewer
from ..reviewers.base import RUN_SCOPE, RunScope
from ..sandbox import protect
from ..store.corpus import Corpus, read_corpus
from ..store.runs import RUNS_DB, CachedReply, RunRow, RunStore
from .experiment import ConditionConfig, Experiment
from .packet import PacketBuilder
from .parse import parse_review
from .prompt import Prompt, load_prompt, load_text

__all__ = ["Job", "Outcome", "PlannedRun", "ReviewJob", "RunSummary", "execute_plan", "plan_runs",
           "run_experiment"]  # fmt: skip

ORIGINAL = "original"
RENAME = "rename"
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 60.0


@dataclass(frozen=True)
class PlannedRun:
    run_id: str
    item_id: str
    """The reviewed case's id, or the task's instance id (the ``case_id`` column)."""
    case: Any
    """The :class:`~reviewbench.records.Case` (review runs) or task being run."""
    condition: Any
    """The condition's config: :class:`ConditionConfig` or a fix-task condition."""
    repetition: int
    variant: str


@dataclass(frozen=True)
class RunSummary:
    out: Path
    planned: int
    already_done: int
    by_state: dict[str, int]
    requests: int
    """Requests sent to reviewers in this invocation (cache hits send none)."""


def _run_id(case_id: str, condition: str, repetition: int) -> str:
    return hashlib.sha256(f"{case_id}\0{condition}\0{repetition}".encode()).hexdigest()[:16]


def plan_runs(experiment: Experiment, corpus: Corpus) -> list[PlannedRun]:
    """Every run of the experiment, in the seeded, interleaved order."""
    variant_of = {g.case_id: g.variant_of for g in corpus.gold}
    runs = [
        PlannedRun(
            run_id=_run_id(case.case_id, condition.name, repetition),
            item_id=case.case_id,
            case=case,
            condition=condition,
            repetition=repetition,
            variant=RENAME if variant_of.get(case.case_id) else ORIGINAL,
        )
        for case in corpus.cases
        if experiment.config.rename or not variant_of.get(case.case_id)
        for condition in experiment.config.condition
        for repetition in range(experiment.config.repeats)
    ]
    random.Random(experiment.config.seed).shuffle(runs)
    return runs


class _RateLimiter:
    """Spaces request starts at least 60/rate seconds apart (None: no limit)."""

    def __init__(self, per_minute: float | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self.next_at = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            delay = self.next_at - now
            self.next_at = max(now, self.next_at) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


@dataclass
class Condition:
    """One condition as the engine runs it: its config, prompt and adapter, and its limits."""

    config: Any
    """:class:`ConditionConfig`, or a fix-task condition config."""
    agent_config: Any
    """The adapter's config (reviewer or solver): recorded as the run's ``params``."""
    prompt: Prompt
    guidance: str | None
    guidance_sha256: str | None
    agent: Any
    """The adapter that answers (a reviewer or a solver); closed with ``aclose()``."""
    semaphore: asyncio.Semaphore = field(init=False)
    limiter: _RateLimiter = field(init=False)

    def __post_init__(self) -> None:
        self.semaphore = asyncio.Semaphore(self.config.concurrency)
        self.limiter = _RateLimiter(self.config.rate_per_minute)

    @property
    def params(self) -> dict:
        return self.agent_config.model_dump(mode="json")


@dataclass(frozen=True)
class Outcome:
    """How a reply ends its run."""

    state: RunState
    findings: list[Finding] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)
    patch: str | None = None


class Job(Protocol):
    """One kind of run: how conditions are set up, what is asked, how answers are read."""

    gold_sha256: str
    """Recorded on every run: the hash of the labels the runs will be scored against."""

    def condition(self, config: Any) -> Condition:
        """Load the prompt and build the adapter of one condition (inside the event loop)."""
        ...

    async def packet(self, planned: PlannedRun, condition: Condition) -> tuple[object, str]:
        """The request of (item, condition) and its digest (the cache key but the repetition)."""
        ...

    async def attempt(self, planned: PlannedRun, condition: Condition, packet: object) -> CachedReply:
        """Ask once, bounded by the condition's ``timeout_s``.

        Raises:
            ReviewerError: no answer appeared (``transient`` ones are retried).
            TimeoutError: none within ``timeout_s``.
        """
        ...

    def outcome(self, planned: PlannedRun, reply: CachedReply) -> Outcome:
        """The terminal state (and findings or patch) of an answer."""
        ...

    def close(self) -> None:
        """Release what the job built (exported trees)."""
        ...


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _packet_digest(packet_json: str, condition: Condition) -> str:
    """What a response depends on, but the repetition: the packet and the reviewer's settings."""
    fingerprint = json.dumps({"reviewer": condition.params, "context": condition.config.context},
                             sort_keys=True)  # fmt: skip
    return hashlib.sha256(f"{packet_json}\0{fingerprint}".encode()).hexdigest()


def _cache_key(digest: str, repetition: int) -> str:
    """Content address of one response; the repetition keeps repeats independent requests."""
    return hashlib.sha256(f"{digest}\0{repetition}".encode()).hexdigest()


def _outcome(reply: CachedReply, paths: list[str]) -> tuple[RunState, list, list[str]]:
    """Terminal state, findings and unparsed lines of a reply."""
    if reply.findings is not None:
        findings, unparsed, no_issues = list(reply.findings), [], True
    else:
        parsed = parse_review(reply.text, paths)
        findings, unparsed, no_issues = list(parsed.findings), list(parsed.unparsed), parsed.no_issues
    if findings:
        return RunState.COMPLETED_FINDINGS, findings, unparsed
    if no_issues:
        return RunState.COMPLETED_NO_FINDINGS, findings, unparsed
    return RunState.INVALID, findings, unparsed  # no finding and no NO_ISSUES: not a review


class ReviewJob:
    """Review runs (SPEC 6-7): reviewers on the cases of a corpus."""

    def __init__(self, experiment: Experiment, corpus: Corpus) -> None:
        self.experiment = experiment
        self.corpus = corpus
        self.gold_sha256 = corpus.meta.gold_sha256
        self.builder = PacketBuilder(corpus.path, Path(corpus.meta.repo.path))
        self._packets: dict[tuple[str, str], tuple[object, str]] = {}

    def condition(self, config: ConditionConfig) -> Condition:
        prompt = load_prompt(config.prompt, self.experiment.base)
        guidance = guidance_sha = None
        if config.guidance:
            guidance = load_text((self.experiment.base / config.guidance).resolve(), "guidance")
            guidance_sha = hashlib.sha256(guidance.encode()).hexdigest()
        return Condition(config=config, agent_config=config.reviewer, prompt=prompt, guidance=guidance,
                         guidance_sha256=guidance_sha, agent=make_reviewer(config.reviewer))  # fmt: skip

    async def packet(self, planned: PlannedRun, condition: Condition) -> tuple[object, str]:
        """The packet of (case, condition) and its digest, built once and shared by repetitions."""
        case: Case = planned.case
        config = condition.config
        if config.context == "tree":  # exported before the cache is read, as it always was
            await asyncio.to_thread(self.builder.tree, case)
        slot = (case.case_id, config.name)
        if slot not in self._packets:
            render = condition.prompt.render(case.language)
            if config.context == "diff":  # a small file read: not worth a thread hop
                packet = self.builder.packet(case, render, condition.guidance, config.context)
            else:
                packet = await asyncio.to_thread(self.builder.packet, case, render, condition.guidance, config.context)
            self._packets[slot] = (packet, _packet_digest(packet.model_dump_json(), condition))
        return self._packets[slot]

    async def attempt(self, planned: PlannedRun, condition: Condition, packet: object) -> CachedReply:
        scope = RUN_SCOPE.get()
        if scope is not None:  # this task's copy of the context: the run's id for this attempt
            RUN_SCOPE.set(replace(scope, run_id=planned.run_id))
        tree = self.builder.tree(planned.case) if condition.config.context == "tree" else None  # exported above
        got = await asyncio.wait_for(condition.agent.review(packet, tree), timeout=condition.config.timeout_s)
        return CachedReply(got.text, got.model, got.tokens_in, got.tokens_out, got.findings)

    def outcome(self, planned: PlannedRun, reply: CachedReply) -> Outcome:
        state, findings, unparsed = _outcome(reply, planned.case.paths)
        return Outcome(state, findings, unparsed)

    def close(self) -> None:
        self.builder.close()


class _Runner:
    """The engine: every planned run of a job, under each condition's limits, recorded once."""

    def __init__(self, job: Job, configs: Sequence[Any], store: RunStore,
                 on_update: Callable[[Counter, int, int], None] | None) -> None:  # fmt: skip
        self.job = job
        self.configs = configs
        self.store = store
        self.on_update = on_update
        self.counts: Counter[str] = Counter()
        self.requests = 0
        self.finished = 0
        self.total = 0
        self.conditions: dict[str, Condition] = {}

    def prepare(self) -> None:
        for config in self.configs:
            self.conditions[config.name] = self.job.condition(config)

    async def close(self) -> None:
        try:
            for condition in self.conditions.values():
                await condition.agent.aclose()
        finally:
            self.job.close()

    async def one(self, planned: PlannedRun) -> None:
        condition = self.conditions[planned.condition.name]
        async with condition.semaphore:
            await self._execute(planned, condition)

    async def _execute(self, planned: PlannedRun, condition: Condition) -> None:
        config = condition.config
        started_wall, started = _now(), time.monotonic()
        reply: CachedReply | None = None
        error: str | None = None
        attempts = 0
        cached = False
        key = ""
        try:
            packet, digest = await self.job.packet(planned, condition)
            key = _cache_key(digest, planned.repetition)
            reply = self.store.cached(key)
            cached = reply is not None
            while reply is None:
                attempts += 1
                await condition.limiter.wait()
                self.requests += 1
                try:
                    reply = await self.job.attempt(planned, condition, packet)
                except ReviewerError as exc:
                    if exc.transient and attempts <= config.retries:
                        delay = exc.retry_after
                        if delay is None:
                            delay = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (attempts - 1))
                            delay *= 0.5 + random.random()  # jitter: retries must not stampede
                        await asyncio.sleep(min(delay, BACKOFF_CAP_S))
                        continue
                    raise
            outcome = self.job.outcome(planned, reply)
        except TimeoutError as exc:
            outcome = Outcome(RunState.TIMED_OUT)
            error = str(exc) or f"no answer within {config.timeout_s:g}s"  # a forge names its PR
        except ReviewerError as exc:
            outcome = Outcome(RunState.FAILED)
            error = str(exc)
        except asyncio.CancelledError:
            self._record(planned, condition, Outcome(RunState.CANCELLED), None, "interrupted",
                         started_wall, started, attempts, False, key)  # fmt: skip
            raise
        except Exception as exc:  # noqa: BLE001 - a broken case must not sink the experiment
            outcome = Outcome(RunState.FAILED)
            error = f"{type(exc).__name__}: {exc}"
        self._record(planned, condition, outcome, reply, error, started_wall, started, attempts, cached, key)

    def _record(self, planned: PlannedRun, condition: Condition, outcome: Outcome, reply: CachedReply | None,
                error: str | None, started_wall: str, started: float, attempts: int, cached: bool,
                key: str) -> None:  # fmt: skip
        agent = condition.agent_config
        row = RunRow(
            run_id=planned.run_id,
            case_id=planned.item_id,
            condition=condition.config.name,
            repetition=planned.repetition,
            variant=planned.variant,
            state=outcome.state.value,
            started_at=started_wall,
            ended_at=_now(),
            latency_s=round(time.monotonic() - started, 4),
            attempts=attempts,
            cached=cached,
            model_requested=getattr(agent, "model", None) or agent.kind,
            model_returned=reply.model if reply else None,
            params=condition.params,
            prompt_sha256=condition.prompt.sha256,
            guidance_sha256=condition.guidance_sha256,
            gold_sha256=self.job.gold_sha256,
            tool_version=__version__,
            tokens_in=reply.tokens_in if reply else None,
            tokens_out=reply.tokens_out if reply else None,
            raw_output=reply.text if reply else None,
            unparsed=outcome.unparsed,
            error=error,
            cache_key=key,
            findings=outcome.findings,
            patch=outcome.patch,
        )
        # Only answers are cached; failures are retried by a later invocation's choice.
        fresh = reply if reply is not None and not cached else None
        self.store.record(row, fresh)
        self.counts[outcome.state.value] += 1
        self.finished += 1
        if self.on_update:
            self.on_update(self.counts, self.finished, self.total)


def open_run_store(out: Path) -> RunStore:
    """The run store of run directory ``out``, created if needed.

    Raises:
        UsageError: ``out`` exists and is not a directory.
    """
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    return RunStore(out / RUNS_DB, create=True)


def execute_plan(job: Job, configs: Sequence[Any], plan: list[PlannedRun], store: RunStore, out: Path, *,
                 retry_failed: bool = False,
                 on_update: Callable[[Counter, int, int], None] | None = None) -> RunSummary:  # fmt: skip
    """Run every run of ``plan`` not yet recorded in ``store``; the summary counts the whole store."""
    if retry_failed:
        with store._tx():
            store.db.execute("DELETE FROM runs WHERE state IN ('failed', 'timed_out')")
    done = store.done_ids()
    todo = [r for r in plan if r.run_id not in done]
    runner = _Runner(job, configs, store, on_update)
    runner.total = len(todo)
    asyncio.run(_drive(runner, todo))
    by_state = Counter(state for (state,) in store.db.execute("SELECT state FROM runs"))
    return RunSummary(out=out, planned=len(plan), already_done=len(plan) - len(todo),
                      by_state=dict(sorted(by_state.items())), requests=runner.requests)  # fmt: skip


def run_experiment(
    experiment: Experiment,
    out: Path,
    *,
    retry_failed: bool = False,
    on_update: Callable[[Counter, int, int], None] | None = None,
) -> RunSummary:
    """Run (or resume) every planned run of ``experiment`` into run directory ``out``.

    Raises:
        CorpusError: the corpus is missing or damaged.
        UsageError: ``out`` holds runs of another experiment or of a changed corpus.
    """
    corpus = read_corpus(experiment.corpus_path)
    store = open_run_store(out)
    try:
        store.check_meta(
            {"experiment_sha256": experiment.sha256, "gold_sha256": corpus.meta.gold_sha256},
            {"experiment_sha256": "experiment", "gold_sha256": "corpus (its gold.jsonl changed)"},
        )
        store.set_meta({
            "experiment": json.dumps(experiment.config.model_dump(mode="json"), sort_keys=True),
            "experiment_path": str(experiment.path),
            "corpus_path": str(corpus.path),
            "tool_version": __version__,
        })  # fmt: skip
        plan = plan_runs(experiment, corpus)
        # Forge reviewers mark what they open with the run directory, to find it again on resume.
        scope = RUN_SCOPE.set(RunScope(experiment=hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:16]))
        try:  # out of the command reviewers' sight: the gold, the repository's history, the runs
            with protect(corpus.path, corpus.meta.repo.path, out):
                return execute_plan(ReviewJob(experiment, corpus), experiment.config.condition, plan, store, out,
                                    retry_failed=retry_failed, on_update=on_update)  # fmt: skip
        finally:
            RUN_SCOPE.reset(scope)
    finally:
        store.close()


async def _drive(runner: _Runner, todo: list[PlannedRun]) -> None:
    try:
        runner.prepare()
        await asyncio.gather(*(runner.one(r) for r in todo))
    finally:
        await runner.close()
