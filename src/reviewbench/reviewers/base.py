"""The protocol every reviewer kind implements, and the registry that builds them.

A reviewer turns a :class:`ReviewPacket` into a :class:`ReviewReply`. It raises
:class:`ReviewerError` when no review appeared; ``transient=True`` asks the runner to retry
(429, 5xx, connection errors), honouring ``retry_after`` when the endpoint gave one.
Timeouts, retries, caching and rate limits belong to the runner, not to adapters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..errors import ReviewerError
from ..records import Finding, ReviewPacket

__all__ = ["Reviewer", "ReviewerError", "ReviewReply", "make_reviewer", "register"]


@dataclass(frozen=True)
class ReviewReply:
    """What one review produced."""

    text: str
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    findings: tuple[Finding, ...] | None = None
    """Structured findings, for kinds that have them (SARIF, baselines); else parsed from text."""


class Reviewer(Protocol):
    async def review(self, packet: ReviewPacket, tree: Path | None) -> ReviewReply:
        """Review one packet; ``tree`` is the exported post-patch tree when the condition asks."""
        ...

    async def aclose(self) -> None:
        """Release connections or processes."""
        ...


_REGISTRY: dict[str, Callable[..., Reviewer]] = {}


def register(kind: str) -> Callable[[Callable[..., Reviewer]], Callable[..., Reviewer]]:
    """Class decorator: ``@register("openai")`` makes the kind buildable from its config."""

    def decorate(factory: Callable[..., Reviewer]) -> Callable[..., Reviewer]:
        _REGISTRY[kind] = factory
        return factory

    return decorate


def make_reviewer(config: object) -> Reviewer:
    """Build the reviewer for a config (``config.kind`` picks the class)."""
    from . import kinds  # noqa: F401  (registers every kind)

    return _REGISTRY[config.kind](config)  # type: ignore[attr-defined]
