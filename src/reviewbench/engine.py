"""The run engine: every planned run of a job, exactly once, with full provenance.

Review runs (``review/runner.py``) and fix-task runs (``tasks/solve.py``) are both a
:class:`Job` driven by :func:`execute_plan`: the engine owns concurrency and rate limits per
condition, retries with backoff, the response cache, terminal states and recording; a job
says only what a run asks and how its answer is read. Each run ends in exactly one
terminal state and is written, with its findings and the response that produced them, in
one transaction.

Failures are told apart by whose they are. A reviewer that gives no answer ends its run
``failed`` or ``timed_out``; the harness's own failures — the run store cannot be written,
the disk is full — are never recorded as the reviewer's: the experiment stops (siblings
cancelled first, clients closed last), nothing half-written is left, and those runs are
redone on resume.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from ._version import __version__
from .config.reviewers import Capabilities, network_policy
from .errors import OutputTooLarge, ReviewerError, SafetyStop, StoreError, UsageError
from .records import FailureCode, Finding, PullRequest, RunRow, RunState
from .sandbox import find_leak, key_values
from .store.runs import RUNS_DB, CachedReply, RunStore

__all__ = [
    "Condition",
    "Job",
    "OnUpdate",
    "OpensPullRequests",
    "Outcome",
    "PlannedRun",
    "RetryRule",
    "RunSummary",
    "execute_plan",
    "open_run_store",
    "run_id",
]

#: What follows every run's end: state counts, runs finished, runs to do, the latest error
#: (``"CONDITION: message"``, None before any).
OnUpdate = Callable[[Counter[str], int, int, "str | None"], None]

BACKOFF_BASE_S = 1.0
#: The first backoff after an attempt that could not connect (then doubled, as others).
CONNECT_BACKOFF_BASE_S = 0.25
BACKOFF_CAP_S = 60.0
#: Token counts past this are not a real reply's: recorded as unknown, with a note.
MAX_PLAUSIBLE_TOKENS = 10**12


@dataclass(frozen=True)
class PlannedRun:
    """One run of the plan: an item (case or task) x condition x repetition."""

    run_id: str
    item_id: str
    """The reviewed case's id, or the task's instance id (the ``case_id`` column)."""
    case: Any
    """The :class:`~reviewbench.records.Case` (review runs) or task being run."""
    condition: Any
    """The condition's config: a review or a fix-task condition."""
    repetition: int
    variant: str
    position: int | None = None
    """0-based place in the seeded order (the allocation), when the job allocates one."""


@dataclass(frozen=True)
class RunSummary:
    """What an invocation did, and the states of every run the store holds."""

    out: Path
    planned: int
    already_done: int
    by_state: dict[str, int]
    requests: int
    """Requests actually sent to reviewers in this invocation (cache hits send none)."""
    unanswered: dict[str, str] = field(default_factory=dict)
    """Conditions whose every run failed or timed out, with one of their errors."""
    stopped: dict[str, str] = field(default_factory=dict)
    """Conditions stopped by consecutive connection failures, with the cause (one line)."""
    not_started: dict[str, int] = field(default_factory=dict)
    """Per stopped condition: its planned runs never started (a later invocation resumes them)."""


def run_id(item_id: str, condition: str, repetition: int) -> str:
    """The stable id of a run: the same plan gives the same ids, so resume finds them."""
    return hashlib.sha256(f"{item_id}\0{condition}\0{repetition}".encode()).hexdigest()[:16]


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


class OpensPullRequests(Protocol):
    """What the adapter of a kind declaring ``opens_pull_requests`` offers the engine."""

    def pull_request(self, run_id: str, text: str | None = None) -> PullRequest | None:
        """The pull request of a run (from its reply's text, else the one opened for it)."""
        ...


