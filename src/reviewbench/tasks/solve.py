"""Fix-task runs: solvers on the tasks of a task set, through the run engine (``reviewbench.engine``).

The job builds each (task, condition) packet once — problem statement, frozen task prompt,
guidance, and the context files (``tasks/context.py``) for chat solvers — and reads answers:
a chat solver's diff is extracted from its text (``tasks/extract.py``); a command solver's
patch is what it changed in a fresh single-commit export of the base tree
(``tasks/export.py``), taken per attempt so repetitions never see each other's edits.

States (the engine's shared ones; fix tasks name them ``SolutionState``): ``completed_findings``
a non-empty patch (``patched``); ``completed_no_findings`` no change (``no_change``);
``invalid`` an answer with no diff in it (``no_diff``); ``failed``, ``timed_out``,
``cancelled`` as for reviews. The raw answer (model text, or the command's stdout) is kept in ``raw_output``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

from ..engine import Condition, Outcome, PlannedRun, run_id
from ..records import RunState
from ..review.prompt import load_prompt, load_text
from ..store.runs import CachedReply
from .context import context_files
from .experiment import TaskConditionConfig, TasksExperiment
from .export import export_base
from .extract import extract_diff
from .records import Task
from .solvers import TaskPacket, make_solver
from .store import TaskSet

__all__ = ["TaskJob", "plan_task_runs"]

VARIANT = "original"


def plan_task_runs(experiment: TasksExperiment, tasks: TaskSet) -> list[PlannedRun]:
    """Every run of the experiment, in the seeded, interleaved order."""
    import random

    runs = [
        PlannedRun(run_id=run_id(task.instance_id, condition.name, repetition), item_id=task.instance_id,
                   case=task, condition=condition, repetition=repetition, variant=VARIANT)  # fmt: skip
        for task in tasks.tasks
        for condition in experiment.config.condition
        for repetition in range(experiment.config.repeats)
    ]
    random.Random(experiment.config.seed).shuffle(runs)
    return runs


class TaskJob:
    """The engine's job for fix tasks."""

    def __init__(self, experiment: TasksExperiment, tasks: TaskSet, repo: Path) -> None:
        self.experiment = experiment
        self.tasks = tasks
        self.repo = repo
        self.gold_sha256 = tasks.meta.tasks_sha256
        self._packets: dict[tuple[str, str], tuple[TaskPacket, str]] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    def condition(self, config: TaskConditionConfig) -> Condition:
        prompt = load_prompt(config.prompt, self.experiment.base, package="reviewbench.tasks")
        guidance = guidance_sha = None
        if config.guidance:
            guidance = load_text((self.experiment.base / config.guidance).resolve(), "guidance")
            guidance_sha = hashlib.sha256(guidance.encode()).hexdigest()
        return Condition(config=config, agent_config=config.solver, prompt=prompt, guidance=guidance,
                         guidance_sha256=guidance_sha, agent=make_solver(config.solver))  # fmt: skip

    def _build(self, task: Task, condition: Condition) -> tuple[TaskPacket, str]:
        config: TaskConditionConfig = condition.config
        files = {}
        if not condition.agent.edits_tree:  # a command solver gets the whole tree instead
            files = context_files(self.repo, task, config.context, top_k=config.top_k,
                                  max_chars=config.max_context_chars)  # fmt: skip
        packet = TaskPacket(instance_id=task.instance_id, problem_statement=task.problem_statement,
                            prompt=condition.prompt.render(None), guidance=condition.guidance, files=files)  # fmt: skip
        shown = {"solver": condition.params, "context": config.context if not condition.agent.edits_tree else "tree",
                 "base_commit": task.base_commit}  # fmt: skip
        fingerprint = json.dumps(shown, sort_keys=True)
        digest = hashlib.sha256(f"{packet.model_dump_json()}\0{fingerprint}".encode()).hexdigest()
        return packet, digest

    async def packet(self, planned: PlannedRun, condition: Condition) -> tuple[object, str]:
        slot = (planned.item_id, condition.config.name)
        lock = self._locks.setdefault(slot, asyncio.Lock())
        async with lock:  # bm25 reads the whole base tree: once per (task, condition)
            if slot not in self._packets:
                self._packets[slot] = await asyncio.to_thread(self._build, planned.case, condition)
        return self._packets[slot]

    async def attempt(self, planned: PlannedRun, condition: Condition, packet: object) -> CachedReply:
        timeout = condition.config.timeout_s
        if not condition.agent.edits_tree:
            got = await asyncio.wait_for(condition.agent.solve(packet, None), timeout=timeout)
            return CachedReply(got.text, got.model, got.tokens_in, got.tokens_out, None, notes=got.notes)
        task: Task = planned.case
        tree = await asyncio.to_thread(export_base, self.repo, task.base_commit, task.instance_id)
        try:
            got = await asyncio.wait_for(condition.agent.solve(packet, tree.path), timeout=timeout)
            patch = await asyncio.to_thread(tree.patch)
        finally:
            await asyncio.to_thread(tree.remove)
        return CachedReply(got.text, None, None, None, None, patch=patch, notes=got.notes)

    def outcome(self, planned: PlannedRun, reply: CachedReply) -> Outcome:
        patch = reply.patch if reply.patch is not None else extract_diff(reply.text)
        if patch is None:
            return Outcome(RunState.INVALID, unparsed=[])
        state = RunState.COMPLETED_FINDINGS if patch.strip() else RunState.COMPLETED_NO_FINDINGS
        return Outcome(state, patch=patch)

    def close(self) -> None:
        pass
