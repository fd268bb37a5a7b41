"""People's and a judge's labels as evidence the score reads (below ``score``).

The label store (``RUNDIR/labels.sqlite``, append-only, hash-chained), the label and
packet records, resolution of raters' labels into final labels and verdict overrides,
agreement statistics and the figures from labelled comments. The human workflow that
writes labels (the app, packet export, queue, settle, the judge) is ``label/``.


Names load on first use: scoring reads the records without paying for numpy.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:  # the type checker sees the names; the interpreter loads them on first use
    from .figures import LabelledPrecision, labelled_precision, labelled_recall, with_unclear
    from .overrides import judge_verdicts, label_verdicts, score_overrides
    from .records import LabelClass, LabelRow, VerdictOverride
    from .resolve import Agreement, Basis, LabelVerdict, agreement, final_labels, human_verdicts
    from .store import LABELS_DB, LabelStore, Role

__all__ = [
    "LABELS_DB",
    "Agreement",
    "Basis",
    "LabelClass",
    "LabelRow",
    "LabelStore",
    "LabelVerdict",
    "LabelledPrecision",
    "Role",
    "VerdictOverride",
    "agreement",
    "final_labels",
    "human_verdicts",
    "judge_verdicts",
    "label_verdicts",
    "labelled_precision",
    "labelled_recall",
    "score_overrides",
    "with_unclear",
]

__getattr__, __dir__ = _lazy_exports(globals(), {
    "Agreement": ".resolve",
    "Basis": ".resolve",
    "LABELS_DB": ".store",
    "LabelClass": ".records",
    "LabelRow": ".records",
    "LabelStore": ".store",
    "LabelVerdict": ".resolve",
    "LabelledPrecision": ".figures",
    "Role": ".store",
    "VerdictOverride": ".records",
    "agreement": ".resolve",
    "final_labels": ".resolve",
    "human_verdicts": ".resolve",
    "judge_verdicts": ".overrides",
    "label_verdicts": ".overrides",
    "labelled_precision": ".figures",
    "labelled_recall": ".figures",
    "score_overrides": ".overrides",
    "with_unclear": ".figures",
})
