"""Fix-task solvers: the reviewer adapters, asked for a patch instead of a review.

``openai`` and ``anthropic`` are the review adapters themselves, sent other words through
their ``complete(system, user)``: same wire, keys, error mapping and retries. ``command`` is
:class:`CommandSolver`: an executable run inside a tree it may edit, with the task packet
as JSON on stdin and ``REVIEWBENCH_TREE`` naming the tree; what it changes is the patch
(read by the caller), what it prints is kept as its raw answer. It runs in the shared
sandbox as the command reviewer does, its tree writable, everything else of the task out of
sight; its process group is killed when it exits or is cancelled.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ..config.reviewers import AnthropicConfig, CommandConfig, OpenAIConfig
from ..errors import ReviewerError
from ..reviewers.anthropic import AnthropicReviewer
from ..reviewers.base import ReviewReply
from ..reviewers.messages import clean_text, fenced, with_guidance
from ..reviewers.openai import OpenAIReviewer
from ..reviewers.proc import agent_box, capped_stdout, exit_label, failure_hint, stderr_tail

__all__ = ["CommandSolver", "SolverConfig", "TaskPacket", "make_solver", "task_user_text"]

SolverConfig = Annotated[OpenAIConfig | AnthropicConfig | CommandConfig, Field(discriminator="kind")]
"""The adapter kinds that can solve fix tasks."""



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


class _ChatSolver:
    """A chat adapter (openai, anthropic) asked for a unified diff."""

    edits_tree = False

    def __init__(self, adapter: OpenAIReviewer | AnthropicReviewer) -> None:
        self.adapter = adapter

    async def solve(self, packet: TaskPacket, tree: Path | None) -> ReviewReply:
        return await self.adapter.complete(task_system_text(packet), task_user_text(packet))

    async def aclose(self) -> None:
        await self.adapter.aclose()


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
                f"{failure_hint(result.returncode, self.box, result.stderr)} "
                f"on task {packet.instance_id}; stderr: {stderr_tail(result.stderr)}"
            )
        return ReviewReply(text=result.stdout.decode("utf-8", "replace"))

    async def aclose(self) -> None:
        pass


def make_solver(config: OpenAIConfig | AnthropicConfig | CommandConfig) -> _ChatSolver | CommandSolver:
    """The solver of a config; ``edits_tree`` tells the runner to hand it a fresh tree."""
    if isinstance(config, CommandConfig):
        return CommandSolver(config)
    if isinstance(config, OpenAIConfig):
        return _ChatSolver(OpenAIReviewer(config))
    return _ChatSolver(AnthropicReviewer(config))
