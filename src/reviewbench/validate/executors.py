"""Where sandboxed jobs run: local worker threads, or Ray actors.

Both give each worker one scratch tree for its whole life and call the same handler
(:func:`validate_case` for cases; fix-task checks and grading bring their own), so their
results are identical by construction; only scheduling differs. The local executor drives sandboxed subprocesses from threads (the work is in the
child processes, so threads suffice and Ctrl-C stays simple).
"""

from __future__ import annotations

import logging
import queue
import shutil
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from ..config import ValidateConfig
from ..errors import UsageError
from ..records import Validation, ValidationStatus
from ..sandbox import Cancelled, isolation_prefix, kill_all, reset_cancel
from ..store.scratch import make_scratch
from .testcmd import TestCommand
from .worker import ScratchTree, validate_case

__all__ = ["run_jobs"]

Record = Callable[[Any, Any], None]
Handler = Callable[[ScratchTree, TestCommand, Any], Any]
"""``handler(tree, command, job) -> result``: a module-level function (Ray pickles it by name).
Jobs must have a ``log`` path; an unexpected exception is written there and the result
becomes ``handler.on_error(command, exc)``."""


def _validation_error(command: TestCommand, exc: Exception) -> Validation:
    return Validation(status=ValidationStatus.ERROR, test_cmd=command.command)


validate_case.on_error = _validation_error  # type: ignore[attr-defined]


def _guarded(handler: Handler, tree: ScratchTree, command: TestCommand, job: Any) -> Any:
    """Run one job; an unexpected failure becomes the handler's error result, with its log."""
    try:
        return handler(tree, command, job)
    except Cancelled:
        raise
    except Exception as exc:  # one broken job must not sink the run
        with job.log.open("a", encoding="utf-8") as handle:
            handle.write(f"\n=== error: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        return handler.on_error(command, exc)  # type: ignore[attr-defined]


def run_jobs(repo: Path, command: TestCommand, config: ValidateConfig, jobs: list[Any], record: Record,
             handler: Handler = validate_case) -> None:  # fmt: skip
    """Run ``handler`` on every job, calling ``record(job, result)`` once per job, from any thread."""
    isolation_prefix(config.network)  # refuse early if the network cannot be denied
    if config.executor == "ray":
        _run_ray(repo, command, config, jobs, record, handler)
    else:
        _run_local(repo, command, config, jobs, record, handler)


def _run_local(repo: Path, command: TestCommand, config: ValidateConfig, jobs: list[Any], record: Record,
               handler: Handler) -> None:  # fmt: skip
    reset_cancel()
    root = make_scratch("reviewbench-validate-")
    idle: queue.SimpleQueue[ScratchTree] = queue.SimpleQueue()
    counter = iter(range(len(jobs) + 1))
    lock = threading.Lock()
    stopping = threading.Event()

    def acquire() -> ScratchTree:
        try:
            return idle.get_nowait()
        except queue.Empty:
            with lock:
                number = next(counter)
            return ScratchTree(repo, root / f"tree-{number}", config)

    def work(job: Any) -> None:
        if stopping.is_set():
            return
        tree = acquire()
        try:
            validation = _guarded(handler, tree, command, job)
        except Cancelled:
            return
        finally:
            idle.put(tree)
        if not stopping.is_set():
            record(job, validation)

    pool = ThreadPoolExecutor(
        max_workers=min(config.jobs, len(jobs)), thread_name_prefix="validate"
    )
    try:
        for future in as_completed([pool.submit(work, job) for job in jobs]):
            future.result()
    except BaseException:
        stopping.set()
        pool.shutdown(wait=False, cancel_futures=True)
        kill_all()
        raise
    finally:
        pool.shutdown(wait=True)
        shutil.rmtree(root, ignore_errors=True)
        reset_cancel()  # every worker has ended: later commands of this process may start


class _RayWorker:
    """A Ray actor owning one scratch tree on its node."""

    def __init__(self, repo: str, command: str, config: ValidateConfig, handler: Handler) -> None:
        self.root = make_scratch("reviewbench-validate-")
        self.tree = ScratchTree(Path(repo), self.root / "tree", config)
        self.command = TestCommand(command)
        self.handler = handler

    def validate(self, job: Any) -> tuple[Any, Any]:
        return job, _guarded(self.handler, self.tree, self.command, job)

    def close(self) -> None:
        kill_all()
        shutil.rmtree(self.root, ignore_errors=True)


def _run_ray(repo: Path, command: TestCommand, config: ValidateConfig, jobs: list[Any], record: Record,
             handler: Handler) -> None:  # fmt: skip
    try:
        import ray
        from ray.actor import ActorHandle
        from ray.util import ActorPool
    except ImportError:
        raise UsageError("the Ray executor needs Ray: pip install 'reviewbench[ray]'") from None
    started = not ray.is_initialized()
    if started:
        # Ray announces its token-authentication default on every local start-up; on the
        # user's terminal that is noise inside validate's output (warnings only).
        logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(logging.ERROR)
        try:
            ray.init(address=config.ray_address, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)  # fmt: skip
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise UsageError(
                f"cannot reach the Ray cluster at {config.ray_address or 'local'}: {exc}"
            ) from None
    worker_cls = ray.remote(num_cpus=1)(_RayWorker)
    size = max(1, min(config.jobs, len(jobs)))
    actors: list[ActorHandle[_RayWorker]] = []
    for _ in range(size):
        actor = worker_cls.remote(str(repo), command.command, config, handler)
        assert isinstance(actor, ActorHandle)  # ray's annotation also admits the class (for @ray.method)
        actors.append(actor)
    try:
        for job, validation in ActorPool(actors).map_unordered(
            lambda actor, job: actor.validate.remote(job), jobs
        ):
            record(job, validation)
    finally:
        for actor in actors:
            try:
                ray.get(actor.close.remote(), timeout=30)
            except Exception:  # the actor may already be gone
                pass
            ray.kill(actor)
        if started:
            ray.shutdown()
