"""The experiment file (SPEC 7): which corpus, which conditions, how many repetitions.

An experiment is TOML; its JSON Schema (``reviewbench schema experiment``) is generated
from :class:`ExperimentConfig`. Errors name the line (TOML syntax) or the field (values).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import UsageError
from ..reviewers import ReviewerConfig

__all__ = ["TEMPLATE", "ConditionConfig", "Experiment", "ExperimentConfig", "load_experiment", "read_config"]


class ConditionConfig(BaseModel):
    """One fixed way of reviewing: reviewer + prompt + guidance + context."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="Short label, e.g. 'A'.")
    reviewer: ReviewerConfig
    prompt: str = Field(default="default", description="Built-in prompt id, or a file path.")
    guidance: str | None = Field(default=None, description="File whose text is given to the reviewer.")
    context: Literal["diff", "files", "tree"] = Field(
        default="diff", description="diff only; + post-patch files; + exported post-patch tree."
    )
    concurrency: int = Field(default=4, ge=1, le=1024, description="Runs in flight at once.")
    rate_per_minute: float | None = Field(default=None, gt=0, description="Request starts per minute.")
    timeout_s: float = Field(default=120.0, gt=0, description="Per attempt.")
    retries: int = Field(default=4, ge=0, le=20, description="Retries of transient errors.")

    @model_validator(mode="after")
    def _forge_needs_a_tree(self) -> ConditionConfig:
        """A forge reviewer pushes the exported tree and waits for its bot within the attempt."""
        reviewer = self.reviewer
        if reviewer.kind in ("github", "gitea"):
            if self.context != "tree":
                raise ValueError(f'a {reviewer.kind} reviewer pushes the case\'s tree: set context = "tree"')
            if self.timeout_s <= reviewer.timeout_s:  # type: ignore[union-attr]
                raise ValueError(f"timeout_s ({self.timeout_s:g}) must exceed the reviewer's own timeout_s "
                                 f"({reviewer.timeout_s:g}), or the attempt is cut before the bot is given up on")  # type: ignore[union-attr]  # fmt: skip
        return self


