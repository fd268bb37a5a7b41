"""Frozen prompts: versioned files whose SHA-256 is recorded on every run (SPEC 6)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import UsageError

__all__ = ["BUILTIN_PROMPTS", "Prompt", "load_prompt", "load_text"]

BUILTIN_PROMPTS = ("default",)


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
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{what} file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what} file {path} cannot be read: {exc}") from None


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
