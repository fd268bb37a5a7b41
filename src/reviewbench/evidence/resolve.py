"""From stored labels to final labels, agreement and the human verdicts scoring uses.

A claim's label is final when an adjudicator labelled it (their latest row) and no rater
has since given a label at odds with it (that re-opens the claim for the adjudicator), or
when two or more raters labelled it and agree: same class, same defect link and, for a true finding,
the same five actionability answers. Raters who disagree put the claim in the
adjudication queue; a single rater's label is never final. Initial labels are never
replaced: adjudications are rows of their own.

Scoring works per reviewer comment (``"<run_id>:<index>"``, issue 13's ``comment_id``);
a comment split into atomic claims is a true finding when any of its parts is one (it
identifies every gold defect its parts link to), else unclear when any part is unclear,
a duplicate when every part is one, and a false positive otherwise.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..records import Evidence  # one vocabulary of evidence levels, scoring's
from .records import (
    ACTIONABILITY_FIELDS,
    VALID_INCIDENTAL,
    ActionabilityFields,
    ClaimCounts,
    LabelClass,
    LabelRow,
)
from .stats import Kappa, kappa_with_interval
from .store import LabelStore, Role, StoredLabel

__all__ = [
    "Agreement",
    "Basis",
    "ClaimStatus",
    "Evidence",
    "LabelVerdict",
    "PairAgreement",
    "agreement",
    "carried_claims",
    "claim_counts",
    "claim_status",
    "disagree",
    "final_labels",
    "human_verdicts",
]

Key = tuple[str, int]


class Basis(StrEnum):
    """Why a label is final."""

    ADJUDICATED = "adjudicated"
    AGREED = "agreed"
    JUDGE = "judge"


class ClaimStatus(StrEnum):
    """Where a claim stands in labelling."""

    UNLABELLED = "unlabelled"
    SINGLE = "single"
    DISPUTED = "disputed"
    AGREED = "agreed"
    ADJUDICATED = "adjudicated"


def disagree(a: LabelRow, b: LabelRow) -> bool:
    """Two labels differ in what scoring or actionability would use."""
    if a.label_class != b.label_class or (a.defect_id or None) != (b.defect_id or None):
        return True
    return a.label_class is LabelClass.TRUE_FINDING and a.fields != b.fields


def _agreed_fields(rows: list[LabelRow]) -> ActionabilityFields:
    values = {}
    for name in ACTIONABILITY_FIELDS:
        answers = {getattr(r.fields, name) for r in rows}
        values[name] = answers.pop() if len(answers) == 1 else None
    return ActionabilityFields(**values)


def reopened(raters: dict[str, dict[Key, StoredLabel]], adjudication: StoredLabel, key: Key) -> bool:
    """A rater's current label, written after the adjudication, disagrees with it (a new
    rater, or one who changed their mind): the claim goes back to the adjudicator."""
    return any(key in labels and labels[key].seq > adjudication.seq and disagree(labels[key].row, adjudication.row)
               for labels in raters.values())  # fmt: skip


def claim_status(raters: dict[str, dict[Key, StoredLabel]], adjudicated: dict[Key, StoredLabel],
                 key: Key) -> ClaimStatus:  # fmt: skip
    if key in adjudicated:
        return ClaimStatus.DISPUTED if reopened(raters, adjudicated[key], key) else ClaimStatus.ADJUDICATED
    rows = [labels[key].row for labels in raters.values() if key in labels]
    if not rows:
        return ClaimStatus.UNLABELLED
    if len(rows) == 1:
        return ClaimStatus.SINGLE
    if any(disagree(a, b) for a, b in itertools.combinations(rows, 2)):
        return ClaimStatus.DISPUTED
    return ClaimStatus.AGREED


def _adjudications(store: LabelStore) -> dict[Key, StoredLabel]:
    out: dict[Key, StoredLabel] = {}
    rubric = store.rubric_version
    for label in store.rows(role=Role.ADJUDICATOR):
        if label.rubric_version == rubric:  # under an older rubric: to be adjudicated again
            out[label.key] = label  # the latest adjudication of a claim, whoever gave it
    return out


def final_labels(store: LabelStore) -> dict[Key, tuple[LabelRow, Basis]]:
    """The final label of every claim that has one."""
    raters = store.latest(Role.RATER)
    adjudicated = _adjudications(store)
    out: dict[Key, tuple[LabelRow, Basis]] = {key: (label.row, Basis.ADJUDICATED) for key, label in adjudicated.items()
                                              if not reopened(raters, label, key)}  # fmt: skip
    keys = {key for labels in raters.values() for key in labels}
    for key in keys - set(adjudicated):
        rows = [labels[key].row for labels in raters.values() if key in labels]
        if len(rows) >= 2 and not any(disagree(a, b) for a, b in itertools.combinations(rows, 2)):
            first = rows[0]
            out[key] = (first.model_copy(update={"fields": _agreed_fields(rows), "triage_s": None,
                                                  "note": first.note}), Basis.AGREED)  # fmt: skip
    return out


class LabelVerdict(BaseModel):
    """The final label of one reviewer comment; overrides automatic verdicts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    comment_id: str = Field(description="'<run_id>:<finding index>', as in the run store and issue 13's verdicts.")
    run_id: str = Field(description="The run that produced the comment.")
    index: int = Field(description="The finding's index within its run.")
    case_id: str = Field(description="The case reviewed.")
    label_class: LabelClass = Field(description="Final class of the comment (its parts combined).")
    defect_ids: list[str] = Field(description="Gold defects the comment identifies (true findings only).")
    valid_incidental: bool = Field(description="A true finding that is real but none of the gold defects.")
    incidental_note: str | None = Field(default=None, description="What the incidental finding is.")
    fields: ActionabilityFields | None = Field(description="Actionability of a true finding; null otherwise.")
    basis: Basis = Field(description="Adjudicated, agreed by every rater who labelled it, or judge.")
    parts: int = Field(description="Atomic claims the comment was split into.")
    evidence: Evidence = Field(default=Evidence.HUMAN, description="'human', or 'judge' for a calibrated judge.")
    carried: bool = Field(default=False, description="The final label of some part rests on a label carried from "
                          "another run directory's identical claim ('label carry'), not given here.")  # fmt: skip
    claims: ClaimCounts | None = Field(default=None, description="Its parts by final class.")