@dataclass
class Condition:
    """One condition as the engine runs it: its config, prompt and adapter, and its limits."""

    config: Any
    """A review condition's or a fix-task condition's config."""
    agent_config: Any
    """The adapter's config (reviewer or solver): recorded as the run's ``params``."""
    prompt: Any
    """The frozen prompt (``review.prompt.Prompt``): its ``sha256`` is recorded."""
    guidance: str | None
    guidance_sha256: str | None
    agent: Any
    """The adapter that answers (a reviewer or a solver); closed with ``aclose()``."""
    semaphore: asyncio.Semaphore = field(init=False)
    limiter: _RateLimiter = field(init=False)
    params: dict[str, Any] = field(init=False)
    network: dict[str, Any] | None = field(init=False)
    """The sandbox's network policy of a command kind (``network_policy``), else None."""
    connection_failures: int = field(init=False, default=0)
    """Consecutive attempts that could not connect (any answer or other error resets it)."""
    stopped: str | None = field(init=False, default=None)
    """Why the condition was stopped (its remaining runs are not started), or None."""
    stop_event: asyncio.Event = field(init=False)
    not_started: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.semaphore = asyncio.Semaphore(self.config.concurrency)
        self.limiter = _RateLimiter(self.config.rate_per_minute)
        self.params = self.agent_config.model_dump(mode="json")
        self.network = network_policy(self.agent_config)
        self.stop_event = asyncio.Event()

    @property
    def capabilities(self) -> Capabilities:
        """What the adapter's kind declares on its config model (``config/reviewers.py``)."""
        declared: Capabilities = self.agent_config.capabilities
        return declared

    def count_connection(self, exc: ReviewerError) -> None:
        """Count one attempt's end: after ``stop_after_connection_failures`` consecutive
        attempts that could not connect, the condition stops, naming the last error."""
        if not exc.connection:
            self.connection_failures = 0
            return
        self.connection_failures += 1
        limit = getattr(self.config, "stop_after_connection_failures", 0)
        if limit and self.connection_failures >= limit and self.stopped is None:
            self.stopped = (f"condition {self.config.name} stopped after {self.connection_failures} consecutive "
                            f"connection failures: {exc}")  # fmt: skip
            self.stop_event.set()

    async def backoff(self, delay: float) -> None:
        """Sleep ``delay`` seconds, or less if the condition is stopped meanwhile."""
        try:
            await asyncio.wait_for(self.stop_event.wait(), timeout=delay)
        except TimeoutError:
            pass


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


def _cache_key(digest: str, repetition: int) -> str:
    """Content address of one response; the repetition keeps repeats independent requests."""
    return hashlib.sha256(f"{digest}\0{repetition}".encode()).hexdigest()


def _plausible(tokens: int | None, notes: list[str], what: str) -> int | None:
    """A token count, or None with a note when no real reply could have that many."""
    if tokens is None or 0 <= tokens <= MAX_PLAUSIBLE_TOKENS:
        return tokens
    notes.append(f"implausible {what} count {tokens} recorded as unknown")
    return None


