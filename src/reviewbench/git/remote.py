"""A repository's remote as reviewbench records and shows it.

``remote.origin.url`` of a CI checkout often carries a credential: GitLab CI clones from
``https://gitlab-ci-token:TOKEN@host/…``, GitHub tokens are accepted as the user name. A
corpus is shared, so the recorded remote keeps where the code lives and drops who asked.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["project_name", "public_remote"]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def public_remote(url: str | None) -> str | None:
    """``url`` without user name, password, query or fragment (any may be a token); an
    scp-like ``user@host:path`` keeps its user (ssh's login name, never a secret)."""
    if not url:
        return None
    if not _URL.match(url):
        return url
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
    except ValueError:  # an unparseable URL: keep nothing that might hold a secret
        return None
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def project_name(path: str, remote: str | None) -> str:
    """The project's short name, for titles and ids: the last part of a URL remote
    (``git@host:o/name.git`` → ``name``), else of the checkout's folder; never a local path."""
    url = public_remote(remote) if remote and ("://" in remote or "@" in remote) else None
    if url and url.startswith("file://"):
        url = None
    name = (url or path).rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name)[:40] or "repo"
