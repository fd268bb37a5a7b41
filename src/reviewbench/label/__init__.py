"""Human labels and a calibrated judge (issue 14).

Two blinded raters label every claim of de-identified packets; their labels are kept
append-only in ``RUNDIR/labels.sqlite``; disagreements are adjudicated; agreement is
published; an LLM judge may assist only once calibrated against the people.
"""

from ..evidence.figures import LabelledPrecision, labelled_precision, labelled_recall
from ..evidence.overrides import label_verdicts
from ..evidence.packets import build_packets, comment_key, split_claim
from ..evidence.records import (
    ACTIONABILITY_FIELDS,
    RUBRIC_VERSION,
    VALID_INCIDENTAL,
    ActionabilityFields,
    LabelClass,
    LabelPacket,
    LabelRow,
    PacketClaim,
    PacketDefect,
)
from ..evidence.resolve import (
    Agreement,
    Basis,
    Evidence,
    LabelVerdict,
    agreement,
    final_labels,
    human_verdicts,
)
from ..evidence.stats import actionability_rate, cohen_kappa, kappa_with_interval, triage_minutes
from ..evidence.store import LABELS_DB, LabelStore, Role
from .io import export_labels, export_packets, import_labels, label_metrics, read_label_rows

__all__ = [
    "ACTIONABILITY_FIELDS",
    "LABELS_DB",
    "RUBRIC_VERSION",
    "VALID_INCIDENTAL",
    "ActionabilityFields",
    "Agreement",
    "Basis",
    "Evidence",
    "LabelClass",
    "LabelPacket",
    "LabelRow",
    "LabelStore",
    "LabelVerdict",
    "LabelledPrecision",
    "PacketClaim",
    "PacketDefect",
    "Role",
    "actionability_rate",
    "agreement",
    "build_packets",
    "cohen_kappa",
    "comment_key",
    "export_labels",
    "export_packets",
    "final_labels",
    "human_verdicts",
    "import_labels",
    "kappa_with_interval",
    "label_metrics",
    "label_verdicts",
    "labelled_precision",
    "labelled_recall",
    "read_label_rows",
    "split_claim",
    "triage_minutes",
]
