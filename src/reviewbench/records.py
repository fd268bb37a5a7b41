"""Records shared by the pipeline stages.

These are the on-disk contract of a corpus (SPEC section 5): every line of
``cases.jsonl`` is a :class:`Case`, every line of ``gold.jsonl`` a :class:`GoldRecord`, and
``corpus.json`` a :class:`CorpusMeta`. They are frozen and reject unknown fields so that a
typo in a producer fails loudly instead of writing a silently different file. The JSON
Schemas shipped by ``reviewbench schema`` are generated from these classes.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import PurePosixPath
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

__all__ = [
    "CASE_ID_PATTERN",
    "SCHEMA_VERSION",
    "Case",
    "CorpusCounts",
    "CorpusMeta",
    "Defect",
    "DropReason",
    "Finding",
    "GoldRecord",
    "Location",
    "Provenance",
    "RepoInfo",
    "ReviewPacket",
    "RunRow",
    "RunState",
    "Severity",
    "Stratum",
    "Validation",
    "ValidationStatus",
]

SCHEMA_VERSION = "1"


#: What a ``case_id`` may look like: it names files (``patches/<id>.diff``, logs, trees),
#: so no separator and no leading dot (``..``) can reach past the folder it names a file in.
CASE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


def _relative_path(value: str) -> str:
    """A corpus path is read from an untrusted file: refuse anything that leaves the tree."""
    parts = PurePosixPath(value).parts
    if not value or "\0" in value or value.startswith("/") or ".." in parts:
        raise ValueError(f"{value!r} is not a relative path inside the tree (absolute, empty or '..')")
    return value


def _patch_path(value: str) -> str:
    _relative_path(value)
    parts = PurePosixPath(value).parts
    if len(parts) < 2 or parts[0] != "patches":
        raise ValueError(f"{value!r} is not a path inside the corpus's patches/ folder")
    return value


#: A case id, checked on every read (a corpus may come from someone else).
CaseId = Annotated[str, StringConstraints(pattern=CASE_ID_PATTERN)]
#: A path relative to a tree, checked on every read: never absolute, never through ``..``.
RelativePath = Annotated[str, AfterValidator(_relative_path)]
#: A patch file's path relative to the corpus, always inside ``patches/``.
PatchPath = Annotated[str, AfterValidator(_patch_path)]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Stratum(StrEnum):
    """Where a case comes from; scores are broken down by it."""

    FIX_REVERSAL = "fix_reversal"
    MUTATION = "mutation"
    CONTROL = "control"
    NATURAL = "natural"


class Severity(StrEnum):
    """Gold or claimed severity of a defect."""

    LOW = "low"
    MED = "med"
    HIGH = "high"


class DropReason(StrEnum):
    """Why a commit that matched the fix patterns made no case."""

    MERGE = "merge"
    NO_PARENT = "no_parent"
    NO_SOURCE_CHANGE = "no_source_change"
    TOO_LARGE = "too_large"
    BINARY = "binary"
    LOCKFILE = "lockfile"
    VENDORED_OR_GENERATED = "vendored_or_generated"
    FORMATTING_ONLY = "formatting_only"
    LFS_POINTER = "lfs_pointer"


class ValidationStatus(StrEnum):
    """Outcome of running the repository's tests against a case (SPEC section 4)."""

    OBSERVED = "observed"
    NOT_OBSERVED = "not_observed"
    APPLY_FAILED = "apply_failed"
    BASE_FAILING = "base_failing"
    FLAKY = "flaky"
    TIMEOUT = "timeout"
    ERROR = "error"


class Case(_Record):
    """What a reviewer may see of one case; nothing here may hint at a defect."""

    case_id: CaseId = Field(description="Neutral identifier; reveals neither stratum nor source.")
    base: str = Field(description="Commit the patch applies to.")
    title: str = Field(description="Neutral title, e.g. 'Update parser module'.")
    patch: PatchPath = Field(description="Path of the unified diff, relative to the corpus, inside patches/.")
    paths: list[RelativePath] = Field(description="Files the patch changes, as named after it applies.")
    language: str | None = Field(description="Main language of the changed files.")


