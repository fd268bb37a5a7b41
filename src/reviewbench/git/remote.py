"""A repository's remote as reviewbench records and shows it.

``remote.origin.url`` of a CI checkout often carries a credential: GitLab CI clones from
``https://gitlab-ci-token:TOKEN@host/…``, GitHub tokens are accepted as the user name. A
corpus is shared, so the recorded remote keeps where the code lives and drops who asked.
"""

from __future__ import annotations

import re

from ..records import public_remote

__all__ = ["project_name", "public_remote"]


def project_name(path: str, remote: str | None) -> str:
    """The project's short name, for titles and ids: the last part of a URL remote
    (``git@host:o/name.git`` → ``name``), else of the checkout's folder; never a local path."""
    url = public_remote(remote) if remote and ("://" in remote or "@" in remote) else None
    if url and url.startswith("file://"):
        url = None
    name = (url or path).rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name)[:40] or "repo"
