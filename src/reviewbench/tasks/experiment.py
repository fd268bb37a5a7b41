"""The fix-task experiment file: the review experiment's format, with solvers and a task set.

Same TOML, same fields for repetitions, seed and a condition's limits (concurrency, rate,
timeout, retries) as a review experiment (``config/experiment.py``); a condition names a
``solver`` (openai, anthropic or command) and, for chat solvers, which files of the base
tree the prompt shows (``context``). ``reviewbench schema tasks-experiment`` prints its
JSON Schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..config.experiment import ConditionLimits, LoadedFile, read_config, unique_names
from ..config.reviewers import kinds_of
from ..errors import UsageError
from .solvers import SolverConfig

__all__ = ["TASKS_TEMPLATE", "TaskConditionConfig", "TasksExperiment", "TasksExperimentConfig",
           "load_tasks_experiment"]  # fmt: skip

SOLVER_KINDS = ", ".join(kinds_of(SolverConfig))


class TaskConditionConfig(ConditionLimits):
    """One fixed way of solving: solver + prompt + guidance + context."""

    solver: SolverConfig
    context: Literal["none", "oracle", "bm25"] = Field(
        default="bm25",
        description="Chat solvers: files shown at base — none; the gold patch's files (oracle, an "
        "upper bound); the top_k files by BM25 against the problem statement. Command solvers "
        "always get the whole base tree.",
    )
    top_k: int = Field(default=5, ge=1, le=100, description="bm25: how many files to show.")
    max_context_chars: int = Field(default=200_000, ge=1000,
                                   description="Files are shown whole, in rank order, while they fit.")  # fmt: skip
    timeout_s: float = Field(default=600.0, gt=0, description="Per attempt (a solver writes a patch: longer).")


class TasksExperimentConfig(BaseModel):
    """Contents of a fix-task experiment TOML file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tasks: str | None = Field(default=None, description="Task directory (tasks.jsonl), relative to the "
                              "experiment file; 'tasks run TASKS EXPERIMENT' overrides it.")
    repeats: int = Field(default=3, ge=1, le=100)
    seed: int = Field(default=0, description="Seeds the interleaved run order.")
    condition: list[TaskConditionConfig] = Field(min_length=1)

    @field_validator("condition")
    @classmethod
    def _unique_names(cls, conditions: list) -> list:
        return unique_names(conditions)


@dataclass(frozen=True)
class TasksExperiment(LoadedFile):
    """A loaded fix-task experiment."""

    config: TasksExperimentConfig

    @property
    def tasks_path(self) -> Path:
        assert self.config.tasks is not None  # load_tasks_experiment refuses a file without one
        return (self.base / self.config.tasks).resolve()


def _not_a_review_experiment(path: Path):
    def check(data: dict) -> None:
        if "corpus" in data and "tasks" not in data:
            raise UsageError(f"{path}: this is a review experiment (it names a corpus); a fix-task "
                             "experiment names a task directory: tasks = \"DIR\" (see 'reviewbench tasks init')")  # fmt: skip

    return check


def load_tasks_experiment(path: Path, tasks: Path | None = None) -> TasksExperiment:
    """Read and check a fix-task experiment file.

    Args:
        path: the TOML file.
        tasks: the task directory given on the command line; the file's ``tasks`` is then
            only the default. Recorded resolved, like any other experiment field.

    Raises:
        UsageError: missing file, TOML syntax error (with line and column), a review
            experiment, or a field with a bad value (named, e.g. ``condition A: solver.model``).
    """
    config = read_config(path, TasksExperimentConfig, SOLVER_KINDS, _not_a_review_experiment(path))
    if tasks is not None:
        config = config.model_copy(update={"tasks": str(tasks.resolve())})
    elif config.tasks is None:
        raise UsageError(f"{path}: no task directory: give it first ('tasks run TASKS EXPERIMENT') "
                         'or in the file (tasks = "DIR")')  # fmt: skip
    return TasksExperiment(config=config, path=path.resolve())


TASKS_TEMPLATE = '''\
# reviewbench fix-task experiment: which tasks, which solvers, how many repetitions.
# Run it:    reviewbench tasks run tasks-experiment.toml --out runs/tasks
# Grade it:  reviewbench tasks grade runs/tasks
# Schema:    reviewbench schema tasks-experiment

tasks = "tasks"        # task directory written by 'reviewbench tasks mine', relative to this file
repeats = 3            # independent repetitions of every (task, condition)
seed = 7               # seeds the interleaved order of runs

# Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, LM Studio, OpenRouter),
# asked for a unified diff. The key is read from the variable named by api_key_env.
[[condition]]
name = "bm25"
solver = { kind = "openai", base_url = "http://localhost:11434/v1", model = "qwen2.5-coder:7b", api_key_env = "OLLAMA_KEY", temperature = 0.0, max_tokens = 4096 }
prompt = "default"     # built-in frozen task prompt, or a file
context = "bm25"       # none | oracle (the gold patch's files: an upper bound) | bm25
top_k = 5              # bm25: files shown, best first
max_context_chars = 200000
concurrency = 4
timeout_s = 600        # per attempt
retries = 4            # retries on 429, 5xx and connection errors, with backoff

# Any executable, run inside a single-commit export of the task's base tree (no history):
# the task arrives as JSON {"instance_id", "problem_statement"} on stdin, REVIEWBENCH_TREE
# names the tree, and whatever it changes there is its patch.
# [[condition]]
# name = "agent"
# solver = { kind = "command", command = "my-agent --auto" }
# timeout_s = 1800
'''
