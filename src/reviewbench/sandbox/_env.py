"""The environment a sandboxed command sees: scrubbed of secrets, or built from nothing."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["SECRET_PATTERNS", "minimal_env", "scrubbed_env"]

SECRET_PATTERNS = ("*_KEY", "*APIKEY", "*TOKEN", "*_SECRET", "*_SECRETS", "*PASSWORD*", "*_PASS", "*_PASSWD",
                   "*_PWD", "*_CREDENTIAL", "*_CREDENTIALS", "*_PAT", "*_JWT", "*_AUTH", "*_DSN", "*COOKIE*")
"""Variable names never passed to test code unless listed (``[validate] env``)."""

#: A URL with a password (``postgres://app:pw@db/app``, ``http://user:pw@proxy:3128``),
#: whatever the variable's name.
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@")


def _secret(name: str, extra: Iterable[str], value: str = "") -> bool:
    upper = name.upper()
    return (upper in {n.upper() for n in extra} or any(fnmatch.fnmatchcase(upper, p) for p in SECRET_PATTERNS)
            or _URL_PASSWORD.search(value) is not None)  # fmt: skip


def scrubbed_env(
    base: Mapping[str, str] | None = None, *, allow: Iterable[str] = (), deny: Iterable[str] = ()
) -> dict[str, str]:
    """``base`` (default: this process's environment) without secrets.

    Args:
        allow: names kept even if they look secret (the user listed them).
        deny: more names to drop (every ``api_key_env``/``token_env`` the caller knows).
    """
    source = os.environ if base is None else base
    allowed = set(allow)
    deny = tuple(deny)
    return {k: v for k, v in source.items() if k in allowed or not _secret(k, deny, v)}


def minimal_env(home: Path, tmp: Path, listed: Iterable[str] = (),
                base: Mapping[str, str] | None = None) -> dict[str, str]:  # fmt: skip
    """Only PATH, LANG, HOME, TMPDIR and the ``listed`` variables that are set."""
    source = os.environ if base is None else base
    env = {
        "PATH": source.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": source.get("LANG", "C.UTF-8"),
        "HOME": str(home),
        "TMPDIR": str(tmp),
    }
    for name in listed:
        if name in source:
            env[name] = source[name]
    return env
