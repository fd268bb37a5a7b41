"""Frozen prompts: versioned files whose SHA-256 is recorded on every run."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import UsageError

__all__ = ["BUILTIN_PROMPTS", "MAX_TEXT_BYTES", "Prompt", "load_prompt", "load_text"]

BUILTIN_PROMPTS = ("default",)
#: Prompt and guidance files are sent with every request: past this size a file is a
#: mistake (a log, a binary, ``/dev/zero``), not instructions.
MAX_TEXT_BYTES = 1 << 20


@dataclass(frozen=True)
class Prompt:
    """A prompt template; ``{language}`` is filled per case."""

    name: str
    template: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.template.encode()).hexdigest()

    def render(self, language: str | None) -> str:
        return self.template.replace("{language}", language or "software")


def load_text(path: Path, what: str) -> str:
    """A prompt or guidance file: a regular UTF-8 file of at most :data:`MAX_TEXT_BYTES`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise UsageError(f"{what} file {path} does not exist") from None
    except OSError as exc:
        raise UsageError(f"{what} file {path} cannot be read: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise UsageError(f"{what} file {path} is not a regular file")
        try:
            data = handle.read(MAX_TEXT_BYTES + 1)
        except OSError as exc:
            raise UsageError(f"{what} file {path} cannot be read: {exc.strerror}") from None
    if len(data) > MAX_TEXT_BYTES:
        raise UsageError(f"{what} file {path} is larger than {MAX_TEXT_BYTES >> 20} MiB; "
                         "is it the right file?")  # fmt: skip
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} file {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def load_prompt(spec: str, base: Path, package: str = "reviewbench.review") -> Prompt:
    """A built-in prompt by id (``default``) or a file, relative to ``base``.

    ``package`` holds the built-in prompts (``prompts/ID.txt``): review prompts by default,
    ``reviewbench.tasks`` for fix-task prompts.
    """
    if spec in BUILTIN_PROMPTS:
        text = resources.files(package).joinpath("prompts", f"{spec}.txt").read_text("utf-8")
        return Prompt(spec, text)
    path = (base / spec).resolve()
    return Prompt(str(path), load_text(path, "prompt"))
