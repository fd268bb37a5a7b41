"""Repository guidance files (``AGENTS.md``) as a condition's treatment.

A condition's ``guidance_files`` place texts at paths of the reviewed repository. Which of
them apply to a change is what a bot that reads root and nested guidance would read: every
file whose directory holds a changed path (``ancestors``: root and nested, the nearest wins
where they disagree), or only the nearest one per changed path (``nearest``). Each run
records the git blob SHA of every applicable file, so that the exact guidance behind a
review can be checked later; a commit SHA alone would not say which scoped file covered a
path.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..config.experiment import ConditionConfig
from .prompt import load_text

__all__ = ["GUIDANCE_NAME", "GuidanceSet", "applicable", "git_blob_sha", "load_guidance", "native_guidance"]

#: The file name review bots read as repository guidance, besides those a condition places.
GUIDANCE_NAME = "AGENTS.md"


def git_blob_sha(data: bytes) -> str:
    """The SHA git gives a file of these bytes (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _covers(guidance_path: str, changed: str) -> bool:
    folder = posixpath.dirname(guidance_path)
    return not folder or changed.startswith(folder + "/")


def applicable(files: Mapping[str, bytes], paths: Iterable[str], scope: str = "ancestors") -> dict[str, bytes]:
    """The guidance files among ``files`` (path -> bytes) that apply to the changed ``paths``."""
    out: dict[str, bytes] = {}
    for changed in paths:
        covering = [g for g in files if _covers(g, changed)]
        if scope == "nearest" and covering:
            covering = [max(covering, key=lambda g: g.count("/"))]
        for g in covering:
            out[g] = files[g]
    return dict(sorted(out.items(), key=lambda item: (item[0].count("/"), item[0])))


def native_guidance(tree: Path, paths: Iterable[str], names: Iterable[str]) -> dict[str, bytes]:
    """Guidance files the reviewed tree holds itself, in the directories of ``paths``."""
    from .packet import read_in_tree

    found: dict[str, bytes] = {}
    for changed in paths:
        folder = posixpath.dirname(changed)
        while True:
            for name in names:
                rel = posixpath.join(folder, name) if folder else name
                if rel not in found and (data := read_in_tree(tree, rel)) is not None:
                    found[rel] = data
            if not folder:
                break
            folder = posixpath.dirname(folder)
    return found


@dataclass(frozen=True)
class GuidanceSet:
    """A condition's guidance files, loaded: what is committed or sent, and how it applies."""

    files: dict[str, bytes]
    """Repository path -> the file's bytes, as placed."""
    scope: str = "ancestors"

    @property
    def sha256(self) -> str:
        """One hash of every file and where it lies (the condition's ``guidance_sha256``)."""
        listing = {path: hashlib.sha256(data).hexdigest() for path, data in self.files.items()}
        return hashlib.sha256(json.dumps({"files": listing, "scope": self.scope}, sort_keys=True).encode()).hexdigest()

    @property
    def names(self) -> set[str]:
        """File names that count as guidance in a reviewed tree."""
        return {GUIDANCE_NAME, *(posixpath.basename(p) for p in self.files)}

    def text_for(self, paths: Iterable[str]) -> str | None:
        """The applicable files' text, for kinds that take guidance in their prompt."""
        chosen = applicable(self.files, paths, self.scope)
        if not chosen:
            return None
        return "\n\n".join(f"### {path}\n\n{data.decode('utf-8').strip()}" for path, data in chosen.items())


def load_guidance(config: ConditionConfig, base: Path) -> GuidanceSet | None:
    """The condition's guidance files, read (None when it places none).

    Raises:
        UsageError: a file is missing, not UTF-8 or too large.
    """
    if not config.guidance_files:
        return None
    files = {g.path: load_text((base / g.file).resolve(), "guidance").encode("utf-8") for g in config.guidance_files}
    return GuidanceSet(files=files, scope=config.guidance_scope)