class ExperimentConfig(BaseModel):
    """Contents of an experiment TOML file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    corpus: str = Field(description="Corpus directory, relative to the experiment file.")
    repeats: int = Field(default=3, ge=1, le=100)
    seed: int = Field(default=0, description="Seeds the interleaved run order.")
    rename: bool = Field(default=True, description="Also review rename variants in the corpus.")
    cutoff: str | None = Field(
        default=None,
        pattern=r"^\d{4}-\d{2}-\d{2}$",
        description="Contamination cut-off (YYYY-MM-DD): scores split cases before and after it. "
        "Registered with the experiment file.",
    )
    condition: list[ConditionConfig] = Field(min_length=1)

    @field_validator("condition")
    @classmethod
    def _unique_names(cls, conditions: list) -> list:
        return unique_names(conditions)


def unique_names(conditions: list[Any]) -> list[Any]:
    """Refuse two conditions of one name: runs, scores and caches are keyed on it."""
    names = [c.name for c in conditions]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"condition names must be unique; repeated: {', '.join(duplicates)}")
    return conditions


@dataclass(frozen=True)
class LoadedFile:
    """A loaded experiment file: its config, where it lives, and a hash of what it says."""

    config: BaseModel
    path: Path

    @property
    def base(self) -> Path:
        return self.path.parent

    @property
    def sha256(self) -> str:
        canonical = json.dumps(self.config.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class Experiment(LoadedFile):
    """A loaded review experiment."""

    config: ExperimentConfig

    @property
    def corpus_path(self) -> Path:
        return (self.base / self.config.corpus).resolve()

    def inputs_sha256(self) -> str:
        """SHA-256 of what each condition's prompt and guidance files say.

        The experiment's own hash covers only the file names it gives; a run directory
        also records this, so that an edited prompt or guidance file is never mixed into
        the runs of its earlier text.
        """
        from .prompt import load_prompt, load_text

        parts = []
        for condition in self.config.condition:
            guidance = (
                load_text((self.base / condition.guidance).resolve(), "guidance") if condition.guidance else None
            )
            parts.append({"condition": condition.name, "prompt": load_prompt(condition.prompt, self.base).sha256,
                          "guidance": None if guidance is None else hashlib.sha256(guidance.encode()).hexdigest()})  # fmt: skip
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _field(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("openai", "anthropic", "command", "sarif", "silent", "flag_all", "github", "gitea"):
            continue  # the union's branch name adds nothing for the user
        else:
            out += f".{part}" if out else str(part)
    return out


def read_config(path: Path, model: type[BaseModel], kinds: str, check: Callable[[dict], None] | None = None) -> Any:
    """Read a TOML file into ``model``; every error is one :class:`UsageError` line.

    Args:
        path: the TOML file.
        model: the pydantic model of its contents.
        kinds: the adapter kinds it accepts, for the message about an unknown one.
        check: called with the parsed TOML before validation, to refuse a file of another
            sort with a better message than a missing field.

    Raises:
        UsageError: missing file, TOML syntax error (with line and column), or a field
            with a bad value (named, e.g. ``condition[0].reviewer.model``).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"experiment file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"experiment file {path} cannot be read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: invalid TOML: {exc}") from None
    if check is not None:
        check(data)
    try:
        # Strict: TOML has real types, so repeats = "3" or concurrency = 2.5 is a mistake to
        # name, not a value to coerce.
        return model.model_validate(data, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = _field(first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        if first["type"] == "union_tag_invalid":
            tag = first.get("input", {}).get("kind") if isinstance(first.get("input"), dict) else None
            message = f"unknown {where.rsplit('.', 1)[-1] or 'reviewer'} kind {tag!r} (known: {kinds})"
            where = where or "reviewer.kind"
        raise UsageError(f"{path}: {where}: {message}" if where else f"{path}: {message}") from None


def load_experiment(path: Path) -> Experiment:
    """Read and check an experiment file.

    Raises:
        UsageError: missing file, TOML syntax error (with line and column), or a field
            with a bad value (named, e.g. ``condition[0].reviewer.model``).
    """
    config = read_config(path, ExperimentConfig, "openai, anthropic, command, sarif, silent, flag_all, github, gitea")
    return Experiment(config=config, path=path.resolve())


TEMPLATE = '''\
# reviewbench experiment: which corpus, which conditions, how many repetitions.
# Run it:   reviewbench run experiment.toml --out runs/first
# Schema:   reviewbench schema experiment

corpus = "corpus"      # corpus directory, relative to this file
repeats = 3            # independent repetitions of every (case, condition)
seed = 7               # seeds the interleaved order of runs
rename = true          # also review rename variants present in the corpus

# A calibration baseline: never finds anything. Keep it: it brackets every metric.
[[condition]]
name = "silent"
reviewer = { kind = "silent" }

# Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, LM Studio, OpenRouter).
# The key is read from the environment variable named by api_key_env, never from here.
[[condition]]
name = "A"
reviewer = { kind = "openai", base_url = "http://localhost:11434/v1", model = "qwen2.5-coder:7b", api_key_env = "OLLAMA_KEY", temperature = 0.0, max_tokens = 1024 }
prompt = "default"     # built-in frozen prompt id, or a file
# guidance = "rules/scoped.md"   # optional text given to the reviewer
context = "diff"       # diff | files | tree
concurrency = 8        # runs in flight at once for this condition
rate_per_minute = 60   # request starts per minute (omit for no limit)
timeout_s = 120        # per attempt
retries = 4            # retries on 429, 5xx and connection errors, with backoff

# Any executable: the packet arrives as JSON on stdin, the review is its stdout (read up to
# max_output_bytes, default 1 MiB: past it the command is killed and the run is invalid). It
# runs sandboxed: no corpus, gold or home in sight; only the variables listed in env.
# [[condition]]
# name = "agent"
# reviewer = { kind = "command", command = "./my-review-script --strict", env = ["OPENAI_API_KEY"] }
# context = "tree"     # REVIEWBENCH_TREE names an exported post-patch tree (no history)

# A review bot on pull requests of your sandbox repository (docs/FORGE.md).
# [[condition]]
# name = "codex"
# reviewer = { kind = "github", repo = "you/review-sandbox", remote = "git@github.com:you/review-sandbox.git", token_env = "GITHUB_TOKEN", trigger = "@codex review", bot = "chatgpt-codex-connector", poll_s = 30, timeout_s = 1800 }
# context = "tree"
# timeout_s = 2400     # above the reviewer's own timeout_s
'''
