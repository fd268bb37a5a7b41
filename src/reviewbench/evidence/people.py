"""Who labelled, in aggregate: rater profiles, conflicts, and triage time per person.

Profiles are declared at invitation (``label invite … --language … --conflict …``) and
shown only counted over people, never per name, in ``label status``, ``agreement`` and the
report's labels section. Time is active triage time as the labels record it: minutes per
rater, and the adjudicators' extra time beside the raters' (their share of it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .records import Familiarity, SecurityReview
from .store import LABELS_DB, LabelStore, Role

__all__ = ["PeopleTime", "ProfileSummary", "people_time", "profile_summary", "raters_figure"]


@dataclass(frozen=True)
class ProfileSummary:
    """The raters' declared profiles, counted (a person is one count however many labels)."""

    raters: int
    """Raters invited or who labelled."""
    profiled: int
    """Of them, with a declared profile."""
    languages: dict[str, int]
    security_review: dict[str, int]
    familiarity: dict[str, int]
    authored_fixture: int
    conflicted: int
    """Authored the fixture or declared a conflict: they never give a claim's first label."""
    labels_set_aside: int = 0
    """Conflicted raters' current labels that do not count (nobody unconflicted labelled first)."""

    def as_dict(self) -> dict[str, Any]:
        return {"raters": self.raters, "profiled": self.profiled, "languages": self.languages,
                "security_review": self.security_review, "familiarity": self.familiarity,
                "authored_fixture": self.authored_fixture, "conflicted": self.conflicted,
                "labels_set_aside": self.labels_set_aside}  # fmt: skip

    def lines(self) -> list[str]:
        """Plain text, every count out of its whole."""
        def counts(values: dict[str, int]) -> str:
            return ", ".join(f"{k} {n}" for k, n in values.items()) or "none declared"

        return [f"rater profiles: {self.profiled} of {self.raters} raters declared one",
                f"  languages: {counts(self.languages)}",
                f"  security review: {counts(self.security_review)}",
                f"  familiarity with the code: {counts(self.familiarity)}",
                f"  conflicted: {self.conflicted} of {self.raters} (authored the fixture: {self.authored_fixture});"
                f" {self.labels_set_aside} of their labels wait for an unconflicted first label"]  # fmt: skip


def profile_summary(store: LabelStore) -> ProfileSummary:
    """The raters of ``store`` (invited or labelling) and their latest profiles, counted."""
    profiles = {name.casefold(): p for name, p in store.profiles(Role.RATER).items()}
    names = {p.name.casefold() for p in store.people(Role.RATER)}
    names |= {label.author.casefold() for label in store.rows(role=Role.RATER)}
    names |= set(profiles)
    declared = [profiles[n] for n in sorted(names) if n in profiles]
    languages = Counter(lang.casefold() for p in declared for lang in dict.fromkeys(p.languages))
    security = Counter(p.security_review.value for p in declared if p.security_review is not None)
    familiarity = Counter(p.familiarity.value for p in declared if p.familiarity is not None)
    raw = store.latest(Role.RATER, counted=False)
    counted = store.latest(Role.RATER)
    rubric = store.rubric_version
    set_aside = sum(1 for author, labels in raw.items() if profiles.get(author.casefold()) is not None
                    and profiles[author.casefold()].conflicted
                    for key, label in labels.items()
                    if label.rubric_version == rubric and key not in counted.get(author, {}))  # fmt: skip
    return ProfileSummary(
        raters=len(names), profiled=len(declared), languages=dict(sorted(languages.items())),
        security_review={v.value: security[v.value] for v in SecurityReview if security[v.value]},
        familiarity={v.value: familiarity[v.value] for v in Familiarity if familiarity[v.value]},
        authored_fixture=sum(p.authored_fixture for p in declared), conflicted=sum(p.conflicted for p in declared),
        labels_set_aside=set_aside)  # fmt: skip


@dataclass(frozen=True)
class PeopleTime:
    """Active triage minutes per person: what each rater spent, and the adjudicators' extra time."""

    raters: dict[str, dict[str, float]]
    """rater → {"claims", "minutes"} over their current labels given here."""
    adjudicators: dict[str, dict[str, float]]
    rater_minutes: float
    adjudication_minutes: float
    extra_share: float | None = field(default=None)
    """Adjudication minutes ÷ rater minutes: the extra time settling disagreements costs."""

    def as_dict(self) -> dict[str, Any]:
        return {"raters": self.raters, "adjudicators": self.adjudicators, "rater_minutes": self.rater_minutes,
                "adjudication_minutes": self.adjudication_minutes,
                "extra_share": {"value": self.extra_share, "numerator": self.adjudication_minutes,
                                "denominator": self.rater_minutes}}  # fmt: skip


def _per_person(store: LabelStore, role: Role) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for author, labels in sorted(store.latest(role).items()):
        timed = [label.row.triage_s for label in labels.values() if not label.carried and label.row.triage_s is not None]
        out[author] = {"claims": len(timed), "minutes": round(sum(timed) / 60, 4)}
    return out


def people_time(store: LabelStore) -> PeopleTime:
    """Minutes per rater and per adjudicator (each claim once per person: their latest label,
    carried copies left out, as agreement leaves them out), and the adjudicators' share."""
    raters = _per_person(store, Role.RATER)
    adjudicators = _per_person(store, Role.ADJUDICATOR)
    rater_minutes = round(sum(v["minutes"] for v in raters.values()), 4)
    adjudication = round(sum(v["minutes"] for v in adjudicators.values()), 4)
    share = round(adjudication / rater_minutes, 6) if rater_minutes else None
    return PeopleTime(raters=raters, adjudicators=adjudicators, rater_minutes=rater_minutes,
                      adjudication_minutes=adjudication, extra_share=share)  # fmt: skip


def raters_figure(rundir: Path) -> dict[str, Any] | None:
    """The score's ``raters`` block: profiles counted over people and the minutes, without
    names (None when ``rundir`` has no rater label nor invitation).

    Raises:
        LabelChainBroken: a label or profile row was edited, deleted or inserted by hand.
    """
    if not (rundir / LABELS_DB).is_file():
        return None
    with LabelStore(rundir) as store:
        store.verify_chain()
        profiles = profile_summary(store)
        if not profiles.raters:
            return None
        time = people_time(store)
    return {**profiles.as_dict(), "rater_minutes": time.rater_minutes,
            "adjudication_minutes": time.adjudication_minutes, "extra_share": time.extra_share}  # fmt: skip
