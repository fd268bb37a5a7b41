"""What the HTTP reviewer kinds share: the pooled client, the key, and the error mapping.

Every failure becomes a :class:`ReviewerError`. Transient (the runner retries): HTTP 408,
429, 5xx and 529, connection failures, timeouts and bodies cut short. Not transient: other
4xx, bodies that are not the JSON the API promises, and configuration mistakes. Messages
name the endpoint and what it said (at most ~200 characters of the body, never headers),
and any secret that could have slipped in is replaced by ``[redacted]``.
"""

from __future__ import annotations

import json
import math
import os
import re
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from ._transport import lean_transport
from .base import ReviewerError
from .messages import clean_text

__all__ = [
    "Credentials",
    "credentials",
    "TRANSIENT_STATUS",
    "ClientPool",
    "api_key",
    "body_excerpt",
    "connect_detail",
    "endpoint_label",
    "error_in_body",
    "fail_malformed",
    "parse_retry_after",
    "post_json",
    "redact",
    "request_headers",
    "usage_int",
]

TRANSIENT_STATUS = frozenset({408, 429, *range(500, 600)})
"""Statuses worth retrying; 529 is Anthropic's "overloaded"."""

EXCERPT_CHARS = 200
_SPACES = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class ClientPool:
    """The reviewer's connections: small pooled clients, up to 256 connections in all.

    One :class:`httpx.AsyncClient` with dozens of busy connections spends more CPU on its
    pool's bookkeeping than on HTTP (httpcore 1.0's ``_assign_requests_to_connections``
    does work quadratic in the pool's size on every request), so requests go to the first
    of up to 32 clients of 8 connections that has one free. Connections stay alive between
    reviews for reuse. No read timeout: the runner bounds every call with its own timeout
    and cancels it; the connect timeout only stops a dead host from holding a slot forever.
    Clients are created lazily, inside the event loop that uses them.
    """

    SHARD_CONNECTIONS = 8
    MAX_SHARDS = 32

    def __init__(self) -> None:
        self._clients: list[httpx.AsyncClient] = []
        self._load: list[int] = []
        self._tls: ssl.SSLContext | None = None

    def _new_client(self) -> httpx.AsyncClient:
        size = self.SHARD_CONNECTIONS
        if self._tls is None:
            # Loading the CA bundle costs ~30 ms: once per pool, not once per shard.
            self._tls = ssl.create_default_context()
        limits = httpx.Limits(max_connections=size, max_keepalive_connections=size, keepalive_expiry=30.0)
        return httpx.AsyncClient(
            transport=lean_transport(verify=self._tls, limits=limits),
            timeout=httpx.Timeout(None, connect=60.0),
            follow_redirects=False,
        )

    def _pick(self) -> int:
        for index, load in enumerate(self._load):
            if load < self.SHARD_CONNECTIONS:
                return index
        if len(self._clients) < self.MAX_SHARDS:
            self._clients.append(self._new_client())
            self._load.append(0)
            return len(self._clients) - 1
        return min(range(len(self._load)), key=self._load.__getitem__)  # all busy: queue

    async def post(self, url: str, *, content: bytes, headers: httpx.Headers) -> httpx.Response:
        index = self._pick()
        self._load[index] += 1
        try:
            return await self._clients[index].post(url, content=content, headers=headers)
        finally:
            self._load[index] -= 1

    @property
    def size(self) -> int:
        """How many clients exist (for tests)."""
        return len(self._clients)

    async def aclose(self) -> None:
        clients, self._clients, self._load = self._clients, [], []
        for client in clients:
            await client.aclose()


def api_key(variable: str | None, kind: str) -> str | None:
    """The key held by environment variable ``variable``; None when the config names none.

    Read at every call and never stored, so it cannot end up in a repr or a pickle. Errors
    name the variable, never its value.
    """
    if not variable:
        return None
    value = os.environ.get(variable)
    if value is None:
        raise ReviewerError(
            f"{kind} reviewer: environment variable {variable} is not set; export the API key "
            f"in it, or set api_key_env to an empty string for an endpoint without keys", sent=False)
    value = value.strip()
    if not value:
        raise ReviewerError(f"{kind} reviewer: environment variable {variable} is empty", sent=False)
    if not value.isascii() or not value.isprintable():
        raise ReviewerError(
            f"{kind} reviewer: environment variable {variable} holds characters that cannot "
            f"be sent in an HTTP header (non-ASCII or control characters)", sent=False)
    return value


