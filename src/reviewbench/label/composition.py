"""What the human-labelled subset a judge is calibrated on must hold.

A judge that agrees with people on easy claims only tells nothing about the hard ones, so
calibration counts six kinds of claim among the claims with a final human label, and
refuses to run (before asking the judge anything) when any kind has fewer than the
rule's ``min_per_kind``:

- ``true_finding``: a true finding linked to a gold defect;
- ``safe_counterexample``: a false positive on a clean case (a change with no gold defect);
- ``subtle_false_positive``: a false positive on a defect case that points at a gold
  defect's lines (within :data:`NEAR_LINES`): at the right place, yet wrong;
- ``duplicate``: a claim labelled a duplicate;
- ``terse_valid``: a true finding (gold or incidental) of at most ``terse_chars`` characters;
- ``verbose_invalid``: a false positive of at least ``verbose_chars`` characters.

A claim may be of several kinds (a terse true finding is also a true finding).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..evidence.packets import PacketSet
from ..evidence.records import VALID_INCIDENTAL, LabelClass, LabelPacket, LabelRow, PacketClaim

__all__ = ["KINDS", "KIND_NAMES", "NEAR_LINES", "Composition", "claim_kinds", "composition"]

KINDS = ("true_finding", "safe_counterexample", "subtle_false_positive", "duplicate", "terse_valid",
         "verbose_invalid")  # fmt: skip
"""The kinds of claim a calibration subset must hold, in the order they are reported."""

NEAR_LINES = 3
"""Lines either side of a gold defect's location at which a false positive is a subtle one."""

KIND_NAMES = {"true_finding": "true findings", "safe_counterexample": "safe counterexamples",
              "subtle_false_positive": "subtle false positives", "duplicate": "duplicates",
              "terse_valid": "terse valid comments", "verbose_invalid": "verbose invalid comments"}  # fmt: skip


def _near(packet: LabelPacket, claim: PacketClaim) -> bool:
    return claim.path is not None and claim.line is not None and any(
        loc.path == claim.path and loc.start_line - NEAR_LINES <= claim.line <= loc.end_line + NEAR_LINES
        for defect in packet.defects for loc in defect.locations)  # fmt: skip


def claim_kinds(packet: LabelPacket, claim: PacketClaim, label: LabelRow, *, terse_chars: int,
                verbose_chars: int) -> set[str]:  # fmt: skip
    """The kinds ``claim`` (of ``packet``, finally labelled ``label``) is of."""
    kinds = set()
    length = len(claim.text.strip())
    if label.label_class is LabelClass.TRUE_FINDING:
        if label.defect_id and label.defect_id != VALID_INCIDENTAL:
            kinds.add("true_finding")
        if length <= terse_chars:
            kinds.add("terse_valid")
    elif label.label_class is LabelClass.FALSE_POSITIVE:
        if not packet.defects:
            kinds.add("safe_counterexample")
        elif _near(packet, claim):
            kinds.add("subtle_false_positive")
        if length >= verbose_chars:
            kinds.add("verbose_invalid")
    elif label.label_class is LabelClass.DUPLICATE:
        kinds.add("duplicate")
    return kinds


@dataclass(frozen=True)
class Composition:
    """How many claims of each kind the human-labelled subset holds, and which fall short."""

    counts: dict[str, int]
    min_per_kind: int
    terse_chars: int
    verbose_chars: int

    @property
    def missing(self) -> list[str]:
        return [kind for kind in KINDS if self.counts[kind] < self.min_per_kind]

    def as_dict(self) -> dict[str, Any]:
        return {"counts": self.counts, "min_per_kind": self.min_per_kind, "terse_chars": self.terse_chars,
                "verbose_chars": self.verbose_chars, "missing": self.missing,
                "absent": [kind for kind in KINDS if not self.counts[kind]],
                "waived": self.min_per_kind == 0}  # fmt: skip

    def describe(self) -> str:
        """The counts in words ("true findings 12, safe counterexamples 0, ...")."""
        return ", ".join(f"{KIND_NAMES[kind]} {self.counts[kind]}" for kind in KINDS)


def composition(packet_set: PacketSet, finals: Mapping[tuple[str, int], LabelRow], *, min_per_kind: int,
                terse_chars: int, verbose_chars: int) -> Composition:  # fmt: skip
    """Count the kinds among the claims of ``packet_set`` with a final human label (``finals``)."""
    counts = dict.fromkeys(KINDS, 0)
    for packet in packet_set.packets:
        for claim in packet.claims:
            label = finals.get((claim.comment_id, claim.part))
            if label is None:
                continue
            for kind in claim_kinds(packet, claim, label, terse_chars=terse_chars, verbose_chars=verbose_chars):
                counts[kind] += 1
    return Composition(counts=counts, min_per_kind=min_per_kind, terse_chars=terse_chars,
                       verbose_chars=verbose_chars)  # fmt: skip
