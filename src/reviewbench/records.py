"""Records shared by the pipeline stages.

These are the on-disk contract of a corpus (SPEC section 5): every line of
``cases.jsonl`` is a :class:`Case`, every line of ``gold.jsonl`` a :class:`GoldRecord`, and
``corpus.json`` a :class:`CorpusMeta`. They are frozen and reject unknown fields so that a
typo in a producer fails loudly instead of writing a silently different file. The JSON
Schemas shipped by ``reviewbench schema`` are generated from these classes.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
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
    "RunState",
    "Severity",
    "Stratum",
    "TestEnvironment",
    "Validation",
    "ValidationStatus",
]

SCHEMA_VERSION = "1"


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


class ValidationStatus(StrEnum):
    """Outcome of running the repository's tests against a case (SPEC section 4)."""

    OBSERVED = "observed"
    NOT_OBSERVED = "not_observed"
    APPLY_FAILED = "apply_failed"
    BASE_FAILING = "base_failing"
    FLAKY = "flaky"
    TIMEOUT = "timeout"
    ERROR = "error"
    NOT_EXERCISED = "not_exercised"
    """The tests passed, but no run imported the changed code from the tree: they say
    nothing about it (out of primary scoring)."""


class Case(_Record):
    """What a reviewer may see of one case; nothing here may hint at a defect."""

    case_id: str = Field(description="Neutral identifier; reveals neither stratum nor source.")
    base: str = Field(description="Commit the patch applies to.")
    title: str = Field(description="Neutral title, e.g. 'Update parser module'.")
    patch: str = Field(description="Path of the unified diff, relative to the corpus.")
    paths: list[str] = Field(description="Files the patch changes, as named after it applies.")
    language: str | None = Field(description="Main language of the changed files.")


class Location(_Record):
    """A line range in the tree *after* the case patch is applied."""

    path: str = Field(description="File path in the patched tree.")
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
    test_paths: list[str] = Field(
        default_factory=list, description="Test files the source commit changed."
    )


class TestEnvironment(_Record):
    """The Python environment a validation ran the tests in."""

    __test__ = False  # not a pytest test class

    interpreter: str = Field(description="Path of the interpreter that ran the tests.")
    python_version: str = Field(description="Its version, e.g. '3.12.4'.")
    packages: int = Field(description="How many distributions were installed in it.")
    freeze_sha256: str = Field(
        description="SHA-256 of its sorted 'name==version' lines (what pip freeze lists)."
    )
    setup: str | None = Field(
        default=None,
        description="The command that built it (validate --setup); null: the user's own "
        "active environment.",
    )
    key: str | None = Field(
        default=None,
        description="Cache key of a built environment: SHA-256 of the setup command, the "
        "base interpreter and the dependency files at the mined HEAD.",
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
    reason: str | None = Field(
        default=None,
        description="One line saying why the status is not observed/not_observed: the "
        "deciding run's first error line, or the shadowing or missing import found.",
    )
    environment: TestEnvironment | None = Field(
        default=None, description="The Python environment the tests ran in, when known."
    )


class GoldRecord(_Record):
    """The labels of one case; never shown to a reviewer."""

    case_id: str
    stratum: Stratum
    expect_finding: bool = Field(description="False for controls: a clean review is correct.")
    variant_of: str | None = Field(default=None, description="Original case of a rename variant.")
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
    environment: TestEnvironment | None = Field(
        default=None, description="The Python environment of the last validation run, when known."
    )


class RunState(StrEnum):
    """The one terminal state of a run (SPEC 7). "No review appeared" is never "no findings"."""

    COMPLETED_FINDINGS = "completed_findings"
    COMPLETED_NO_FINDINGS = "completed_no_findings"
    TIMED_OUT = "timed_out"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INVALID = "invalid"


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
