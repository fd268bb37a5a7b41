"""Records shared by the pipeline stages.

These are the on-disk contract of a corpus (SPEC section 5): every line of
``cases.jsonl`` is a :class:`Case`, every line of ``gold.jsonl`` a :class:`GoldRecord`, and
``corpus.json`` a :class:`CorpusMeta`. They are frozen and reject unknown fields so that a
typo in a producer fails loudly instead of writing a silently different file. The JSON
Schemas shipped by ``reviewbench schema`` are generated from these classes.
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Annotated, Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

__all__ = [
    "public_remote",
    "RULE_ID_PATTERN",
    "STRATUM_PATTERN",
    "TASK_DROP_REASONS",
    "Evidence",
    "CASE_ID_PATTERN",
    "SCHEMA_VERSION",
    "Case",
    "CorpusCounts",
    "CorpusMeta",
    "Defect",
    "CASE_DROP_REASONS",
    "DropReason",
    "DroppedCommit",
    "FailureCode",
    "Finding",
    "GoldRecord",
    "Location",
    "Provenance",
    "PullRequest",
    "RepoInfo",
    "ReviewPacket",
    "RunRow",
    "RunState",
    "SelectionSignal",
    "Severity",
    "SeverityBasis",
    "Stratum",
    "StratumName",
    "TestEnvironment",
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
    """The built-in strata: where a case comes from; scores are broken down by it.

    The ``stratum`` field of gold is open (:data:`StratumName`): authored cases may name
    their own stratum (``"billing_rules"``) besides these.
    """

    FIX_REVERSAL = "fix_reversal"
    MUTATION = "mutation"
    CONTROL = "control"
    NATURAL = "natural"
    NOISY = "noisy"
    RULE_VIOLATION = "rule_violation"
    SAFE_COUNTEREXAMPLE = "safe_counterexample"
    MIRROR = "mirror"
    """The same change as a defect case, the other way (the fix itself for a fix reversal,
    the un-mutation for a mutation): same files, lines and vocabulary, no defect. Shares
    the defect case's ``pair_id``; what a reviewer says on both does not discriminate."""


class Evidence(StrEnum):
    """Who decided a verdict, weakest first: matching, a calibrated judge, or people.

    One vocabulary for scoring, labels, gates (``min_evidence``) and the report."""

    AUTOMATIC = "automatic"
    JUDGE = "judge"
    HUMAN = "human"

    @property
    def rank(self) -> int:
        return list(Evidence).index(self)


STRATUM_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"
#: A defect's ``rule_id`` (``R-01``, ``ledger.post``): what ``defect_recall@rule:ID`` names.
RULE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"
"""What a stratum name may be."""


def _plain(value: str) -> str:
    return str(value)  # a Stratum member becomes its plain value


#: A stratum: one of :class:`Stratum` or a user-defined name (lower-case letters, digits
#: and ``_``, at most 40, starting with a letter).
StratumName = Annotated[str, StringConstraints(pattern=STRATUM_PATTERN), AfterValidator(_plain)]


class Severity(StrEnum):
    """Gold or claimed severity of a defect."""

    LOW = "low"
    MED = "med"
    HIGH = "high"


class DropReason(StrEnum):
    """Why a commit that matched the fix patterns made no case (``mine``) or no fix task
    (``tasks mine``): one vocabulary, each command using its part (:data:`CASE_DROP_REASONS`,
    :data:`TASK_DROP_REASONS`)."""

    MERGE = "merge"
    NO_PARENT = "no_parent"
    NO_SOURCE_CHANGE = "no_source_change"
    TOO_LARGE = "too_large"
    BINARY = "binary"
    LOCKFILE = "lockfile"
    VENDORED_OR_GENERATED = "vendored_or_generated"
    FORMATTING_ONLY = "formatting_only"
    DOCS_ONLY = "docs_only"
    LFS_POINTER = "lfs_pointer"
    NEW_API = "new_api"
    """A fix reversal's commit adds a function, class, option or parameter its own tests
    call, and its subject does not say "fix": a feature with its tests (docs/MINING.md)."""
    NO_TEST_CHANGE = "no_test_change"
    """Fix tasks: the commit changed no test, so nothing could grade a patch."""
    APPLY_FAILED = "apply_failed"
    """Fix tasks: the test or gold patch did not apply at the fix's parent."""
    NO_FAIL_TO_PASS = "no_fail_to_pass"
    """Fix tasks: no test failed before the gold patch and passed after it."""
    FLAKY = "flaky"
    """Fix tasks: a test changed outcome between reruns."""
    TIMEOUT = "timeout"
    """Fix tasks: a test run hit its time limit."""
    ERROR = "error"
    """Fix tasks: the test run gave no outcome (no report, a crash of the harness)."""


