"""Noisy diffs: a defect buried among unrelated, behaviour-preserving refactors.

Real changes are rarely one clean edit. A noisy defect case is a mutation made at HEAD
combined, in one diff, with refactors of other files (the control refactors: a local
renamed, a loop rewritten, a reformat — each proven behaviour-preserving when made); gold
marks only the defect's lines. A noisy clean case combines refactors only and expects no
finding. Both are stratum ``noisy`` and validated like the rest (the clean one by the
suite still passing).

Parts are combined only across different files, so every part's text and every gold line
stays exactly as it was made. Fix reversals are not combined: their base is the fix
commit, not HEAD, where the refactors were made.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..records import GoldRecord, Provenance, Stratum
from .edits import SyntheticCase, make_case
from .naming import case_id

__all__ = ["noisy_cases"]

#: Refactors added to each noisy case.
NOISE_PER_CASE = 2


def _pick(pool: list[SyntheticCase], taken_paths: set[str], count: int) -> list[SyntheticCase]:
    chosen = []
    for part in list(pool):
        paths = {e.path for e in part.edits}
        if paths & taken_paths:
            continue
        chosen.append(part)
        taken_paths |= paths
        pool.remove(part)
        if len(chosen) == count:
            break
    return chosen


def noisy_cases(seed: int, base: str, defects: Sequence[SyntheticCase], refactors: Sequence[SyntheticCase],
                count: int) -> list[SyntheticCase]:  # fmt: skip
    """Up to ``count`` noisy defect cases (one per defect) and as many noisy clean cases,
    drawing :data:`NOISE_PER_CASE` refactors of other files for each."""
    pool = list(refactors)
    made: list[SyntheticCase] = []
    for defect in list(defects)[:count]:
        noise = _pick(pool, {e.path for e in defect.edits}, NOISE_PER_CASE)
        if not noise:
            continue
        key = f"noisy:{defect.case_id}"
        cid = case_id(seed, key)
        original = defect.mined.gold
        gold = original.model_copy(update={
            "case_id": cid, "stratum": Stratum.NOISY.value,
            "defects": [d.model_copy(update={"defect_id": f"{cid}-d{n}"}) for n, d in enumerate(original.defects, start=1)],
        })  # fmt: skip
        edits = sorted([*defect.edits, *(e for part in noise for e in part.edits)], key=lambda e: e.path)
        made.append(make_case(seed, key, base, edits, GoldRecord.model_validate(gold.model_dump(by_alias=True))))
    clean_wanted = len(made)
    for number in range(clean_wanted):
        noise = _pick(pool, set(), NOISE_PER_CASE)
        if len(noise) < NOISE_PER_CASE:
            break
        key = f"noisy-clean:{number}:" + ",".join(part.case_id for part in noise)
        gold = GoldRecord(case_id=case_id(seed, key), stratum=Stratum.NOISY, expect_finding=False, defects=[],
                          provenance=Provenance(operator="+".join(p.mined.gold.provenance.operator or "" for p in noise)))  # fmt: skip
        edits = sorted((e for part in noise for e in part.edits), key=lambda e: e.path)
        made.append(make_case(seed, key, base, edits, gold))
    return made