class _Runner:
    """The engine: every planned run of a job, under each condition's limits, recorded once."""

    def __init__(self, job: Job, configs: Sequence[Any], store: RunStore,
                 on_update: OnUpdate | None) -> None:  # fmt: skip
        self.job = job
        self.configs = configs
        self.store = store
        self.on_update = on_update
        self.counts: Counter[str] = Counter()
        self.requests = 0
        self.finished = 0
        self.total = 0
        self.conditions: dict[str, Condition] = {}
        self.tries: dict[str, int] = {}
        self.last_error: str | None = None
        """The latest error recorded, prefixed with its condition (shown in the progress line)."""

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
            if condition.stopped is not None:  # never started: left for a later invocation
                condition.not_started += 1
                self.finished += 1
                if self.on_update:
                    self.on_update(self.counts, self.finished, self.total, self.last_error)
                return
            await self._execute(planned, condition)

    async def _execute(self, planned: PlannedRun, condition: Condition) -> None:
        config = condition.config
        started_wall = _now()
        reply: CachedReply | None = None
        error: str | None = None
        attempts = 0
        cached = False
        key = ""
        answer_s: float | None = None
        try:
            packet, digest = await self.job.packet(planned, condition)
            key = _cache_key(digest, planned.repetition)
            reply = self.store.cached(key)
            cached = reply is not None
            while reply is None:
                attempts += 1
                await condition.limiter.wait()
                try:
                    asked = time.monotonic()  # latency: this attempt alone, not queueing or backoff
                    reply = await self.job.attempt(planned, condition, packet)
                    answer_s = time.monotonic() - asked
                    self.requests += 1
                    condition.connection_failures = 0
                except TimeoutError:
                    self.requests += 1  # sent, and no answer came in time
                    condition.connection_failures = 0
                    raise
                except ReviewerError as exc:
                    self.requests += exc.sent
                    condition.count_connection(exc)
                    if exc.transient and attempts <= config.retries and condition.stopped is None:
                        delay = exc.retry_after
                        if delay is None:
                            # A refused connection costs the endpoint nothing: retried sooner, so
                            # an absent server stops its condition in seconds, not half a minute.
                            base = CONNECT_BACKOFF_BASE_S if exc.connection else BACKOFF_BASE_S
                            delay = min(BACKOFF_CAP_S, base * 2 ** (attempts - 1))
                            delay *= 0.5 + random.random()  # jitter: retries must not stampede
                        await condition.backoff(min(delay, BACKOFF_CAP_S))
                        if condition.stopped is None:
                            continue
                    raise
            leak = find_leak([reply.text, reply.patch, *(f.claim for f in reply.findings or ())],
                             key_values(condition.agent_config))  # fmt: skip
            if leak:
                raise SafetyStop(f"run {planned.run_id} of condition {condition.config.name} (case {planned.item_id}): "
                                 f"{leak} in the reviewer's output; the experiment stopped and the output was not "
                                 "kept: revoke the credential if it is real")  # fmt: skip
            outcome = self.job.outcome(planned, reply)
            code: str | None = FailureCode.ENDPOINT_ERROR if outcome.state is RunState.INVALID else None
        except TimeoutError as exc:
            outcome = Outcome(RunState.TIMED_OUT)
            error = str(exc) or f"no answer within {config.timeout_s:g}s"  # a forge names its PR
            code = getattr(exc, "code", None) or FailureCode.TIMEOUT
        except OutputTooLarge as exc:
            # An answer, but not a review: invalid, its first bytes stored once (as the raw
            # output only: never cached, never split into unparsed lines).
            outcome = Outcome(RunState.INVALID)
            error = str(exc)
            reply = CachedReply(exc.head, None, None, None, None)
            self._record(planned, condition, outcome, reply, error, started_wall, attempts, False, key, None,
                         cacheable=False, code=FailureCode.ENDPOINT_ERROR)  # not an answer a resume could replay  # fmt: skip
            return
        except ReviewerError as exc:
            outcome = Outcome(RunState.FAILED)
            error = str(exc)
            code = exc.code or FailureCode.ENDPOINT_ERROR
        except StoreError:
            raise  # the harness's failure, not the reviewer's: stop the experiment
        except SafetyStop as exc:  # recorded, nothing of the output kept; then the experiment stops
            self._record(planned, condition, Outcome(RunState.FAILED), None, str(exc), started_wall, attempts, False,
                         key, None, code=FailureCode.SAFETY_STOP)  # fmt: skip
            raise
        except asyncio.CancelledError:
            self._record(planned, condition, Outcome(RunState.CANCELLED), None, "interrupted",
                         started_wall, attempts, False, key, None, code=FailureCode.OPERATOR_ERROR)  # fmt: skip
            raise
        except Exception as exc:  # noqa: BLE001 - a broken case must not sink the experiment
            outcome = Outcome(RunState.FAILED)
            error = f"{type(exc).__name__}: {exc}"
            code = FailureCode.SETUP_FAILED
        self._record(planned, condition, outcome, reply, error, started_wall, attempts, cached, key, answer_s,
                     code=code)

    def _record(self, planned: PlannedRun, condition: Condition, outcome: Outcome, reply: CachedReply | None,
                error: str | None, started_wall: str, attempts: int, cached: bool,
                key: str, answer_s: float | None, *, cacheable: bool = True,
                code: str | None = None) -> None:  # fmt: skip
        agent = condition.agent_config
        notes: list[str] = []
        tokens_in = _plausible(reply.tokens_in, notes, "input token") if reply else None
        tokens_out = _plausible(reply.tokens_out, notes, "output token") if reply else None
        notes.extend(reply.notes if reply else ())
        if notes:
            error = "; ".join([error, *notes] if error else notes)
        pull = _pull_request(condition, planned, reply)
        row = RunRow.model_construct(
            run_id=planned.run_id,
            case_id=planned.item_id,
            condition=condition.config.name,
            repetition=planned.repetition,
            variant=planned.variant,
            state=outcome.state,
            started_at=started_wall,
            ended_at=_now(),
            # The answering attempt's own time: rate-limit waits, failed attempts and backoff
            # are the harness's, not the reviewer's; None when no request answered (cache, failure).
            latency_s=round(answer_s, 4) if answer_s is not None else None,
            attempts=attempts,
            cached=cached,
            model_requested=getattr(agent, "model", None) or agent.kind,
            model_returned=reply.model if reply else None,
            params=condition.params,
            prompt_sha256=condition.prompt.sha256,
            guidance_sha256=condition.guidance_sha256,
            gold_sha256=self.job.gold_sha256,
            tool_version=__version__,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            raw_output=reply.text if reply else None,
            unparsed=outcome.unparsed,
            error=error,
            cache_key=key,
            findings=outcome.findings,
            patch=outcome.patch,
            try_no=self.tries.get(planned.run_id, 1),
            pull_request=pull,
            guidance_blobs=_guidance_blobs(self.job, planned, condition),
            position=planned.position,
            usage=_usage(pull),
            network=condition.network,
            failure_code=None if outcome.state.completed else FailureCode(code or FailureCode.ENDPOINT_ERROR),
        )
        # Only answers are cached; failures are retried by a later invocation's choice.
        fresh = reply if reply is not None and cacheable and not cached and not notes else None
        self.store.record(row, fresh)
        self.counts[outcome.state.value] += 1
        self.finished += 1
        if error and not outcome.state.completed and outcome.state is not RunState.CANCELLED:
            self.last_error = f"{condition.config.name}: {error}"
        if self.on_update:
            self.on_update(self.counts, self.finished, self.total, self.last_error)


