"""Any executable as a reviewer: CLI agents, custom scripts, wrappers around other tools.

The command line runs through the shell with the packet as one JSON object on stdin::

    {"case_id", "title", "diff", "paths", "prompt", "guidance", "files"}

and ``REVIEWBENCH_TREE`` naming the exported post-patch tree when the condition asks for
one (the command then also runs inside it, read-only; the packet then also has
``tree_note``, what the tree's REVIEW.md says). Whatever it prints on stdout is the
review text, parsed like a model's, read up to ``max_output_bytes`` (past it the command is
killed and the run is ``invalid``). A non-zero exit means no review appeared. It runs in
the shared sandbox (``reviewbench.sandbox.AgentBox``): no corpus, gold, run directory or
home in sight, only the variables the config lists; it and everything it starts are
killed when it exits or the runner cancels the review.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..config.reviewers import CommandConfig
from ..records import ReviewPacket
from .base import KindExamples, ReviewerError, ReviewReply, register
from .messages import clean_text
from .preflight import command_preflight
from .proc import (
    agent_box,
    capped_stdout,
    exit_label,
    failure_hint,
    network_notes,
    packet_json,
    stderr_tail,
)

__all__ = ["CommandReviewer", "examples"]


@register(CommandConfig, preflight=command_preflight)
class CommandReviewer:
    """Runs ``config.command`` once per review; stdout is the review."""

    def __init__(self, config: CommandConfig) -> None:
        self.config = config
        self.box = agent_box(config, f"command reviewer {config.command!r}")

    async def review(self, packet: ReviewPacket, tree: Path | None) -> ReviewReply:
        payload = clean_text(json.dumps(packet_json(packet), ensure_ascii=False)).encode("utf-8")
        try:
            result = await self.box.run(self.config.command, stdin=payload, tree=tree)
        except OSError as exc:
            raise ReviewerError(
                f"command reviewer {self.config.command!r} could not start: {exc.strerror or exc}"
            ) from None
        capped_stdout(result, self.box, f" on case {packet.case_id}")
        if result.returncode != 0:
            raise ReviewerError(
                f"command reviewer {self.config.command!r} {exit_label(result.returncode)}"
                f"{failure_hint(result.returncode, self.box, result.stderr, result.refused)} "
                f"on case {packet.case_id}; stderr: {stderr_tail(result.stderr)}"
            )
        return ReviewReply(text=result.stdout.decode("utf-8", "replace"), notes=network_notes(result))

    async def aclose(self) -> None:
        pass


def examples() -> KindExamples:
    return KindExamples(
        tables=[({"kind": "command", "command": "cat"}, "diff"),
                ({"kind": "command", "command": "my-agent --strict", "env": ["RB_EXAMPLE_KEY"]}, "tree")],
        refused=[({"kind": "command", "command": "  "}, "diff", "command is empty")],
        env={"RB_EXAMPLE_KEY": "sk-example"},
    )  # fmt: skip