class Location(_Record):
    """A line range in the tree *after* the case patch is applied."""

    path: RelativePath = Field(description="File path in the patched tree.")
    start_line: int = Field(
        ge=0, description="First line (1-based); 0 when the patch deletes the whole file."
    )
    end_line: int = Field(ge=0, description="Last line, inclusive.")
    symbol: str | None = Field(
        default=None, description="Enclosing function or class, dotted (e.g. 'Cls.method')."
    )


class Defect(_Record):
    """One labelled bug inside a case's patch."""

    defect_id: str = Field(description="Unique within the corpus.")
    defect_class: str = Field(
        alias="class", description="Defect class: the mutation operator, or 'fix_reversal'."
    )
    severity: Severity | None = Field(default=None, description="Gold severity, if known.")
    locations: list[Location] = Field(description="Where the defect lies in the patched tree.")
    symbols: list[str] = Field(
        default_factory=list,
        description="Names a reviewer may cite: enclosing symbols plus changed identifiers.",
    )
    removed_identifiers: list[str] = Field(
        default_factory=list,
        description="Identifiers (>= 4 chars, no keywords) the fix removed; the patch restores them.",
    )
    added_identifiers: list[str] = Field(
        default_factory=list,
        description="Identifiers the fix added; the patch takes them away.",
    )
    hint_terms: list[str] = Field(default_factory=list, description="Words that name the defect.")
    description: str = Field(default="", description="Human-readable label; gold only.")


class Provenance(_Record):
    """Where a case came from. Gold only: it names the fix."""

    commit: str | None = Field(default=None, description="Fix commit (fix reversals).")
    parent: str | None = Field(default=None, description="The fix's parent: the buggy tree.")
    date: str | None = Field(
        default=None, description="Author date of the source commit (ISO 8601), for cut-offs."
    )
    subject: str | None = Field(default=None, description="Subject line of the source commit.")
    operator: str | None = Field(default=None, description="Mutation operator, if any.")
    test_paths: list[RelativePath] = Field(
        default_factory=list, description="Test files the source commit changed."
    )


class Validation(_Record):
    """Result of the validity gate (filled by ``reviewbench validate``)."""

    status: ValidationStatus
    test_cmd: str | None = None
    exit_code: int | None = None
    failing_tests: list[str] = Field(default_factory=list)
    duration_s: float | None = None
    selection: str | None = Field(
        default=None, description="Which test selection observed the result."
    )


class GoldRecord(_Record):
    """The labels of one case; never shown to a reviewer."""

    case_id: CaseId
    stratum: Stratum
    expect_finding: bool = Field(description="False for controls: a clean review is correct.")
    variant_of: CaseId | None = Field(default=None, description="Original case of a rename variant.")
    defects: list[Defect]
    provenance: Provenance
    validation: Validation | None = Field(default=None, description="Null until validated.")


class RepoInfo(_Record):
    """The repository a corpus was mined from."""

    path: str
    remote: str | None = None
    head: str
    shallow: bool = False


class CorpusCounts(_Record):
    """Tallies that make a corpus's yield visible."""

    cases: int
    by_stratum: dict[str, int]
    matched_commits: int = Field(description="Commits whose message matched a fix pattern.")
    dropped: dict[str, int] = Field(description="Matched commits that made no case, by reason.")
    by_validation: dict[str, int] = Field(default_factory=dict)


class CorpusMeta(_Record):
    """Contents of ``corpus.json``."""

    schema_version: str = SCHEMA_VERSION
    repo: RepoInfo
    created_at: str = Field(description="UTC time the corpus was written (ISO 8601).")
    tool_version: str
    config: dict[str, Any] = Field(description="The mining configuration, as given.")
    counts: CorpusCounts
    gold_sha256: str = Field(description="SHA-256 of gold.jsonl exactly as written.")


