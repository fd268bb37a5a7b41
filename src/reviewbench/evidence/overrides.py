"""Every label scoring may use, with its evidence level: people first, a calibrated judge after.

A comment takes the human verdict when it has one. Otherwise it takes the judge's labels
only when the judge's latest calibration in ``labels.sqlite`` is usable; an actionability
field whose own calibration failed is left unassessed (null) rather than taken from the
judge. Anything else keeps its automatic verdict (it is simply absent here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .records import LabelClass, VerdictOverride
from .resolve import Basis, Evidence, LabelVerdict, _combine, claim_counts, verdicts_from
from .store import LABELS_DB, LabelStore, Role

__all__ = ["judge_verdicts", "label_verdicts", "score_overrides"]


def judge_verdicts(store: LabelStore, human: set[str]) -> list[LabelVerdict]:
    """Judge verdicts of comments without a human one, from usable calibrated judges only."""
    by_judge = store.latest(Role.JUDGE)
    parts_of: dict[str, list[Any]] = {}
    for key, refs in store.claim_sources().items():  # every identical copy takes the claim's label
        for ref in refs:
            parts_of.setdefault(ref.source_id, []).append((key, ref))
    out: dict[str, LabelVerdict] = {}
    for judge, labels in sorted(by_judge.items()):
        calibration = store.latest_calibration(judge)
        if calibration is None or not calibration[1].get("usable"):
            continue
        disabled = {name for name, k in calibration[1].get("fields", {}).items() if not k.get("usable")}
        for source_id, items in sorted(parts_of.items()):
            if source_id in human or source_id in out or any(key not in labels for key, _ in items):
                continue
            items.sort(key=lambda item: item[1].part)
            rows = [labels[key].row for key, _ in items]
            label_class, gold, incidental, note, fields = _combine(rows)
            if fields is not None and disabled:
                fields = fields.model_copy(update=dict.fromkeys(disabled))
            ref = items[0][1]
            out[source_id] = LabelVerdict(comment_id=source_id, run_id=ref.run_id, index=ref.index,
                                          case_id=ref.case_id, label_class=label_class, defect_ids=gold,
                                          valid_incidental=incidental, incidental_note=note, fields=fields,
                                          basis=Basis.JUDGE, parts=ref.parts, evidence=Evidence.JUDGE,
                                          claims=claim_counts(rows))  # fmt: skip
    return list(out.values())


def label_verdicts(rundir: Path) -> list[LabelVerdict]:
    """Human verdicts, then usable-judge verdicts for the comments people have not settled.

    Raises:
        LabelChainBroken: a label or calibration row was edited, deleted or inserted by hand.
    """
    with LabelStore(rundir) as store:
        store.verify_chain()  # labels edited by hand are not scored
        human = verdicts_from(store)
        return human + judge_verdicts(store, {v.comment_id for v in human})


def score_overrides(rundir: Path) -> dict[str, VerdictOverride]:
    """The labels of ``rundir`` as scoring's overrides of automatic verdicts, by comment id.

    A true finding linked to a gold defect identifies it; a valid incidental finding is real
    but identifies no gold defect (not a false positive either); a false positive is one; a
    duplicate or an unclear claim identifies nothing and leaves the false-positive verdict to
    the automatic matching; an unclear one is marked so precision leaves it out of its
    denominator and reports it beside (with the all-false / all-true sensitivity). Each
    carries its parts by class (``claims``): precision counts atomic claims, and a valid
    incidental part is reported apart. Empty when the run directory has no labels.
    """
    if not (rundir / LABELS_DB).is_file():
        return {}
    out: dict[str, VerdictOverride] = {}
    for verdict in label_verdicts(rundir):
        true = verdict.label_class is LabelClass.TRUE_FINDING
        false_positive = {LabelClass.TRUE_FINDING: False, LabelClass.FALSE_POSITIVE: True}.get(verdict.label_class)
        out[verdict.comment_id] = VerdictOverride(comment_id=verdict.comment_id,
                                                  identified=true and bool(verdict.defect_ids),
                                                  false_positive=false_positive, evidence=verdict.evidence,
                                                  unclear=verdict.label_class is LabelClass.UNCLEAR,
                                                  claims=verdict.claims)  # fmt: skip
    return out
