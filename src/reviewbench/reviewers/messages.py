"""How a review packet is worded for a chat model: one system text, one user message.

Both HTTP kinds send exactly the same words, so a difference between an OpenAI-compatible
model and an Anthropic one is the model's, not the adapter's.
"""

from __future__ import annotations

import re

from ..records import ReviewPacket

__all__ = ["GUIDANCE_HEADING", "clean_text", "fenced", "system_text", "user_text", "with_guidance"]

GUIDANCE_HEADING = "## Project guidance"
_BACKTICKS = re.compile(r"`{3,}")


def clean_text(text: str) -> str:
    """``text`` as valid Unicode: bytes kept as surrogate escapes become U+FFFD.

    Diffs of non-UTF-8 files carry surrogate escapes; they cannot be encoded for the wire.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # lone surrogates that are not escapes of bytes
        return text.encode("utf-8", "replace").decode("utf-8")


def fenced(body: str, info: str = "") -> str:
    """``body`` in a Markdown code fence that nothing inside it can close."""
    # A fence longer than any backtick run inside, so a diff of Markdown cannot close it.
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{fence}{info}\n{body}{fence}"


def with_guidance(prompt: str, guidance: str | None) -> str:
    """The frozen prompt, plus the condition's guidance under a heading when there is any."""
    guidance = (guidance or "").strip()
    if not guidance:
        return prompt
    return f"{prompt.rstrip()}\n\n{GUIDANCE_HEADING}\n\n{guidance}\n"


def system_text(packet: ReviewPacket) -> str:
    """The review's system text: the prompt and the guidance (reviewers and solvers alike)."""
    return with_guidance(packet.prompt, packet.guidance)


def user_text(packet: ReviewPacket) -> str:
    """Title, changed paths, the diff, and post-patch file contents when the packet has them."""
    parts = [f"Title: {packet.title}", "", "Changed paths:"]
    parts += [f"- {path}" for path in packet.paths] or ["(none)"]
    parts += ["", "Diff:", fenced(packet.diff, "diff")]
    if packet.files:
        parts += ["", "Post-patch contents of the changed files:"]
        for path, content in packet.files.items():
            parts += ["", f"### {path}", fenced(content)]
    return "\n".join(parts) + "\n"