class RunState(StrEnum):
    """The one terminal state of a run (SPEC 7). "No review appeared" is never "no findings"."""

    COMPLETED_FINDINGS = "completed_findings"
    COMPLETED_NO_FINDINGS = "completed_no_findings"
    TIMED_OUT = "timed_out"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INVALID = "invalid"

    @property
    def completed(self) -> bool:
        """A review (or solution) appeared: findings, or an explicit clean answer."""
        return self in (RunState.COMPLETED_FINDINGS, RunState.COMPLETED_NO_FINDINGS)


class Finding(_Record):
    """One atomic claim parsed from a reviewer's output."""

    path: str | None = Field(default=None, description="File the claim names, if any.")
    line: int | None = Field(default=None, description="Line in the patched tree, if any.")
    severity: Severity | None = Field(default=None, description="Claimed severity, if given.")
    claim: str = Field(description="The claim's text (untrusted: escape when shown).")
    raw: str = Field(description="The output line(s) it was parsed from.")


class ReviewPacket(_Record):
    """What a reviewer receives for one case (SPEC 6); never anything from gold."""

    case_id: str
    title: str
    diff: str = Field(description="The unified diff of the change.")
    paths: list[str]
    prompt: str = Field(description="The frozen review instructions.")
    guidance: str | None = Field(default=None, description="Optional rules text of the condition.")
    files: dict[str, str] = Field(
        default_factory=dict, description="Post-patch content of changed files (context files/tree)."
    )


class RunRow(_Record):
    """One run with its provenance (SPEC 7): a row of ``runs.sqlite`` and of ``export``."""

    run_id: str = Field(description="Stable id of (item, condition, repetition).")
    case_id: str = Field(description="The reviewed case's id, or the fix task's instance id.")
    condition: str = Field(description="The condition's name.")
    repetition: int = Field(description="0-based repetition of (item, condition).")
    variant: str = Field(description="'original', or 'rename' for a rename variant.")
    state: RunState = Field(description="The run's one terminal state.")
    started_at: str | None = Field(default=None, description="UTC start, ISO 8601.")
    ended_at: str | None = Field(default=None, description="UTC end, ISO 8601.")
    latency_s: float | None = Field(default=None, description="Wall time of the run, seconds.")
    attempts: int = Field(description="Requests sent for this run (0 when answered from the cache).")
    cached: bool = Field(description="Answered from the response cache (no request sent).")
    model_requested: str | None = Field(default=None, description="Model (or kind) asked for.")
    model_returned: str | None = Field(default=None, description="Model the endpoint said answered.")
    params: dict[str, Any] = Field(description="The adapter's settings (never a key).")
    prompt_sha256: str = Field(description="Hash of the frozen prompt text.")
    guidance_sha256: str | None = Field(default=None, description="Hash of the guidance text, if any.")
    gold_sha256: str = Field(description="Hash of the labels the run is scored against.")
    tool_version: str = Field(description="reviewbench version that ran it.")
    tokens_in: int | None = Field(default=None, description="Input tokens the endpoint reported.")
    tokens_out: int | None = Field(default=None, description="Output tokens the endpoint reported.")
    raw_output: str | None = Field(default=None, description="The answer as received (untrusted).")
    unparsed: list[str] = Field(default_factory=list, description="Output lines no finding came from.")
    error: str | None = Field(default=None, description="Why no review appeared, or notes.")
    cache_key: str = Field(description="Content address of the response in the cache.")
    findings: list[Finding] = Field(default_factory=list, description="Parsed findings, in order.")
    patch: str | None = Field(default=None, description="Fix-task runs: the solver's unified diff.")
    try_no: int = Field(default=1, description="1, or the retry number after 'run --retry-failed'.")

    def as_dict(self) -> dict[str, Any]:
        """The exported form: findings as objects; review runs carry no ``patch`` key."""
        data = {name: getattr(self, name) for name in type(self).model_fields}
        data["state"] = self.state.value
        data["findings"] = [f.model_dump(mode="json") for f in self.findings]
        if self.patch is None:
            del data["patch"]  # review runs export exactly what they always did
        return data