@dataclass(frozen=True)
class Credentials:
    """What one request sends to prove who asks, read from the environment just now."""

    headers: dict[str, str]
    """The key's header (``api_key_env``) and those of ``header_env``."""
    secrets: tuple[str, ...]
    """Their values, to be kept out of every message."""


def credentials(config: Any, kind: str, key_header: str, key_prefix: str = "") -> Credentials:
    """The key of ``config.api_key_env`` as ``key_header`` (``key_prefix`` + key), and each
    ``config.header_env`` header from its variable; errors name variables, never values."""
    headers = {name: value for name, variable in config.header_env.items() if (value := api_key(variable, kind))}
    key = api_key(config.api_key_env, kind)
    if key:
        headers[key_header] = key_prefix + key
    return Credentials(headers, tuple(v for v in {key, *headers.values()} if v))


def request_headers(kind: str, extra: dict[str, str], fixed: dict[str, str]) -> httpx.Headers:
    """The configured ``extra`` headers, then ``fixed`` ones (auth, version) over them."""
    try:
        headers = httpx.Headers(extra)
        for name, value in fixed.items():
            headers[name] = value
    except (UnicodeError, ValueError, TypeError) as exc:
        raise ReviewerError(
            f"{kind} reviewer: a configured header cannot be sent ({type(exc).__name__}); "
            f"header names and values must be ASCII", sent=False) from None
    return headers


