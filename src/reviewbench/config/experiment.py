"""The experiment file's contents: which corpus, which conditions, how many
repetitions, and the one reader of TOML configuration files.

An experiment is TOML; its JSON Schema (``reviewbench schema experiment``) is generated
from :class:`ExperimentConfig`. Errors name the line (TOML syntax) or the field (values).
Loading a file together with what it points at (prompts, guidance) is
``review/experiment.py``'s.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import UsageError
from .registration import RegistrationPlan
from .reviewers import ReviewerConfig, kinds_of

__all__ = ["ConditionConfig", "ConditionLimits", "GuidanceFile", "ExperimentConfig", "LoadedFile", "read_config",
           "unique_names", "unknown_key", "validation_line"]


#: Consecutive connection failures that stop a condition, unless it says otherwise.
DEFAULT_STOP_AFTER = 5


class ConditionLimits(BaseModel):
    """What every condition has, reviewing or solving: a name, a prompt, guidance, and the
    limits of its runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="Short label, e.g. 'A'.")
    prompt: str = Field(default="default", description="Built-in prompt id, or a file path.")
    guidance: str | None = Field(default=None, description="File whose text is given to the model under test.")
    concurrency: int = Field(default=4, ge=1, le=1024, description="Runs in flight at once.")
    rate_per_minute: float | None = Field(default=None, gt=0, description="Request starts per minute.")
    timeout_s: float = Field(default=120.0, gt=0, description="Per attempt.")
    retries: int = Field(default=4, ge=0, le=20, description="Retries of transient errors.")
    stop_after_connection_failures: int = Field(
        default=DEFAULT_STOP_AFTER, ge=0, le=10_000,
        description="Stop the condition after this many consecutive attempts that could not connect "
        "(refused, host not found), with one line naming the cause; its runs not started stay to resume. "
        "0: never stop.")  # fmt: skip


