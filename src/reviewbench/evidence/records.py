"""Records of human labelling: packets raters see, and the labels they give.

A packet is de-identified: it names no condition, model, prompt, guidance, repetition or
run. Its claims carry an opaque ``comment_id`` (the same for every atomic part of one
reviewer comment) and a ``part`` number; the label store alone maps them back to the run
store's ``"<run_id>:<finding index>"``.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..records import Evidence

__all__ = [
    "ACTIONABILITY_FIELDS",
    "MAX_TRIAGE_S",
    "RUBRIC_VERSION",
    "VALID_INCIDENTAL",
    "ActionabilityFields",
    "ClaimCounts",
    "Familiarity",
    "LabelClass",
    "LabelPacket",
    "LabelRow",
    "PacketClaim",
    "PacketDefect",
    "PacketLocation",
    "PacketTests",
    "PracticeItem",
    "RaterProfile",
    "SecurityReview",
    "VerdictOverride",
]

RUBRIC_VERSION = "003-1"
"""Version of the labelling rubric (its classes and five actionability fields)."""

VALID_INCIDENTAL = "valid_incidental"
"""``defect_id`` of a true finding that is real but is none of the case's gold defects."""

ACTIONABILITY_FIELDS = ("location", "consequence", "evidence", "safe_fix", "severity_fit")

MAX_TRIAGE_S = 86_400.0
"""The most active seconds one claim's label may record (a day): past it, a time is an error."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class LabelClass(StrEnum):
    """What a claim is, as judged against the change and its gold defects."""

    TRUE_FINDING = "true_finding"
    FALSE_POSITIVE = "false_positive"
    DUPLICATE = "duplicate"
    UNCLEAR = "unclear"


class ActionabilityFields(_Record):
    """The five yes/no actionability questions; null when not assessed."""

    location: bool | None = Field(default=None, description="Does it point at the affected location?")
    consequence: bool | None = Field(default=None, description="Does it state what goes wrong?")
    evidence: bool | None = Field(default=None, description="Does it give evidence a reader can check?")
    safe_fix: bool | None = Field(default=None, description="Does it propose a fix that is safe?")
    severity_fit: bool | None = Field(default=None, description="Does its severity fit the defect?")

    def complete(self) -> bool:
        """Every field answered."""
        return all(getattr(self, name) is not None for name in ACTIONABILITY_FIELDS)

    def passes(self) -> bool:
        """Every field answered yes."""
        return all(getattr(self, name) is True for name in ACTIONABILITY_FIELDS)


class LabelRow(_Record):
    """One label of one claim, as imported, exported and stored (issue 14, item 3)."""

    comment_id: str = Field(description="The claim's opaque comment id, as in the packet.")
    part: int = Field(default=0, ge=0, description="Which atomic part of the comment (0 when not split).")
    label_class: LabelClass = Field(alias="class", description="The claim's class.")
    defect_id: str | None = Field(
        default=None,
        description="For a true finding: the gold defect it identifies, or 'valid_incidental'.",
    )
    fields: ActionabilityFields = Field(default_factory=ActionabilityFields, description="Actionability.")
    triage_s: float | None = Field(default=None, ge=0, le=MAX_TRIAGE_S, allow_inf_nan=False,
                                   description="Active seconds spent on this claim (finite, at most a day).")
    note: str | None = Field(default=None, description="Free text; for a valid incidental finding, what it is.")
    reason: str | None = Field(default=None, description="Adjudications only: why this final label.")

    @model_validator(mode="after")
    def _linked(self) -> LabelRow:
        if self.label_class is LabelClass.TRUE_FINDING and not self.defect_id:
            raise ValueError("a true_finding names the gold defect it identifies, or 'valid_incidental'")
        if self.label_class is not LabelClass.TRUE_FINDING and self.defect_id:
            raise ValueError("only a true_finding links to a defect")
        if self.defect_id == VALID_INCIDENTAL and not (self.note or "").strip():
            raise ValueError("a valid_incidental finding needs a short description in 'note'")
        return self


class PacketLocation(_Record):
    """Where a gold defect lies in the patched tree."""

    path: str = Field(description="File path in the patched tree.")
    start_line: int = Field(description="First line (1-based).")
    end_line: int = Field(description="Last line, inclusive.")


class PacketDefect(_Record):
    """A gold defect of the case, so a rater can link a true finding to it."""

    defect_id: str = Field(description="The defect's id in the corpus gold.")
    description: str = Field(description="Human-readable description of the defect.")
    locations: list[PacketLocation] = Field(description="Where it lies.")


class PacketClaim(_Record):
    """One atomic claim of a review comment."""

    comment_id: str = Field(description="Opaque id of the comment; shared by its atomic parts.")
    part: int = Field(ge=0, description="Index of this atomic part within the comment.")
    parts: int = Field(ge=1, description="How many atomic parts the comment was split into.")
    path: str | None = Field(default=None, description="File the comment names, if any.")
    line: int | None = Field(default=None, description="Line it names, if any.")
    text: str = Field(description="The claim's text (untrusted: escape when shown).")


class PacketTests(_Record):
    """What validation observed when it ran the repository's tests on the case."""

    status: str | None = Field(description="Validation status, or null when never validated.")
    test_cmd: str | None = Field(default=None, description="The test command run.")
    exit_code: int | None = Field(default=None, description="Its exit code on the patched tree.")
    failing_tests: list[str] = Field(default_factory=list, description="Tests that failed.")
    output: str | None = Field(default=None, description="The end of validation's test log for the case.")