def _usage(pull: PullRequest | None) -> dict[str, Any] | str:
    """The run's usage proxy: what its forge showed (a rate limit around the run), else not observable."""
    return pull.usage if pull is not None and pull.usage is not None else "not_observable"


def _guidance_blobs(job: Job, planned: PlannedRun, condition: Condition) -> dict[str, str] | None:
    """The git blob SHAs of the guidance files that applied to the run (jobs that place any)."""
    blobs = getattr(job, "guidance_blobs", None)
    try:
        return blobs(planned, condition) if callable(blobs) else None
    except Exception:  # noqa: BLE001 - a tree that cannot be read: the run's own error says so
        return None


def _pull_request(condition: Condition, planned: PlannedRun, reply: CachedReply | None) -> PullRequest | None:
    """The pull request a forge run opened, whatever its end (``timed_out``, ``failed`` and
    ``cancelled`` included): the adapter of a kind that declares ``opens_pull_requests``
    answers ``pull_request`` (:class:`OpensPullRequests`)."""
    if not condition.capabilities.opens_pull_requests:
        return None
    agent: OpensPullRequests = condition.agent
    return agent.pull_request(planned.run_id, reply.text if reply else None)


def open_run_store(out: Path) -> RunStore:
    """The run store of run directory ``out``, created if needed.

    Raises:
        UsageError: ``out`` exists and is not a directory.
        StoreError: the store cannot be opened or created.
    """
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create run directory {out}: {exc.strerror or exc}") from None
    return RunStore(out / RUNS_DB, create=True)


