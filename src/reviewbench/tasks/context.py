"""Which files of a task's base tree a chat solver is shown (``context`` of a condition).

- ``none``: no file; the problem statement alone.
- ``oracle``: the files the gold patch changes, as they are at base (files the fix creates
  do not exist yet and are skipped). An upper bound: it tells the model where the fix is.
- ``bm25``: SWE-bench's retrieval baseline. Every text file of the base tree is a document
  (its path and content, identifiers also split at ``_`` and camelCase humps), ranked by
  BM25 (the ``bm25s`` library) against the problem statement; the ``top_k`` best, ties
  broken by path so the choice is reproducible.

Files are shown whole, best first, while the total stays within ``max_chars``: a file cut
in the middle would make the model's hunks wrong. Blobs come from the object store (one
``git cat-file --batch`` per task), never from a work tree.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from ..errors import GitError
from ..git.repo import GIT
from .records import Task

__all__ = ["CONTEXTS", "MAX_FILE_BYTES", "context_files", "rank_bm25", "tokens"]

CONTEXTS = ("none", "oracle", "bm25")
MAX_FILE_BYTES = 256 * 1024
"""bm25 ignores larger files (generated data, vendored bundles)."""

_WORD = re.compile(r"[A-Za-z0-9_]+")
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def tokens(text: str) -> list[str]:
    """Lower-case words of ``text``; identifiers also give their ``_`` and camelCase parts."""
    out: list[str] = []
    for word in _WORD.findall(text):
        lower = word.lower()
        if len(lower) > 1:
            out.append(lower)
        parts = [p.lower() for piece in word.split("_") for p in _HUMP.findall(piece)]
        if len(parts) > 1:
            out.extend(p for p in parts if len(p) > 1)
    return out


def _run(repo: Path, args: list[str], stdin: bytes | None = None) -> bytes:
    proc = subprocess.run([*GIT, "-C", str(repo), *args], input=stdin, capture_output=True, check=False)
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed in {repo}: {detail[-1] if detail else 'no output'}")
    return proc.stdout


def _blobs(repo: Path, commit: str) -> list[tuple[str, str, int]]:
    """(path, blob id, size) of every regular file of ``commit``."""
    out = []
    for entry in _run(repo, ["ls-tree", "-r", "-l", "-z", "--full-tree", commit]).split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, kind, sha, size = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755"):
            out.append((path.decode("utf-8", "surrogateescape"), sha.decode(), int(size)))
    return out


def _read(repo: Path, objects: list[str]) -> list[bytes | None]:
    """Contents of ``objects`` (``sha`` or ``rev:path``) in one round trip; None if missing."""
    if not objects:
        return []
    raw = _run(repo, ["cat-file", "--batch"], ("\n".join(objects) + "\n").encode("utf-8", "surrogateescape"))
    out: list[bytes | None] = []
    pos = 0
    for _ in objects:
        end = raw.index(b"\n", pos)
        header = raw[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[-1] == b"missing":
            out.append(None)
            continue
        size = int(header[2])
        out.append(raw[pos:pos + size])
        pos += size + 1
    return out


def _text(data: bytes | None) -> str | None:
    if data is None or b"\0" in data[:8192]:
        return None  # missing or binary
    return data.decode("utf-8", "replace")


def rank_bm25(query: str, documents: dict[str, str], k: int) -> list[str]:
    """The ``k`` best paths of ``documents`` by BM25 against ``query`` (ties by path)."""
    import bm25s  # numpy-backed; imported only by runs that use it

    paths = sorted(documents)
    if not paths:
        return []
    corpus = [tokens(path) + tokens(documents[path]) for path in paths]
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    scores = retriever.get_scores(tokens(query))
    order = sorted(range(len(paths)), key=lambda i: (-float(scores[i]), paths[i]))
    return [paths[i] for i in order[:k]]


def _within(files: list[tuple[str, str]], max_chars: int) -> dict[str, str]:
    out: dict[str, str] = {}
    used = 0
    for path, content in files:
        if used + len(content) > max_chars:
            continue  # whole files or none: a later, smaller one may still fit
        out[path] = content
        used += len(content)
    return out


def context_files(repo: Path, task: Task, context: str, *, top_k: int = 5, max_chars: int = 200_000) -> dict[str, str]:
    """The base-tree files shown to a chat solver for ``task`` under ``context``.

    Raises:
        GitError: the task's base commit is not in ``repo``.
    """
    if context == "none":
        return {}
    if context == "oracle":
        contents = _read(repo, [f"{task.base_commit}:{path}" for path in task.gold_files])
        found = [(p, t) for p, c in zip(task.gold_files, contents, strict=True) if (t := _text(c)) is not None]
        return _within(found, max_chars)
    if context == "bm25":
        blobs = [(path, sha) for path, sha, size in _blobs(repo, task.base_commit) if size <= MAX_FILE_BYTES]
        contents = _read(repo, [sha for _, sha in blobs])
        documents = {path: text for (path, _), c in zip(blobs, contents, strict=True) if (text := _text(c)) is not None}
        ranked = rank_bm25(task.problem_statement, documents, top_k)
        return _within([(path, documents[path]) for path in ranked], max_chars)
    raise ValueError(f"unknown context {context!r} (known: {', '.join(CONTEXTS)})")