class LabelPacket(_Record):
    """One review (case × run) as a rater sees it; nothing names its condition."""

    packet_id: str = Field(description="Opaque id; reveals neither case, run nor condition.")
    title: str = Field(description="The case's neutral title.")
    paths: list[str] = Field(description="Files the change touches.")
    diff: str = Field(description="The unified diff under review.")
    tests: PacketTests = Field(description="Test output of validation.")
    defects: list[PacketDefect] = Field(description="Gold defects of the case; empty for a clean case.")
    claims: list[PacketClaim] = Field(description="The review's atomic claims, in a fixed randomised order.")


class ClaimCounts(_Record):
    """A comment's atomic claims by final class (its parts, each labelled on its own)."""

    parts: int = Field(ge=1, description="Atomic claims the comment was split into.")
    true: int = Field(default=0, ge=0, description="Parts labelled true findings of a gold defect.")
    incidental: int = Field(default=0, ge=0, description="Parts labelled valid incidental findings: real, "
                            "none of the gold defects.")
    false_positive: int = Field(default=0, ge=0, description="Parts labelled false positives.")
    duplicate: int = Field(default=0, ge=0, description="Parts labelled duplicates.")
    unclear: int = Field(default=0, ge=0, description="Parts labelled unclear.")
    incidental_notes: list[str] = Field(default_factory=list, description="What each valid incidental part is "
                                        "(its label's note), in part order.")


class VerdictOverride(_Record):
    """A label for one comment, from a judge or a human (the labelling stage)."""

    comment_id: str = Field(description="The comment labelled.")
    identified: bool = Field(description="Whether the comment identifies the defect it is located at.")
    false_positive: bool | None = Field(default=None, description="Override of false_positive, if given.")
    evidence: Evidence = Field(description="judge or human.")
    unclear: bool = Field(default=False, description="Labelled unclear: precision leaves it out and reports it beside.")
    claims: ClaimCounts | None = Field(default=None, description="The comment's atomic claims by class (every "
                                       "part labelled): precision counts them, a valid incidental one is "
                                       "reported apart.")


class SecurityReview(StrEnum):
    """How much security review a person has done."""

    NONE = "none"
    OCCASIONAL = "occasional"
    REGULAR = "regular"


class Familiarity(StrEnum):
    """How well a person knows the code under review."""

    NONE = "none"
    SOME = "some"
    MAINTAINER = "maintainer"


class RaterProfile(_Record):
    """Who a rater (or adjudicator) is, declared at invitation: shown only in aggregate.

    A conflicted person (``authored_fixture``, or a declared ``conflict``) never gives a
    claim's first independent label: their label of a claim counts only after a rater
    without a conflict has labelled it.
    """

    languages: list[str] = Field(default_factory=list, description="Programming languages they review in.")
    security_review: SecurityReview | None = Field(default=None, description="Security-review experience.")
    familiarity: Familiarity | None = Field(default=None, description="Familiarity with the code under review.")
    authored_fixture: bool = Field(default=False, description="They wrote (part of) the fixture or corpus: the "
                                   "changes, their fixes or the gold.")
    conflict: str | None = Field(default=None, description="A declared conflict of interest, in their words.")

    @property
    def conflicted(self) -> bool:
        """May not give a claim's first independent label."""
        return self.authored_fixture or bool((self.conflict or "").strip())


class PracticeItem(_Record):
    """One packet of a practice set, outside the corpus, with the reference label of each claim.

    Raters label a practice set before their first real packet and see their agreement with
    the reference; practice labels never count as labels of the run.
    """

    packet: LabelPacket = Field(description="A packet as raters see it (its ids are the practice set's own).")
    answers: list[LabelRow] = Field(description="The reference label of every claim of the packet.")

    @model_validator(mode="after")
    def _answered(self) -> PracticeItem:
        claims = {(c.comment_id, c.part) for c in self.packet.claims}
        answered = [(a.comment_id, a.part) for a in self.answers]
        if not claims:
            raise ValueError("a practice packet has at least one claim")
        if len(set(answered)) != len(answered) or set(answered) != claims:
            raise ValueError("answers must give exactly one label to every claim of the packet")
        gold = {d.defect_id for d in self.packet.defects} | {VALID_INCIDENTAL}
        if any(a.defect_id is not None and a.defect_id not in gold for a in self.answers):
            raise ValueError("an answer links a defect the packet does not list")
        return self
