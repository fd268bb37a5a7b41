"""Configuration mistakes found before a single run is planned (one usage error, exit 2).

Without this a missing key variable or a ``sarif`` condition without a tree surfaced as N
``failed`` runs, exit 0 and "N requests sent" although none were. What is checked here can
be known without contacting anyone: key variables, URLs, header values, context needs. The
pieces are here; each kind's module declares which it uses (``register(..., preflight=...)``).
"""

from __future__ import annotations

import os
from typing import Any

import httpx

from .base import kind_for

__all__ = ["command_preflight", "endpoint_preflight", "header_problem", "key_problem", "preflight", "url_problem"]


def key_problem(variable: str | None) -> str | None:
    if not variable:
        return None
    value = os.environ.get(variable)
    if value is None:
        return (f"environment variable {variable} is not set; export the API key in it, or set "
                "api_key_env = \"\" for an endpoint without keys")  # fmt: skip
    value = value.strip()
    if not value:
        return f"environment variable {variable} is empty"
    if not value.isascii() or not value.isprintable():
        return f"environment variable {variable} holds characters that cannot be sent in an HTTP header"
    return None


def url_problem(url: str) -> str | None:
    try:
        parsed = httpx.URL(url)
    except Exception:  # noqa: BLE001 - any unparsable URL is the same mistake
        return f"base_url {url!r} is not a URL"
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return f"base_url {url!r} must be an http:// or https:// URL with a host"
    return None


def header_problem(headers: dict[str, str]) -> str | None:
    for name, value in headers.items():
        if not (name.isascii() and value.isascii() and name.isprintable() and value.isprintable()):
            return f"header {name.encode('ascii', 'backslashreplace').decode()!s} must be printable ASCII"
    return None


def endpoint_preflight(config: Any, context: str | None, keys: bool) -> str | None:
    """The preflight of a chat endpoint kind (openai, anthropic): key, URL, headers (the
    variables of ``header_env`` are keys too)."""
    variables = (config.api_key_env, *config.header_env.values()) if keys else ()
    return (next((p for v in variables if (p := key_problem(v))), None)
            or url_problem(config.base_url)
            or header_problem({**config.headers, **dict.fromkeys(config.header_env, "")}))  # fmt: skip


def command_preflight(config: Any, context: str | None, keys: bool) -> str | None:
    """The preflight of a kind that runs a command line: it must say something."""
    return "command is empty" if not str(config.command).strip() else None


def preflight(config: object, context: str | None, *, keys: bool = True) -> str | None:
    """The first problem of an adapter config used with ``context``, or None.

    Each kind declares its own checks where it registers (``reviewers/<kind>.py``).

    Args:
        config: a reviewer or solver config (``kind`` picks the checks).
        context: the condition's context (``diff``, ``files``, ``tree``; None for solvers).
        keys: also check the key variables of this machine's environment (not when
            registering: the machine that runs may hold the keys, the one that registers not).
    """
    kind = kind_for(config)
    return kind.preflight(config, context, keys) if kind is not None else None
