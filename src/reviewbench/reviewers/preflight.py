"""Configuration mistakes found before a single run is planned (one usage error, exit 2).

Without this a missing key variable or a ``sarif`` condition without a tree surfaced as N
``failed`` runs, exit 0 and "N requests sent" although none were. What is checked here can
be known without contacting anyone: key variables, URLs, header values, context needs.
"""

from __future__ import annotations

import os

import httpx

__all__ = ["preflight"]


def _key_problem(variable: str | None) -> str | None:
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


def _url_problem(url: str) -> str | None:
    try:
        parsed = httpx.URL(url)
    except Exception:  # noqa: BLE001 - any unparsable URL is the same mistake
        return f"base_url {url!r} is not a URL"
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return f"base_url {url!r} must be an http:// or https:// URL with a host"
    return None


def _header_problem(headers: dict[str, str]) -> str | None:
    for name, value in headers.items():
        if not (name.isascii() and value.isascii() and name.isprintable() and value.isprintable()):
            return f"header {name.encode('ascii', 'backslashreplace').decode()!s} must be printable ASCII"
    return None


def preflight(config: object, context: str | None, *, keys: bool = True) -> str | None:
    """The first problem of an adapter config used with ``context``, or None.

    Args:
        config: a reviewer or solver config (``kind`` picks the checks).
        context: the condition's context (``diff``, ``files``, ``tree``; None for solvers).
        keys: also check the key variables of this machine's environment (not when
            registering: the machine that runs may hold the keys, the one that registers not).
    """
    kind = getattr(config, "kind", None)
    if kind in ("openai", "anthropic"):
        return ((_key_problem(config.api_key_env) if keys else None)  # type: ignore[attr-defined]
                or _url_problem(config.base_url)  # type: ignore[attr-defined]
                or _header_problem(config.headers))  # type: ignore[attr-defined]  # fmt: skip
    if kind in ("github", "gitea"):
        return ((_key_problem(getattr(config, "token_env", None)) if keys else None)
                or _url_problem(getattr(config, "api_url", "")))  # fmt: skip
    if kind == "sarif" and context is not None and context != "tree":
        return 'the sarif reviewer runs an analyser on the post-patch tree: set context = "tree"'
    if kind in ("command", "sarif") and not str(getattr(config, "command", "")).strip():
        return "command is empty"
    return None
