"""The protocol every reviewer kind implements, and the registry that builds them.

A reviewer turns a :class:`ReviewPacket` into a :class:`ReviewReply`. It raises
:class:`ReviewerError` when no review appeared; ``transient=True`` asks the runner to retry
(429, 5xx, connection errors), honouring ``retry_after`` when the endpoint gave one.
Timeouts, retries, caching and rate limits belong to the runner, not to adapters.

A kind is one module (``reviewers/<kind>.py``) whose adapter class is registered against
its config model (``config/reviewers.py``, where the TOML union and the kind's declared
:class:`~reviewbench.config.reviewers.Capabilities` live, below every stage)::

    @register(OpenAIConfig, preflight=endpoint_preflight, endpoint=models_request)
    class OpenAIReviewer: ...

    def examples() -> KindExamples: ...

``preflight`` finds the mistakes that can be known without contacting anyone (a key
variable, a URL, a missing tree); ``endpoint`` is the one request that asks an HTTP
endpoint whether anyone is there (``reviewers/reach.py``). ``examples()`` feeds the shared
test (``tests/reviewers/test_kinds.py``), which every registered kind passes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..config.reviewers import AdapterConfig, Capabilities, kind_of
from ..errors import ReviewerError
from ..records import Finding, ReviewPacket

__all__ = ["RUN_SCOPE", "EndpointRequest", "Kind", "KindExamples", "Reviewer", "ReviewerError", "ReviewReply",
           "RunScope", "examples_of", "kind_for", "make_reviewer", "register", "registry"]


@dataclass(frozen=True)
class RunScope:
    """Which experiment and run a review belongs to, for reviewers that leave traces outside
    (the forge kinds mark their pull requests with it, to find their own after a crash)."""

    experiment: str
    """Stable across invocations on one run directory (a hash of its path)."""
    run_id: str | None = None


RUN_SCOPE: ContextVar[RunScope | None] = ContextVar("reviewbench_run_scope", default=None)
"""Set by the runner: the experiment for the whole run, the run id inside each attempt."""


@dataclass(frozen=True)
class ReviewReply:
    """What one review produced."""

    text: str
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    findings: tuple[Finding, ...] | None = None
    """Structured findings, for kinds that have them (SARIF, baselines); else parsed from text."""
    notes: tuple[str, ...] = ()
    """What the run's record should say beside the review (a connection the sandbox refused)."""


class Reviewer(Protocol):
    async def review(self, packet: ReviewPacket, tree: Path | None) -> ReviewReply:
        """Review one packet; ``tree`` is the exported post-patch tree when the condition asks."""
        ...

    async def aclose(self) -> None:
        """Release connections or processes."""
        ...


#: A kind's static checks: (config, context, keys) -> the first problem, or None.
Preflight = Callable[[Any, "str | None", bool], "str | None"]


@dataclass(frozen=True)
class EndpointRequest:
    """The request that asks an HTTP endpoint whether anyone is there (``reviewers/reach.py``)."""

    url: str
    """Its model list: costs no tokens."""
    fixed: dict[str, str]
    """The kind's own headers (authentication, API version); the config's ``headers`` are added."""
    secrets: tuple[str, ...]
    """The credentials sent, to be kept out of every message."""


def no_problem(config: Any, context: str | None, keys: bool) -> str | None:
    """The preflight of a kind with nothing to check."""
    return None


@dataclass(frozen=True)
class Kind:
    """One registered reviewer kind: its config model, its adapter and what it declares."""

    name: str
    config: type[AdapterConfig]
    """The kind's table in an experiment file (a member of ``ReviewerConfig``)."""
    adapter: type
    """Built from a config; a :class:`Reviewer`."""
    preflight: Preflight = no_problem
    endpoint: Callable[[Any], EndpointRequest] | None = None
    """The endpoint check's request, for kinds that talk to an HTTP endpoint."""

    @property
    def capabilities(self) -> Capabilities:
        """What the kind needs and does, as its config model declares."""
        return self.config.capabilities


@dataclass(frozen=True)
class KindExamples:
    """What a kind must accept and refuse, for the shared parametrised test.

    ``tables`` are reviewer tables as an experiment file writes them (with the context they
    are used with): each must load into the kind's config model, pass its preflight and
    build an adapter. ``refused`` are (table, context, words of the problem) the preflight
    must name. ``env`` is set while the examples run (the key variables they name).
    """

    tables: Sequence[tuple[dict[str, Any], str]]
    refused: Sequence[tuple[dict[str, Any], str, str]] = ()
    env: dict[str, str] = field(default_factory=dict)


_REGISTRY: dict[str, Kind] = {}


def register(*configs: type[AdapterConfig], preflight: Preflight = no_problem,
             endpoint: Callable[[Any], EndpointRequest] | None = None) -> Callable[[type], type]:  # fmt: skip
    """Class decorator: ``@register(OpenAIConfig, preflight=…)`` makes the kind of each config
    model (its ``kind`` literal) buildable by this adapter, with the checks it declares."""

    def decorate(adapter: type) -> type:
        for config in configs:
            name = kind_of(config)
            if name in _REGISTRY:
                raise ValueError(f"reviewer kind {name!r} registered twice")
            _REGISTRY[name] = Kind(name, config, adapter, preflight, endpoint)
        return adapter

    return decorate


def registry() -> dict[str, Kind]:
    """Every registered reviewer kind by name, in registration order."""
    from . import kinds  # noqa: F401  (registers every kind)

    return dict(_REGISTRY)


def kind_for(config: object) -> Kind | None:
    """The registered kind of a config (a reviewer's, a solver's or a judge's), or None."""
    return registry().get(getattr(config, "kind", ""))


def examples_of(kind: Kind) -> KindExamples:
    """The ``examples()`` of the module defining ``kind``'s adapter."""
    examples: KindExamples = importlib.import_module(kind.adapter.__module__).examples()
    return examples


def make_reviewer(config: object) -> Reviewer:
    """Build the reviewer for a config (``config.kind`` picks the class)."""
    return registry()[config.kind].adapter(config)  # type: ignore[attr-defined]