#: The reasons ``mine`` counts (``corpus.json``), in its order.
CASE_DROP_REASONS: tuple[DropReason, ...] = tuple(DropReason)[:11]
#: The reasons ``tasks mine`` counts (``tasks.json``), in its order.
TASK_DROP_REASONS: tuple[DropReason, ...] = (
    DropReason.MERGE, DropReason.NO_PARENT, DropReason.NO_SOURCE_CHANGE, DropReason.NO_TEST_CHANGE,
    DropReason.TOO_LARGE, DropReason.BINARY, DropReason.LOCKFILE, DropReason.VENDORED_OR_GENERATED,
    DropReason.FORMATTING_ONLY, DropReason.DOCS_ONLY, DropReason.APPLY_FAILED, DropReason.NO_FAIL_TO_PASS,
    DropReason.FLAKY, DropReason.TIMEOUT, DropReason.ERROR,
)  # fmt: skip


class SelectionSignal(StrEnum):
    """Why a commit was taken as a candidate fix (``mine --select``; docs/MINING.md)."""

    MESSAGE = "message"
    """Its message matches a ``--grep`` pattern (by default the word "fix")."""
    ISSUE_REF = "issue_ref"
    """Its message references an issue (``#123:``, ``Fixes #123``, an ``/issues/123`` link);
    a pull-request number at the end of the subject (``… (#123)``) does not count."""
    TEST_COEDIT = "test_coedit"
    """It rewrites existing source lines and, in the same commit, edits a test file that
    already existed: a fix with its regression test, whatever its message says."""
    CONVENTION = "convention"
    """Its subject carries a tag (``BUG:``, ``[bug]``) that the repository's own commits
    saying "fix" mostly carry: a convention learnt from its history."""


class DroppedCommit(_Record):
    """One line of ``dropped.jsonl``: a candidate commit that made no case, and why. Gold
    only (it names fixes); ``reviewbench show --dropped`` lists them."""

    commit: str = Field(description="The candidate commit.")
    subject: str = Field(description="Its subject line.")
    reason: DropReason = Field(description="Why it made no case.")
    selected_by: list[SelectionSignal] = Field(default_factory=list, description="The signals that took it.")
    detail: str | None = Field(default=None, description="What made the reason hold, where one line says more "
                               "(new_api: the name the fix adds and its tests call).")


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

    case_id: CaseId = Field(description="Neutral identifier; reveals neither stratum nor source.")
    base: str = Field(description="Commit the patch applies to.")
    title: str = Field(description="Neutral title, e.g. 'Update parser module'.")
    patch: PatchPath = Field(description="Path of the unified diff, relative to the corpus, inside patches/.")
    base_patch: PatchPath | None = Field(
        default=None,
        description="Path of a diff applied silently to base before the patch: part of the base, never "
        "shown as a change (a rename variant's renamed code).",
    )
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


