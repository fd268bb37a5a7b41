"""Credentials in what a reviewer wrote: a safety stop, not a finding.

A reviewer's output is stored, exported and shown to people. One that holds a key in play
(the value of a variable its table names) or a string shaped like a common credential is
never kept: the experiment stops so that the key can be revoked, and the output is dropped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

__all__ = ["LEAK_PATTERNS", "find_leak", "key_values"]

#: Common credential formats, with what to call them in a message (never the match itself).
LEAK_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b")),
    ("an API key (sk-…)", re.compile(r"\bsk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_-]{32,}")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    ("a Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
)
#: Shorter values are too likely to occur by chance to stop an experiment for.
_MIN_VALUE = 8


def key_values(config: object) -> list[str]:
    """The values of the environment variables an adapter's table names (keys, tokens, env)."""
    names = [getattr(config, field, None) for field in ("api_key_env", "token_env")]
    names += list(getattr(config, "env", None) or ())
    return [value for name in names if name and (value := os.environ.get(str(name)))]


def find_leak(texts: Iterable[str | None], values: Iterable[str] = ()) -> str | None:
    """What kind of credential ``texts`` hold, or None (the credential itself is never named)."""
    values = [v for v in values if len(v) >= _MIN_VALUE]
    for text in texts:
        if not text:
            continue
        if any(v in text for v in values):
            return "the value of a key variable in play"
        for label, pattern in LEAK_PATTERNS:
            if pattern.search(text):
                return label
    return None