def claim_counts(rows: list[LabelRow]) -> ClaimCounts:
    """A comment's labelled parts (``rows``, in part order) counted by class."""
    true = [r for r in rows if r.label_class is LabelClass.TRUE_FINDING]
    incidental = [r for r in true if r.defect_id == VALID_INCIDENTAL]
    return ClaimCounts(parts=len(rows), true=len(true) - len(incidental), incidental=len(incidental),
                       false_positive=sum(r.label_class is LabelClass.FALSE_POSITIVE for r in rows),
                       duplicate=sum(r.label_class is LabelClass.DUPLICATE for r in rows),
                       unclear=sum(r.label_class is LabelClass.UNCLEAR for r in rows),
                       incidental_notes=[(r.note or "").strip() for r in incidental])  # fmt: skip


def _combine(rows: list[LabelRow]) -> tuple[LabelClass, list[str], bool, str | None, ActionabilityFields | None]:
    classes = [r.label_class for r in rows]
    if LabelClass.TRUE_FINDING in classes:
        true = [r for r in rows if r.label_class is LabelClass.TRUE_FINDING]
        gold = sorted({r.defect_id for r in true if r.defect_id and r.defect_id != VALID_INCIDENTAL})
        incidental = [r for r in true if r.defect_id == VALID_INCIDENTAL]
        note = incidental[0].note if incidental else None
        return LabelClass.TRUE_FINDING, gold, bool(incidental) and not gold, note, true[0].fields
    if LabelClass.UNCLEAR in classes:
        return LabelClass.UNCLEAR, [], False, None, None
    if all(c is LabelClass.DUPLICATE for c in classes):
        return LabelClass.DUPLICATE, [], False, None, None
    return LabelClass.FALSE_POSITIVE, [], False, None, None


def carried_claims(store: LabelStore) -> set[Key]:
    """Claims whose current labels include one carried from another run directory: a
    rater's latest label, or the latest adjudication, is a copy (``label carry``)."""
    current = [label for labels in store.latest(Role.RATER).values() for label in labels.values()]
    current.extend(_adjudications(store).values())
    return {label.key for label in current if label.carried}