class SeverityBasis(_Record):
    """Why a defect's severity is what it is, field by field: what is at stake, what sets it
    off, what follows, how far it reaches, and why the controls already in place do not make
    it harmless. A primary defect case without one is flagged (``score``, ``show``)."""

    asset: str = Field(min_length=1, description="What is harmed: data, money, availability, access…")
    trigger: str = Field(min_length=1, description="The input or state that sets it off.")
    consequence: str = Field(min_length=1, description="What happens then.")
    scope: str = Field(min_length=1, description="Who or how much it reaches (one user, every invoice…).")
    controls: str = Field(min_length=1, description="Why existing controls (tests, validation, monitoring, review) "
                          "do not make it harmless.")


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
    severity_basis: SeverityBasis | str | None = Field(
        default=None, description="Why the severity is what it is: structured (asset, trigger, consequence, scope, "
        "controls), or, as older gold has it, one line ('P1: wrong totals reach invoices'), which counts as no "
        "structured basis.",
    )
    trigger: str | None = Field(default=None, description="The input or state that makes the defect show.")
    safe_path: str | None = Field(
        default=None, description="What keeps a look-alike safe (a safe counterexample's reason), if any."
    )
    acceptable_descriptions: list[str] = Field(
        default_factory=list, description="Phrasings a judge may accept as naming this defect."
    )
    rule_id: str | None = Field(
        default=None, pattern=RULE_ID_PATTERN,
        description="The repository rule the defect violates (e.g. 'R-01'): scored per rule "
        "(defect_recall@rule:R-01), and eligible under a condition only where its guidance covers the path.",
    )


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
    selected_by: list[SelectionSignal] = Field(
        default_factory=list,
        description="Fix reversals and natural cases: the candidate signals (of those mining was asked "
        "for) that the fix commit matched: message, issue_ref, test_coedit, convention.",
    )
    introduced_by: str | None = Field(
        default=None, description="Natural cases: the commit that introduced the lines the fix changed."
    )
    test_patch: str | None = Field(
        default=None,
        description="Corpus path of a patch bringing the fix's test files into the base; applied by "
        "validation only, never shown to a reviewer (natural cases).",
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
    pytest: str | None = Field(default=None, description="The version of pytest installed in it, if any.")
    locale: str | None = Field(
        default=None,
        description="The locale the tests ran under, as the variable that decides it (LC_ALL, else LC_CTYPE, "
        "else LANG) and its value, e.g. 'LC_ALL=C'; null: none set (the C locale). [validate] env sets it.",
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
    base_failures: list[str] = Field(
        default_factory=list,
        description="Tests that failed at the unpatched base too, every time (an environment-dependent "
        "failure): left out of failing_tests. A case is observed despite them when the patch makes other "
        "tests fail, the fix's own among them; base_failing when the fix's own tests fail at the base.",
    )


class GoldRecord(_Record):
    """The labels of one case; never shown to a reviewer."""

    case_id: CaseId
    stratum: StratumName = Field(
        description="Built-in (fix_reversal, mutation, control, natural, noisy, rule_violation, "
        "safe_counterexample) or user-defined; scores are broken down by it."
    )
    expect_finding: bool = Field(description="False for controls: a clean review is correct.")
    variant_of: CaseId | None = Field(default=None, description="Original case of a rename variant.")
    pair_id: str | None = Field(
        default=None,
        description="Shared by paired cases: a defect case and its mirror, a rule violation and its safe "
        "counterexample.",
    )
    changed: list[Location] = Field(
        default_factory=list,
        description="Mirrors: the line ranges the patch writes, in the patched tree (the mirror of the defect's "
        "locations). A finding of the same run there that also names the paired defect makes the defect "
        "case's naming finding non-discriminating.",
    )
    source_date: str | None = Field(
        default=None,
        description="When the change came to exist (ISO 8601): the fix's commit time for fix reversals, the "
        "introducing commit's for natural cases. Null for cases made at mining time (mutations, controls): "
        "their date is the corpus's created_at, which keeps gold identical across re-mining.",
    )
    exploratory: bool = Field(
        default=False, exclude_if=lambda v: v is False,
        description="An exploratory case: scored apart, beside the headline like a holdout stratum, never in the "
        "headline metrics, gates or comparisons (its mirror and rename variants follow it). Written only when "
        "true, so other gold lines are unchanged.",
    )  # fmt: skip
    defects: list[Defect]
    provenance: Provenance
    validation: Validation | None = Field(default=None, description="Null until validated.")

    @property
    def valid(self) -> bool:
        """The tests say what the case claims: a defect case's tests fail (observed), a clean
        case's (control, mirror) pass (not_observed). Unvalidated is not valid."""
        if self.validation is None:
            return False
        wanted = ValidationStatus.OBSERVED if self.expect_finding else ValidationStatus.NOT_OBSERVED
        return self.validation.status is wanted


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


class RepoInfo(_Record):
    """The repository a corpus was mined from."""

    path: str
    remote: Annotated[str | None, AfterValidator(public_remote)] = Field(
        default=None, description="remote.origin.url without user name, password, query or fragment.")
    head: str
    shallow: bool = False


class CorpusCounts(_Record):
    """Tallies that make a corpus's yield visible."""

    cases: int
    by_stratum: dict[str, int]
    matched_commits: int = Field(description="Candidate commits: those a selection signal took (by default "
                                 "a message matching a fix pattern, or a source edit with its test edit).")
    by_signal: dict[str, int] = Field(
        default_factory=dict, description="Candidate commits per selection signal (a commit may show several)."
    )
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
    """The one terminal state of a run. "No review appeared" is never "no findings"."""

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


class FailureCode(StrEnum):
    """Why a run did not complete: one closed list, counted by condition and stratum."""

    TRIGGER_NOT_ACCEPTED = "trigger_not_accepted"
    """The forge refused to open the pull request or take the trigger comment."""
    PERMISSION = "permission"
    """The token or account lacks a right (401/403 without a rate limit)."""
    NO_REVIEW_IN_WINDOW = "no_review_in_window"
    """A forge bot did not complete its review within the reviewer's timeout_s."""
    CONTAMINATED = "contaminated"
    """The run saw what it must not (another condition's review, gold)."""
    CONNECTION_CHANGED = "connection_changed"
    """The forge connection (bot installed, automatic review) differs from the one probed."""
    OUTAGE_INDICATED = "outage_indicated"
    """The service said it is unavailable (5xx after retries)."""
    SETUP_FAILED = "setup_failed"
    """The harness could not prepare the run (push, tree export, a broken case)."""
    OPERATOR_ERROR = "operator_error"
    """The operator stopped the run (Ctrl-C) or configured it so it cannot run."""
    ENDPOINT_ERROR = "endpoint_error"
    """The endpoint answered, but with an error or with no review (invalid)."""
    TIMEOUT = "timeout"
    """No answer within the condition's timeout_s."""
    BOT_ERROR = "bot_error"
    """A forge bot posted a failure message ("usage limit reached", "could not review")."""
    SAFETY_STOP = "safety_stop"
    """The run crossed the review-only boundary (merged, approved by the bot, a credential in
    its output): the experiment stopped."""


class Finding(_Record):
    """One atomic claim parsed from a reviewer's output."""

    path: str | None = Field(default=None, description="File the claim names, if any.")
    line: int | None = Field(default=None, description="Line in the patched tree, if any.")
    severity: Severity | None = Field(default=None, description="Claimed severity, if given.")
    claim: str = Field(description="The claim's text (untrusted: escape when shown).")
    raw: str = Field(description="The output line(s) it was parsed from.")


class ReviewPacket(_Record):
    """What a reviewer receives for one case; never anything from gold."""

    case_id: str
    title: str
    diff: str = Field(description="The unified diff of the change.")
    paths: list[str]
    prompt: str = Field(description="The frozen review instructions.")
    guidance: str | None = Field(default=None, description="Optional rules text of the condition.")
    files: dict[str, str] = Field(
        default_factory=dict, description="Post-patch content of changed files (context files/tree)."
    )
    tree_note: str | None = Field(
        default=None, description="Context tree: what the exported tree's REVIEW.md says, the same for every case "
        "(test files a fix added or changed are shown as before it, so no test tells what the change breaks).",
    )
    guidance_files: dict[str, str] = Field(
        default_factory=dict, description="Forge kinds: repository guidance files (path -> text) committed into "
        "the pushed trees as the condition's treatment; empty for other kinds.")  # fmt: skip


class PullRequest(_Record):
    """The pull request a forge run opened (``kind = "github"``/``"gitea"``), recorded
    whatever the run's end, ``timed_out`` included, so a user can find it on the forge."""

    kind: str = Field(description="The forge kind: 'github' or 'gitea'.")
    repo: str = Field(description="The sandbox repository, 'owner/name'.")
    number: int = Field(description="The pull request's number.")
    url: str | None = Field(default=None, description="The pull request's web address, as the forge gave it.")
    head_sha: str = Field(description="The commit reviewed (the head branch's tip).")
    triggered_at: str | None = Field(default=None, description="When the review was asked for (UTC, ISO 8601): the "
                                     "trigger comment's time, or the pull request's with no trigger.")
    first_review_at: str | None = Field(default=None, description="The bot's first review or comment (UTC, ISO "
                                        "8601); null when none appeared.")
    completed_at: str | None = Field(default=None, description="When the run stopped waiting (UTC, ISO 8601).")
    time_to_first_review_s: float | None = Field(default=None, description="Seconds from triggered_at to "
                                                 "first_review_at (the forge's clock); null when not reviewed.")
    polls: int = Field(default=0, description="Polls of the pull request made.")
    base_sha: str | None = Field(default=None, description="The base commit the pull request was opened on.")
    case_tree: str | None = Field(default=None, description="Git tree SHA of the patched tree without the placed "
                                  "guidance files: equal for one case under every condition.")
    guidance_blobs: dict[str, str] | None = Field(default=None, description="Guidance files (AGENTS.md) in the "
                                                  "pushed head tree, in the changed paths' directories: path -> "
                                                  "git blob SHA, as git holds them.")
    draft: bool | None = Field(default=None, description="Whether the pull request was a draft (null: the forge "
                               "did not say).")
    labels: list[str] = Field(default_factory=list, description="The pull request's labels when opened.")
    author: dict[str, str] | None = Field(default=None, description="Who opened it: login and account type, as "
                                          "the forge said.")
    description: str | None = Field(default=None, description="The pull request's visible description (body).")
    completion: str | None = Field(default=None, description="The completion rule the run waited by (review, "
                                   "first_activity, quiet).")
    completed_review_at: str | None = Field(default=None, description="When the bot's review completed by that "
                                            "rule (UTC, ISO 8601; the forge's clock).")
    time_to_completed_review_s: float | None = Field(default=None, description="Seconds from triggered_at to "
                                                     "completed_review_at; null when not completed.")
    connection: dict[str, Any] | None = Field(default=None, description="The connection as the forge showed it "
                                              "before this process's first pull request: probed_at, token_scopes, "
                                              "permissions, private, bot (login and type, or not_found), "
                                              "automatic_review (not_observable where no endpoint shows it).")
    connection_after: dict[str, Any] | None = Field(default=None, description="The connection probed again after "
                                                    "the run's window, in the same shape; a difference from "
                                                    "connection fails the run connection_changed.")  # fmt: skip
    usage: dict[str, Any] | str | None = Field(default=None, description="Usage proxy: {unit, before, after, "
                                               "observed_at} (the forge's rate limit remaining around the run), or "
                                               "'not_observable'; never a cost, apart from tokens.")


class RunRow(_Record):
    """One run with its provenance: a row of ``runs.sqlite`` and of ``export``."""

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
    pull_request: PullRequest | None = Field(default=None, description="Forge runs: the pull request opened, "
                                             "whatever the run's end (null for other kinds, or before one opened).")
    guidance_blobs: dict[str, str] | None = Field(default=None, description="Path -> git blob SHA of every "
                                                  "guidance file (AGENTS.md) that applied to the run's changed paths; "
                                                  "null for conditions without guidance files.")  # fmt: skip
    failure_code: FailureCode | None = Field(default=None, description="Why a run that did not complete did "
                                             "not; null for completed runs.")  # fmt: skip
    position: int | None = Field(default=None, description="0-based place of the run in the experiment's seeded "
                                 "order (allocation.jsonl); null for runs recorded before it was kept.")
    usage: dict[str, Any] | str | None = Field(default=None, description="Usage proxy, apart from tokens and from "
                                               "any cost: {unit, before, after, observed_at} where the endpoint "
                                               "or forge exposes one (a forge: its rate limit remaining around the "
                                               "run), else 'not_observable'; null for older runs.")
    network: dict[str, Any] | None = Field(default=None, description="The sandbox's network policy of a command "
                                           "kind's run: {policy: 'none'}, {policy: 'allowlist', hosts: "
                                           "['host:port', ...]} or {policy: 'unrestricted'} (network = true, the "
                                           "opt-out); null for kinds that run no command.")  # fmt: skip

    @property
    def reviewed(self) -> bool:
        """A review happened: the run completed and no failure code says otherwise.

        Every failure code names a run that gave no valid review (a bot's "usage limit
        reached", a window that closed, a contaminated run); recorded on a completed run
        (an import, a forge reply read as an empty review) it still means no review, so
        such a run is never counted as clean, as restraint or as a completed review."""
        return self.state.completed and self.failure_code is None

    def as_dict(self) -> dict[str, Any]:
        """The exported form: findings as objects; review runs carry no ``patch`` key."""
        data = {name: getattr(self, name) for name in type(self).model_fields}
        data["state"] = self.state.value
        data["findings"] = [f.model_dump(mode="json") for f in self.findings]
        if self.patch is None:
            del data["patch"]  # review runs export exactly what they always did
        if self.pull_request is None:
            del data["pull_request"]  # so do runs of kinds other than the forge's
        else:
            data["pull_request"] = self.pull_request.model_dump(mode="json")
        for key in ("guidance_blobs", "failure_code", "position", "usage", "network"):  # absent where they say nothing
            if data[key] is None:
                del data[key]
        if self.failure_code is not None:
            data["failure_code"] = self.failure_code.value
        return data