def execute_plan(job: Job, configs: Sequence[Any], plan: list[PlannedRun], store: RunStore, out: Path, *,
                 retry_failed: bool = False, retry: RetryRule | None = None,
                 on_update: OnUpdate | None = None) -> RunSummary:  # fmt: skip
    """Run every run of ``plan`` not yet recorded in ``store``; the summary counts the whole store.

    With ``retry_failed``, runs that ended ``failed`` or ``timed_out`` are run again, as far
    as ``retry`` allows (each run at most ``max_retries`` times, only for its ``on`` failure
    codes); their earlier attempts stay in the store's history (``RunStore.history``), and
    the new run carries the next try number. ``cancelled`` runs are redone, their attempt
    kept in the history too.

    A condition whose attempts fail to connect ``stop_after_connection_failures`` times in a
    row is stopped: runs in backoff end ``failed`` with their error, runs not started are not
    recorded (resumed by a later invocation), the others go on; ``RunSummary.stopped`` says why.
    ``on_update(counts, finished, total, last_error)`` follows every run's end.

    Raises:
        StoreError: the run store could not be written (runs recorded so far are kept).
        UsageError: ``retry_failed`` with failed runs of which the retry rule allows none.
    """
    # An interrupted run is redone; its attempt is kept, never overwritten.
    tries = store.retire({RunState.CANCELLED})
    if retry_failed:
        tries.update(_retire_failed(store, retry))
    done = store.done_ids()
    todo = [r for r in plan if r.run_id not in done]
    runner = _Runner(job, configs, store, on_update)
    runner.total = len(todo)
    runner.tries = {rid: n + 1 for rid, n in tries.items()}
    asyncio.run(_drive(runner, todo))
    by_state = store.state_counts()
    stopped = {name: c.stopped for name, c in runner.conditions.items() if c.stopped is not None}
    return RunSummary(out=out, planned=len(plan), already_done=len(plan) - len(todo),
                      by_state={s.value: n for s, n in sorted(by_state.items())}, requests=runner.requests,
                      unanswered=store.conditions_without_answers(), stopped=stopped,
                      not_started={name: runner.conditions[name].not_started for name in stopped})  # fmt: skip


@dataclass(frozen=True)
class RetryRule:
    """The registered retry rule: how often a run may be retried, and for which failures."""

    max_retries: int = 1
    on: frozenset[str] | None = None
    """Failure codes a retry is allowed for (None: any)."""


def _retire_failed(store: RunStore, rule: RetryRule | None) -> dict[str, int]:
    """Retire the failed and timed-out runs the retry rule allows; refuse when it allows none."""
    rule = rule or RetryRule(max_retries=1_000_000)
    used = store.retries_used()
    failed = [r for r in store.runs() if r.state in (RunState.FAILED, RunState.TIMED_OUT)]
    refused = [r for r in failed if used[r.run_id] >= rule.max_retries
               or (rule.on is not None and r.failure_code is not None and r.failure_code not in rule.on)]  # fmt: skip
    if failed and len(refused) == len(failed):
        raise UsageError(f"--retry-failed: the registered retry rule (max_retries = {rule.max_retries}"
                         + (f", on = {', '.join(sorted(rule.on))}" if rule.on is not None else "")
                         + f") allows no retry of the {len(failed)} failed or timed-out run(s); they stay "
                         "missing reviews")  # fmt: skip
    return store.retire({RunState.FAILED, RunState.TIMED_OUT}, keep=[r.run_id for r in refused])


async def _drive(runner: _Runner, todo: list[PlannedRun]) -> None:
    """Run ``todo``; on the first harness failure, cancel the rest before closing clients."""
    try:
        runner.prepare()
        tasks = [asyncio.ensure_future(runner.one(r)) for r in todo]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            # Siblings record themselves `cancelled` (redone on resume) while the store works;
            # a broken store makes those records fail too, which changes nothing.
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
    finally:
        await runner.close()
