"""Fix-task solvers: the reviewer adapters, asked for a patch instead of a review.

Solvers register as reviewer kinds do (``reviewers/base.py``): a class per way of solving,
registered against the config models it solves with, an ``edits_tree`` it declares, and
this module's ``examples()`` for the shared test (``tests/tasks/test_solvers_kinds.py``).

The chat kinds (``openai``, ``anthropic``: those whose capabilities say ``chat``) are the
review adapters themselves, sent other words through their ``complete(system, user)``: same
wire, keys, error mapping and retries. ``command`` is
:class:`CommandSolver`: an executable run inside a tree it may edit, with the task packet
as JSON on stdin and ``REVIEWBENCH_TREE`` naming the tree; what it changes is the patch
(read by the caller), what it prints is kept as its raw answer. It runs in the shared
sandbox as the command reviewer does, its tree writable, everything else of the task out of
sight; its process group is killed when it exits or is cancelled.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..config.reviewers import AdapterConfig, AnthropicConfig, CommandConfig, OpenAIConfig, kind_of
from ..errors import ReviewerError
from ..reviewers.base import ReviewReply, make_reviewer
from ..reviewers.messages import clean_text, fenced, with_guidance
from ..reviewers.proc import (
    agent_box,
    capped_stdout,
    exit_label,
    failure_hint,
    network_notes,
    stderr_tail,
)

__all__ = ["ChatSolver", "CommandSolver", "Solver", "SolverConfig", "TaskPacket", "examples", "make_solver",
           "register_solver", "solvers", "task_user_text"]

SolverConfig = Annotated[OpenAIConfig | AnthropicConfig | CommandConfig, Field(discriminator="kind")]
"""The adapter kinds that can solve fix tasks (each registered below; a test keeps them in step)."""


class TaskPacket(BaseModel):
    """What a solver is given for one task. Nothing from the fix is in it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instance_id: str = Field(description="The task's neutral id.")
    problem_statement: str = Field(description="The fix's commit message, ids and links removed.")
    prompt: str = Field(description="The frozen task prompt (system text of chat solvers).")
    guidance: str | None = Field(default=None, description="The condition's guidance text.")
    files: dict[str, str] = Field(default_factory=dict,
                                  description="Base-tree contents of the files the context chose.")  # fmt: skip


def task_system_text(packet: TaskPacket) -> str:
    return with_guidance(packet.prompt, packet.guidance)


def task_user_text(packet: TaskPacket) -> str:
    """The problem statement, then each context file under its path."""
    parts = ["Problem statement:", "", packet.problem_statement.strip(), ""]
    if packet.files:
        parts += ["Files of the repository (as they are now):"]
        for path, content in packet.files.items():
            parts += ["", f"### {path}", fenced(content)]
    else:
        parts += ["(No file contents are given; infer the paths from the problem statement.)"]
    return "\n".join(parts) + "\n"


class Solver(Protocol):
    """What the fix-task job asks of a solver."""

    edits_tree: bool
    """It edits a fresh export of the base tree (its change is the patch) rather than answer
    with a diff; the job then shows it the whole tree instead of context files."""

    async def solve(self, packet: TaskPacket, tree: Path | None) -> ReviewReply: ...

    async def aclose(self) -> None: ...


_SOLVERS: dict[str, Callable[[Any], Solver]] = {}


def register_solver(*configs: type[AdapterConfig]) -> Callable[[type], type]:
    """Class decorator: the solver of every config model named (by its ``kind``)."""

    def decorate(cls: type) -> type:
        for config in configs:
            name = kind_of(config)
            if name in _SOLVERS:
                raise ValueError(f"solver kind {name!r} registered twice")
            _SOLVERS[name] = cls
        return cls

    return decorate


def solvers() -> dict[str, Callable[[Any], Solver]]:
    """Every registered solver by kind, in registration order."""
    return dict(_SOLVERS)


@register_solver(OpenAIConfig, AnthropicConfig)
class ChatSolver:
    """A chat adapter (a kind declaring ``chat``) asked for a unified diff."""

    edits_tree = False

    def __init__(self, config: OpenAIConfig | AnthropicConfig) -> None:
        self.adapter = make_reviewer(config)

    async def solve(self, packet: TaskPacket, tree: Path | None) -> ReviewReply:
        return await self.adapter.complete(task_system_text(packet), task_user_text(packet))  # type: ignore[attr-defined]

    async def aclose(self) -> None:
        await self.adapter.aclose()


@register_solver(CommandConfig)
class CommandSolver:
    """Runs ``config.command`` in the task's tree; stdout is kept, the tree's change is the patch."""

    edits_tree = True

    def __init__(self, config: CommandConfig) -> None:
        self.config = config
        self.box = agent_box(config, f"command solver {config.command!r}")

    @staticmethod
    def stdin_json(packet: TaskPacket) -> dict[str, Any]:
        return {"instance_id": packet.instance_id, "problem_statement": packet.problem_statement}

    async def solve(self, packet: TaskPacket, tree: Path | None) -> ReviewReply:
        payload = clean_text(json.dumps(self.stdin_json(packet), ensure_ascii=False)).encode("utf-8")
        try:
            result = await self.box.run(self.config.command, stdin=payload, tree=tree, tree_writable=True)
        except OSError as exc:
            raise ReviewerError(
                f"command solver {self.config.command!r} could not start: {exc.strerror or exc}"
            ) from None
        capped_stdout(result, self.box, f" on task {packet.instance_id}")
        if result.returncode != 0:
            raise ReviewerError(
                f"command solver {self.config.command!r} {exit_label(result.returncode)}"
                f"{failure_hint(result.returncode, self.box, result.stderr, result.refused)} "
                f"on task {packet.instance_id}; stderr: {stderr_tail(result.stderr)}"
            )
        return ReviewReply(text=result.stdout.decode("utf-8", "replace"), notes=network_notes(result))

    async def aclose(self) -> None:
        pass


def make_solver(config: OpenAIConfig | AnthropicConfig | CommandConfig) -> Solver:
    """The solver of a config; ``edits_tree`` tells the runner to hand it a fresh tree."""
    return _SOLVERS[config.kind](config)


def examples() -> list[dict[str, Any]]:
    """Solver tables as a fix-task experiment writes them, one or more per registered kind."""
    return [{"kind": "openai", "model": "m", "api_key_env": ""},
            {"kind": "anthropic", "base_url": "http://127.0.0.1:8080", "model": "m", "api_key_env": ""},
            {"kind": "command", "command": "my-agent --auto"}]  # fmt: skip