def redact(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return text


def endpoint_label(url: str) -> str:
    """``scheme://host[:port]/path`` of ``url``: no credentials, query or fragment."""
    try:
        parsed = httpx.URL(url)
    except Exception:  # noqa: BLE001 - an unusable URL is reported by the request itself
        return "<invalid URL>"
    port = f":{parsed.port}" if parsed.port is not None else ""
    return f"{parsed.scheme}://{parsed.host}{port}{parsed.path}"


def body_excerpt(text: str, secrets: tuple[str, ...] = ()) -> str:
    """At most ~200 characters of a response body, on one line."""
    text = _SPACES.sub(" ", _CONTROL.sub(" ", redact(text, secrets))).strip()
    if not text:
        return "(empty body)"
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


def parse_retry_after(headers: httpx.Headers, now: datetime | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        value = float(raw)
    except ValueError:
        pass
    else:
        return value if math.isfinite(value) and value >= 0 else None
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it was raised from (anyio wraps the socket's error twice)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def connect_detail(exc: httpx.HTTPError, connect_s: float | None = None) -> str:
    """Why no connection was made, in words: refused, host not found, or the exception."""
    chain = _causes(exc)
    text = str(exc)
    lowered = " ".join(str(e) for e in chain).lower()
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or "refused" in lowered:
        return "connection refused"
    if "name or service not known" in lowered or "nodename nor servname" in lowered or "name resolution" in lowered \
            or "no address associated" in lowered or "getaddrinfo" in lowered:  # fmt: skip
        return "host not found (DNS)"
    if isinstance(exc, httpx.ConnectTimeout):
        return f"no connection within {connect_s:g} s" if connect_s else "no connection (connect timeout)"
    return f"cannot connect ({type(exc).__name__}: {text or 'no detail'})"


def _encode(body: dict[str, Any]) -> bytes:
    return clean_text(json.dumps(body, ensure_ascii=False, allow_nan=False)).encode("utf-8")


async def post_json(
    client: ClientPool,
    url: str,
    *,
    body: dict[str, Any],
    headers: httpx.Headers,
    kind: str,
    secrets: tuple[str, ...] = (),
) -> dict[str, Any]:
    """POST ``body`` as JSON and return the JSON object of a 2xx answer.

    Raises:
        ReviewerError: for anything else, transient or not as the module docstring says.
    """
    where = endpoint_label(url)
    try:
        content = _encode(body)
    except ValueError as exc:  # NaN/inf in a sampling parameter
        raise ReviewerError(f"{kind} request cannot be encoded as JSON: {exc}", sent=False) from None
    send_headers = httpx.Headers(headers)
    send_headers["content-type"] = "application/json"
    try:
        response = await client.post(url, content=content, headers=send_headers)
    except httpx.ConnectTimeout as exc:  # no connection within the connect timeout: nothing was sent
        raise ReviewerError(
            f"{kind} endpoint {where}: no connection ({type(exc).__name__})",
            transient=True,
            sent=False,
            connection=True,
        ) from None
    except httpx.TimeoutException as exc:
        raise ReviewerError(
            f"{kind} endpoint {where}: timed out ({type(exc).__name__})", transient=True
        ) from None
    except httpx.ConnectError as exc:  # refused, unreachable: nothing was sent
        detail = redact(connect_detail(exc), secrets)
        raise ReviewerError(
            f"{kind} endpoint {where}: connection failed ({detail})",
            transient=True,
            sent=False,
            connection=True,
        ) from None
    except (
        httpx.NetworkError,
        httpx.RemoteProtocolError,
        httpx.ProxyError,
        httpx.DecodingError,  # a compressed body cut short
    ) as exc:
        detail = redact(str(exc), secrets) or "no detail"
        raise ReviewerError(
            f"{kind} endpoint {where}: connection failed or answer cut short "
            f"({type(exc).__name__}: {detail})",
            transient=True,
        ) from None
    except httpx.HTTPError as exc:  # bad URL, unsupported scheme, unsendable request
        raise ReviewerError(
            f"{kind} endpoint {where}: request cannot be sent ({type(exc).__name__}); "
            f"check base_url and headers",
            sent=False,
        ) from None
    except (UnicodeError, ValueError, TypeError) as exc:  # e.g. a non-ASCII header value
        raise ReviewerError(
            f"{kind} endpoint {where}: request cannot be sent ({type(exc).__name__}); "
            f"check base_url and headers",
            sent=False,
        ) from None

    status = response.status_code
    if not 200 <= status < 300:
        transient = status in TRANSIENT_STATUS
        raise ReviewerError(
            f"{kind} endpoint {where} answered HTTP {status}: "
            f"{body_excerpt(response.text, secrets)}",
            transient=transient,
            retry_after=parse_retry_after(response.headers) if transient else None,
        )
    try:
        data = json.loads(response.content)
    except (ValueError, RecursionError):
        raise ReviewerError(
            f"{kind} endpoint {where} answered HTTP {status} with a body that is not JSON: "
            f"{body_excerpt(response.text, secrets)}"
        ) from None
    if not isinstance(data, dict):
        raise ReviewerError(
            f"{kind} endpoint {where} answered HTTP {status} with JSON that is not an object: "
            f"{body_excerpt(response.text, secrets)}"
        )
    return data


def fail_malformed(
    kind: str, url: str, what: str, data: Any, secrets: tuple[str, ...]
) -> ReviewerError:
    """The error for a JSON answer that lacks a field the API promises."""
    try:
        shown = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(data)
    return ReviewerError(
        f"{kind} endpoint {endpoint_label(url)} answered without {what}: {body_excerpt(shown, secrets)}"
    )


def usage_int(usage: Any, key: str) -> int | None:
    """A token count from a usage object; None when absent or not a count."""
    if not isinstance(usage, dict):
        return None
    value = usage.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


_TRANSIENT_ERROR_TYPES = frozenset(
    {
        "rate_limit_error",
        "rate_limit_exceeded",
        "overloaded_error",
        "api_error",
        "server_error",
        "timeout_error",
        "service_unavailable",
    }
)


def error_in_body(
    kind: str, url: str, data: dict[str, Any], secrets: tuple[str, ...]
) -> ReviewerError | None:
    """The error some gateways report with HTTP 200 (``{"error": {...}}``); None if absent."""
    error = data.get("error")
    if error is None:
        return None
    if not isinstance(error, dict):
        error = {"message": error}
    code = error.get("code")
    kind_of = error.get("type")
    transient = (
        isinstance(code, int) and not isinstance(code, bool) and code in TRANSIENT_STATUS
    ) or (isinstance(kind_of, str) and kind_of in _TRANSIENT_ERROR_TYPES)
    message = error.get("message")
    detail = (
        message if isinstance(message, str) else json.dumps(error, ensure_ascii=False, default=str)
    )
    label = " ".join(str(x) for x in (kind_of, code) if x is not None)
    shown = f" ({body_excerpt(label, secrets)})" if label else ""
    return ReviewerError(
        f"{kind} endpoint {endpoint_label(url)} answered with an error{shown}: "
        f"{body_excerpt(detail, secrets)}",
        transient=transient,
    )
