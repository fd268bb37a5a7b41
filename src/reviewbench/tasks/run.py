"""``tasks run``: every solver condition of a fix-task experiment on its task set.

The run engine runs it (``reviewbench.engine``, job ``tasks/solve.py``), so plans,
limits, retries, states, cache, resume and the run store are those of review runs. The run
directory's meta records the task directory (``tasks_path``) and the task set's hash;
a changed task set or experiment is refused, as a changed corpus is for reviews.
"""

from __future__ import annotations

import json
from pathlib import Path

from .._version import __version__
from ..engine import OnUpdate, RunSummary, execute_plan, open_run_store
from ..errors import CorpusError, UsageError
from ..review.runner import check_conditions
from ..sandbox import protect
from .experiment import TasksExperiment
from .store import read_tasks

__all__ = ["KIND", "run_tasks"]

KIND = "tasks"
"""The run directory's ``kind`` meta value: the runs are fix-task runs, not reviews."""


def run_tasks(experiment: TasksExperiment, out: Path, *, retry_failed: bool = False,
              on_update: OnUpdate | None = None) -> RunSummary:  # fmt: skip
    """Run (or resume) every planned run of ``experiment`` into run directory ``out``.

    Raises:
        CorpusError: the task directory is missing or damaged, or its repository is gone.
        UsageError: ``out`` holds runs of another experiment or of a changed task set.
    """
    from .solve import TaskJob, plan_task_runs  # pulls in the solver adapters

    check_conditions(experiment.path, [(c.name, c.solver, None) for c in experiment.config.condition])
    path = experiment.tasks_path
    if not path.is_dir():
        raise CorpusError(f"task directory {path} does not exist (named by 'tasks' in {experiment.path}); "
                          "run 'reviewbench tasks mine' first")  # fmt: skip
    tasks = read_tasks(path)
    repo = Path(tasks.meta.repo.path)
    if not repo.exists():
        raise CorpusError(f"the repository of {path}, {repo}, does not exist; the base trees are read from it")
    store = open_run_store(out)
    try:
        if store.get_meta("corpus_path") is not None:
            raise UsageError(f"{out} holds review runs; use a new --out directory for fix-task runs")
        store.check_meta(
            {"kind": KIND, "experiment_sha256": experiment.sha256, "gold_sha256": tasks.meta.tasks_sha256},
            {"kind": "kind of run (review runs and fix-task runs never share a directory)",
             "experiment_sha256": "experiment", "gold_sha256": "task set (its tasks.jsonl changed)"},
        )  # fmt: skip
        store.set_meta({
            "experiment": json.dumps(experiment.config.model_dump(mode="json"), sort_keys=True),
            "experiment_path": str(experiment.path),
            "tasks_path": str(tasks.path.resolve()),
            "tool_version": __version__,
        })  # fmt: skip
        plan = plan_task_runs(experiment, tasks)
        with protect(tasks.path, repo, out):  # out of the command solvers' sight
            return execute_plan(TaskJob(experiment, tasks, repo), experiment.config.condition, plan, store, out,
                                retry_failed=retry_failed, on_update=on_update)  # fmt: skip
    finally:
        store.close()
