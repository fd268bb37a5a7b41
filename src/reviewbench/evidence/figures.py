"""Figures from labelled comments (pure functions, no I/O).

Scoring plugs these in where labels exist (issue 14, item 6):

- **recall** counts a gold defect once per run when a comment of that run labelled
  ``true_finding`` links to it; valid incidental findings never enter its denominator;
- **precision** = true findings ÷ (true findings + false positives): duplicates and
  unclear comments are out of the denominator and reported beside it; *gold-defect*
  precision credits only links to gold defects, *expanded* precision also valid incidental
  findings; a comment split into atomic claims counts each of its labelled parts (a false
  claim inside a true comment is not hidden), as the score's precision does;
- the **unclear sensitivity** recomputes precision with every unclear comment counted
  false, then true (:func:`with_unclear`, the arithmetic the score's own
  precision uses too; the score re-runs the registered decision at each bound and flags a
  change, which the report's labels section shows);
- **duplicate rate** = duplicates ÷ (true findings + false positives + duplicates).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .records import LabelClass
from .resolve import LabelVerdict
from .stats import Rate

__all__ = ["LabelledPrecision", "labelled_precision", "labelled_recall", "with_unclear"]

T = TypeVar("T")


def with_unclear(num: T, den: T, unclear: T, *, as_true: bool) -> tuple[T, T]:
    """``(num, den)`` of a rate with the ``unclear`` claims it left out put back, every one
    counted true (``as_true``) or every one false. Numbers or numpy arrays alike."""
    return (num + unclear if as_true else num), den + unclear  # type: ignore[operator]


@dataclass(frozen=True)
class LabelledPrecision:
    """Comment-level precision with what it leaves out shown beside it."""

    expanded: Rate
    """(gold + valid incidental true findings) ÷ (true findings + false positives)."""
    gold: Rate
    """Gold-linked true findings ÷ (true findings + false positives)."""
    unclear: int
    duplicates: int
    unclear_as_false: Rate
    """Expanded precision with every unclear comment counted as a false positive."""
    unclear_as_true: Rate
    """Expanded precision with every unclear comment counted as a true finding."""
    duplicate_rate: Rate

    def as_dict(self) -> dict[str, Any]:
        return {"expanded": self.expanded.as_dict(), "gold": self.gold.as_dict(), "unclear": self.unclear,
                "duplicates": self.duplicates, "unclear_as_false": self.unclear_as_false.as_dict(),
                "unclear_as_true": self.unclear_as_true.as_dict(),
                "duplicate_rate": self.duplicate_rate.as_dict()}  # fmt: skip


def labelled_precision(verdicts: Iterable[LabelVerdict]) -> LabelledPrecision:
    """Precision over labelled comments (pass the comments of the runs in the analysis)."""
    gold = incidental = false = unclear = duplicates = 0
    for v in verdicts:
        c = v.claims
        if c is not None and c.parts > 1:  # a split comment counts claim by claim: no false part hides
            gold, incidental, false = gold + c.true, incidental + c.incidental, false + c.false_positive
            unclear, duplicates = unclear + c.unclear, duplicates + c.duplicate
        elif v.label_class is LabelClass.TRUE_FINDING:
            if v.defect_ids:
                gold += 1
            else:
                incidental += 1
        elif v.label_class is LabelClass.FALSE_POSITIVE:
            false += 1
        elif v.label_class is LabelClass.UNCLEAR:
            unclear += 1
        else:
            duplicates += 1
    true = gold + incidental
    return LabelledPrecision(
        expanded=Rate(true, true + false), gold=Rate(gold, true + false), unclear=unclear, duplicates=duplicates,
        unclear_as_false=Rate(*with_unclear(true, true + false, unclear, as_true=False)),
        unclear_as_true=Rate(*with_unclear(true, true + false, unclear, as_true=True)),
        duplicate_rate=Rate(duplicates, true + false + duplicates),
    )  # fmt: skip


def labelled_recall(verdicts: Iterable[LabelVerdict], defects_by_run: Mapping[str, Collection[str]]) -> Rate:
    """Gold defects identified ÷ gold defects, summed over the runs of ``defects_by_run``.

    Args:
        defects_by_run: each run in the analysis (completed defect-case runs, or every
            run for an end-to-end figure) and its case's gold defect ids.
    """
    found: dict[str, set[str]] = {}
    for v in verdicts:
        if v.label_class is LabelClass.TRUE_FINDING and v.run_id in defects_by_run:
            found.setdefault(v.run_id, set()).update(v.defect_ids)
    numerator = sum(len(set(defects) & found.get(run_id, set())) for run_id, defects in defects_by_run.items())
    return Rate(numerator, sum(len(set(defects)) for defects in defects_by_run.values()))
