"""One request to each HTTP endpoint before any run is planned: is anyone there, and is the
key accepted?

Without it, an experiment pointed at a local server that is not running retried every run
with backoff and recorded each as ``failed``, minutes later, with the reason only in the run
store. The check asks the endpoint's model list (``GET {base_url}/models`` for the OpenAI
kind, ``GET {base_url}/v1/models`` for Anthropic's), which costs no tokens, and refuses only
what no run could survive: no connection (refused, host not found, no answer to connect
within :data:`CONNECT_TIMEOUT_S`) and HTTP 401 (the key is rejected). Any other answer —
a 404 from a server without a model list, a 5xx — means someone is there: the runs decide.

Which kinds have an endpoint, and the request that checks it, each kind declares where it
registers (``register(..., endpoint=...)`` in ``reviewers/<kind>.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import httpx

from ._http import body_excerpt, connect_detail, endpoint_label, redact, request_headers
from .base import ReviewerError, kind_for

__all__ = ["CONNECT_TIMEOUT_S", "endpoint_problem", "endpoint_problems"]

#: How long the check waits for a connection (a host that drops packets never refuses).
CONNECT_TIMEOUT_S = 5.0
#: How long it waits for the answer once connected (slow is not absent: no refusal then).
ANSWER_TIMEOUT_S = 10.0


async def endpoint_problem(config: object) -> str | None:
    """Why ``config``'s endpoint cannot serve any run, or None (also for kinds without one).

    One GET, never retried. The message names the kind, the endpoint (no credentials) and
    the cause, and never the key.
    """
    declared = kind_for(config)
    if declared is None or declared.endpoint is None:
        return None
    kind = declared.name
    try:
        request = declared.endpoint(config)
        url, secrets = request.url, request.secrets
        headers = request_headers(kind, config.headers, request.fixed)  # type: ignore[attr-defined]
    except ReviewerError as exc:  # the static checks (preflight) name these first
        return str(exc)
    where = endpoint_label(url.rsplit("/", 1)[0])
    timeout = httpx.Timeout(ANSWER_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    try:
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
            response = await client.get(url, headers=headers)
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        detail = redact(connect_detail(exc, CONNECT_TIMEOUT_S), secrets)
        return f"{kind} endpoint {where} is unreachable: {detail}"
    except httpx.HTTPError:
        return None  # connected, then slow or cut short: someone is there, the runs will tell
    if response.status_code == 401:
        variable = getattr(config, "api_key_env", None)
        which = f"the key in {variable}" if variable else "a request without a key"
        return (f"{kind} endpoint {where} rejected {which} (HTTP 401: "
                f"{body_excerpt(response.text, secrets)})")  # fmt: skip
    return None


def endpoint_problems(configs: Sequence[tuple[str, object]]) -> list[tuple[str, str]]:
    """(name, problem) of each named config whose endpoint cannot serve a run, checked at
    once; an endpoint shared by several conditions is asked once."""

    async def check() -> list[tuple[str, str]]:
        seen: dict[tuple, asyncio.Task[str | None]] = {}
        pending: list[tuple[str, asyncio.Task[str | None]]] = []
        for name, config in configs:
            declared = kind_for(config)
            if declared is None or declared.endpoint is None:
                continue
            same = (config.kind, config.base_url, config.api_key_env,  # type: ignore[attr-defined]
                    tuple(sorted(config.headers.items())),  # type: ignore[attr-defined]
                    tuple(sorted(config.header_env.items())))  # type: ignore[attr-defined]  # fmt: skip
            if same not in seen:
                seen[same] = asyncio.ensure_future(endpoint_problem(config))
            pending.append((name, seen[same]))
        return [(name, problem) for name, task in pending if (problem := await task)]

    return asyncio.run(check())
