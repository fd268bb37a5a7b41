"""Mirrors for the hand-written corpora of the scoring, report and label tests.

Automatic identification needs a mirror (``score/discriminate.py``): a naming finding on a
defect case identifies its defect only when the same condition, in the same repetition,
said nothing naming it on the case's mirror, the same change the other way (stratum
``mirror``, the same ``pair_id``, ``changed`` the defect's locations, no defect, tests
green). These helpers give a hand-written defect case its mirror, so each fixture states
only which cases are paired and what the reviewers said on the mirrors.
"""

from __future__ import annotations

from reviewbench.records import Case, GoldRecord, Validation


def mirror_id(case_id: str) -> str:
    """The mirror's case id for a defect case's."""
    return f"{case_id}-mirror"


def paired(case: Case, gold: GoldRecord, status: str = "not_observed") -> list[tuple[Case, GoldRecord]]:
    """``case`` and its mirror, to write both: the defect case's gold with a ``pair_id``,
    then the mirror (same files; ``changed`` every defect location; validation ``status``,
    ``not_observed`` by default: a valid mirror)."""
    pair = f"pair-{case.case_id}"
    mirror = mirror_id(case.case_id)
    changed = [loc for d in gold.defects for loc in d.locations]
    return [
        (case, gold.model_copy(update={"pair_id": pair})),
        (case.model_copy(update={"case_id": mirror, "patch": f"patches/{mirror}.diff"}),
         GoldRecord(case_id=mirror, stratum="mirror", expect_finding=False, pair_id=pair, changed=changed,
                    defects=[], provenance=gold.provenance, source_date=gold.source_date,
                    validation=Validation(status=status))),
    ]  # fmt: skip