def verdicts_from(store: LabelStore) -> list[LabelVerdict]:
    """Human verdicts of every comment whose parts all have final labels."""
    finals = final_labels(store)
    carried = carried_claims(store)
    by_comment: dict[str, list[Any]] = {}
    for key, refs in store.claim_sources().items():  # a claim's label is every identical copy's
        for ref in refs:
            by_comment.setdefault(ref.source_id, []).append((ref, finals.get(key)))
    out = []
    for source_id, items in sorted(by_comment.items()):
        if any(final is None for _, final in items):
            continue
        items.sort(key=lambda item: item[0].part)
        rows = [final[0] for _, final in items]
        label_class, gold, incidental, note, fields = _combine(rows)
        ref = items[0][0]
        basis = Basis.ADJUDICATED if any(final[1] is Basis.ADJUDICATED for _, final in items) else Basis.AGREED
        out.append(LabelVerdict(comment_id=source_id, run_id=ref.run_id, index=ref.index, case_id=ref.case_id,
                                label_class=label_class, defect_ids=gold, valid_incidental=incidental,
                                incidental_note=note, fields=fields, basis=basis, parts=ref.parts,
                                carried=any((item[0].comment_id, item[0].part) in carried for item in items),
                                claims=claim_counts(rows)))  # fmt: skip
    return out


def human_verdicts(rundir: Path) -> list[LabelVerdict]:
    """The final human label of every fully labelled comment of ``rundir``, by comment id.

    Raises:
        CorpusError: ``rundir`` is not a run directory.
        LabelChainBroken: a label row was edited, deleted or inserted by hand.
    """
    with LabelStore(rundir) as store:
        store.verify_chain()
        return verdicts_from(store)


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of one pair of raters: on the class, and on each actionability field."""

    raters: tuple[str, str]
    classes: Kappa
    fields: dict[str, Kappa]

    def as_dict(self) -> dict[str, Any]:
        return {"raters": list(self.raters), **self.classes.as_dict(),
                "fields": {name: k.as_dict() for name, k in self.fields.items()}}  # fmt: skip


@dataclass(frozen=True)
class Agreement:
    """Issue 14's agreement report, over the labels given in this run directory."""

    pairs: list[PairAgreement]
    adjudicated: int
    adjudication_s: float
    disputed: int
    carried: int = 0
    """Claims whose current labels include a carried one: kept out of the pairs, the
    adjudication count and its time (their agreement was measured where they were given)."""

    def as_dict(self) -> dict[str, Any]:
        return {"pairs": [p.as_dict() for p in self.pairs], "adjudicated": self.adjudicated,
                "adjudication_s": self.adjudication_s, "disputed": self.disputed,
                "carried": self.carried}  # fmt: skip


def pair_agreement(a: dict[Key, StoredLabel], b: dict[Key, StoredLabel], names: tuple[str, str], *,
                   resamples: int = 2000, seed: int = 0) -> PairAgreement:  # fmt: skip
    shared = sorted(set(a) & set(b))
    classes = kappa_with_interval([a[k].row.label_class.value for k in shared],
                                  [b[k].row.label_class.value for k in shared], resamples=resamples, seed=seed)  # fmt: skip
    fields = {}
    for name in ACTIONABILITY_FIELDS:
        both = [k for k in shared if getattr(a[k].row.fields, name) is not None
                and getattr(b[k].row.fields, name) is not None]  # fmt: skip
        fields[name] = kappa_with_interval([_yes(getattr(a[k].row.fields, name)) for k in both],
                                           [_yes(getattr(b[k].row.fields, name)) for k in both],
                                           resamples=resamples, seed=seed)  # fmt: skip
    return PairAgreement(raters=names, classes=classes, fields=fields)


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def agreement(store: LabelStore, *, resamples: int = 2000, seed: int = 0) -> Agreement:
    """Every pair of raters on the claims both labelled (each rater's latest label).

    Only labels given here count: a rater's latest label that was carried from another run
    directory (``label carry``) is a copy of a judgement already counted there, so the claim
    leaves that rater's pairs, and carried adjudications leave the adjudication count and time.
    """
    raters = store.latest(Role.RATER)
    fresh = {name: own for name, labels in raters.items()
             if (own := {key: label for key, label in labels.items() if not label.carried})}  # fmt: skip
    pairs = [pair_agreement(fresh[x], fresh[y], (x, y), resamples=resamples, seed=seed)
             for x, y in itertools.combinations(sorted(fresh), 2)]  # fmt: skip
    adjudicated = _adjudications(store)
    keys: Iterable[Key] = {key for labels in raters.values() for key in labels}
    disputed = sum(claim_status(raters, adjudicated, key) is ClaimStatus.DISPUTED for key in keys)
    seconds = sum(label.row.triage_s or 0.0 for per in store.latest(Role.ADJUDICATOR).values() for label in per.values()
                  if not label.carried)  # fmt: skip
    settled = sum(not reopened(raters, label, key) for key, label in adjudicated.items() if not label.carried)
    return Agreement(pairs=pairs, adjudicated=settled, adjudication_s=round(seconds, 3), disputed=disputed,
                     carried=len(carried_claims(store)))  # fmt: skip