class GuidanceFile(BaseModel):
    """One repository guidance file of a condition's treatment (an ``AGENTS.md``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(description="Where it lies in the reviewed repository, e.g. 'AGENTS.md' or "
                                  "'services/ledger/AGENTS.md' (relative, no '..', nothing under .git).")
    file: str = Field(description="The file holding its text, relative to the experiment file.")

    @field_validator("path")
    @classmethod
    def _inside(cls, path: str) -> str:
        parts = path.split("/")
        if (not path or path.startswith("/") or "\\" in path or "\x00" in path
                or any(p in ("", ".", "..", ".git") for p in parts)):  # fmt: skip
            raise ValueError(f"guidance path {path!r} must be a relative path inside the repository "
                             "(no '..', no empty part, nothing under .git)")
        return path


class ConditionConfig(ConditionLimits):
    """One fixed way of reviewing: reviewer + prompt + guidance + context."""

    reviewer: ReviewerConfig
    context: Literal["diff", "files", "tree"] = Field(
        default="diff", description="diff only; + post-patch files; + exported post-patch tree."
    )
    guidance_files: list[GuidanceFile] = Field(
        default_factory=list,
        description="Repository guidance files (the treatment): forge kinds commit them into the pushed trees; "
        "other kinds receive the text of those that apply to the changed paths as their guidance. Each run "
        "records the git blob SHA of every applicable one (guidance_blobs).")  # fmt: skip
    guidance_scope: Literal["ancestors", "nearest"] = Field(
        default="ancestors", description="Which guidance files apply to a changed path: every one in its "
        "directory or above (root and nested; the nearest wins where they disagree), or only the nearest.")  # fmt: skip

    @model_validator(mode="after")
    def _one_kind_of_guidance(self) -> ConditionConfig:
        if self.guidance and self.guidance_files:
            raise ValueError("give guidance or guidance_files, not both")
        paths = [g.path for g in self.guidance_files]
        if len(set(paths)) != len(paths):
            raise ValueError(f"guidance_files: a path is given twice ({', '.join(sorted(paths))})")
        return self

    @model_validator(mode="after")
    def _forge_needs_a_tree(self) -> ConditionConfig:
        """A forge reviewer pushes the exported tree and waits for its bot within the attempt."""
        reviewer = self.reviewer
        if reviewer.capabilities.opens_pull_requests:
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
    max_retries: int = Field(default=1, ge=0, le=20, description="Retry rule: how many times 'run --retry-failed' "
                             "may run a failed or timed-out run again; every earlier attempt stays a missing review.")
    retry_on: list[str] | None = Field(default=None, description="Retry rule: the failure codes a retry is allowed "
                                       "for (e.g. ['outage_indicated', 'no_review_in_window']); none: any.")
    registration: RegistrationPlan | None = Field(
        default=None, description="The protocol the decision is registered to rest on: owner, hypotheses and "
        "their gates, severity policy, exclusion policy, stop conditions, completion definition, product "
        "surface, approvals, data controls (config/registration.py); frozen by register.")  # fmt: skip
    rubric: str | None = Field(default=None, description="Labelling rubric file (UTF-8 text, relative to the "
                               "experiment file), shown to raters in the labelling app. Its SHA-256 is registered; "
                               "labels given under another rubric version are queued again.")  # fmt: skip

    @field_validator("retry_on")
    @classmethod
    def _known_codes(cls, codes: list[str] | None) -> list[str] | None:
        from ..records import FailureCode

        unknown = sorted(set(codes or ()) - {c.value for c in FailureCode})
        if unknown:
            raise ValueError(f"unknown failure code(s) {', '.join(unknown)} (known: "
                             f"{', '.join(c.value for c in FailureCode)})")
        return codes

    @field_validator("condition")
    @classmethod
    def _unique_names(cls, conditions: list[Any]) -> list[Any]:
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
        data = self.config.model_dump(mode="json")
        for condition in data.get("condition", ()):
            # Added after run directories existed: at its default it hashes as before.
            if condition.get("stop_after_connection_failures") == DEFAULT_STOP_AFTER:
                del condition["stop_after_connection_failures"]
        if data.get("registration", ...) is None:  # likewise: a file without the table hashes as before
            del data["registration"]
        canonical = json.dumps(data, sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()


#: The union branches pydantic names in an error's location (the reviewer kinds, from the
#: union itself; "none" as it always was), left out of the field named to the user.
_KINDS = frozenset(kinds_of(ReviewerConfig)) | {"none"}


def unknown_key(key: str, known: Iterable[str]) -> str:
    """``unknown key 'repaets' — did you mean 'repeats'?`` (the suggestion only when one is close)."""
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return f"unknown key {key!r}" + (f" — did you mean {close[0]!r}?" if close else "")


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation may hold (through lists, unions, Annotated, Optional)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models(arg)]


def _keys_at(model: type[BaseModel], loc: tuple[Any, ...]) -> set[str]:
    """The keys the table at ``loc`` (inside ``model``) may hold; empty when not a model."""
    current = [model]
    for part in loc:
        if isinstance(part, int) or not current:
            continue
        chosen = [m for m in current if part in m.model_fields]
        if chosen:
            current = _models(chosen[0].model_fields[part].annotation)
            continue
        # A union's branch, named by its tag (the reviewer's kind): keep the model of that kind.
        tagged = [m for m in current if "kind" in m.model_fields and part in get_args(m.model_fields["kind"].annotation)]
        current = tagged
    return {name for m in current for name in m.model_fields} if current else set()


def _where(loc: tuple[Any, ...], data: Any) -> str:
    """The field at ``loc``, conditions (and solvers) named by their name, not their index:
    ``condition B: reviewer.model``, or ``condition 3 (unnamed)``."""
    out, value = "", data
    for part in loc:
        if isinstance(value, dict):
            value = value.get(part) if isinstance(part, str) else None
        elif isinstance(value, list) and isinstance(part, int):
            item = value[part] if 0 <= part < len(value) else None
            name = item.get("name") if isinstance(item, dict) else None
            label = f" {name}" if isinstance(name, str) and name else f" {part + 1} (unnamed)"
            out += label + ":"
            value = item
            continue
        else:
            value = None
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in _KINDS:
            continue  # the union's branch name adds nothing for the user
        else:
            out += (" " if out.endswith(":") else ".") + str(part) if out else str(part)
    return out.rstrip(":")


def validation_line(exc: ValidationError, model: type[BaseModel], data: Any, kinds: str = "") -> str:
    """One line for pydantic's errors on ``data``: an unknown key first (with the key it most
    likely means), then the first other error; conditions named by their name.

    Args:
        exc: the validation error of ``model.model_validate(data)``.
        model: the file's model (to find the keys a table may hold).
        data: the parsed TOML.
        kinds: the adapter kinds accepted, for the message about an unknown one.
    """
    errors = exc.errors()
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(first["loc"])
    if first["type"] == "extra_forbidden":
        parent, key = loc[:-1], str(loc[-1])
        where = _where(parent, data)
        message = unknown_key(key, _keys_at(model, parent))
        return f"{where}: {message}" if where else message
    where = _where(loc, data)
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "union_tag_invalid":
        tag = first.get("input", {}).get("kind") if isinstance(first.get("input"), dict) else None
        field = str(next((p for p in reversed(loc) if isinstance(p, str)), "reviewer"))
        message = f"unknown {field} kind {tag!r} (known: {kinds})"
        where = where or "reviewer.kind"
    if first["type"] == "missing" and len(loc) == 1 and isinstance(data, dict):
        # A missing table or key beside an unknown one is usually that one misspelt.
        extra = [k for k in data if k not in model.model_fields]
        hint = unknown_key(extra[0], [str(loc[0])]) if extra else ""
        if "did you mean" in hint:
            return hint
    return f"{where}: {message}" if where else message


def read_config(path: Path, model: type[BaseModel], kinds: str, check: Callable[[dict[str, Any]], None] | None = None) -> Any:
    """Read a TOML file into ``model``; every error is one :class:`UsageError` line.

    Args:
        path: the TOML file.
        model: the pydantic model of its contents.
        kinds: the adapter kinds it accepts, for the message about an unknown one.
        check: called with the parsed TOML before validation, to refuse a file of another
            sort with a better message than a missing field.

    Raises:
        UsageError: missing file, TOML syntax error (with line and column), a field with a
            bad value (named, e.g. ``condition A: reviewer.model``), or an unknown key (with
            the key it most likely means); see :func:`validation_line`.
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
        raise UsageError(f"{path}: {validation_line(exc, model, data, kinds)}") from None
