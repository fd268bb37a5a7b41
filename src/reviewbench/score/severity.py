"""The severity basis flag: primary defect cases whose severity rests on unstated grounds.

A severity figure (``severity_match``, weighted points) is only as good as the reasons for
each gold severity. A primary defect case (a headline defect case: not a holdout or
exploratory case, not a mirror, control or rename variant) should say, for every defect,
what asset is at stake, what triggers it, the consequence, its scope and why existing
controls do not make it harmless (``records.SeverityBasis``). Those that do not are
flagged, by case id, in ``score`` and ``show``; nothing is scored differently.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..records import GoldRecord, SeverityBasis, Stratum
from .strata import HOLDOUT_STRATA

__all__ = ["BASIS_FIELDS", "primary", "severity_basis_flag"]

#: The fields a structured basis names, in words.
BASIS_FIELDS = "asset, trigger, consequence, scope, why controls do not make it harmless"


def primary(record: GoldRecord) -> bool:
    """A headline defect case: it expects a finding, has defects, and is no holdout,
    exploratory case, mirror or rename variant."""
    return (record.expect_finding and bool(record.defects) and not record.variant_of and not record.exploratory
            and record.stratum not in HOLDOUT_STRATA and record.stratum != Stratum.MIRROR)  # fmt: skip


def severity_basis_flag(records: Iterable[GoldRecord]) -> dict[str, Any]:
    """``{primary_cases, structured, missing}`` over the primary cases of ``records``:
    ``missing`` the ids of those with a defect whose basis is absent or one line of text."""
    cases = [r for r in records if primary(r)]
    missing = sorted(r.case_id for r in cases if not all(isinstance(d.severity_basis, SeverityBasis)
                                                         for d in r.defects))  # fmt: skip
    return {"primary_cases": len(cases), "structured": len(cases) - len(missing), "missing": missing}
