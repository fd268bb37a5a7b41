"""The contamination split: could a model have seen a case in training?

Every case has a source date (``GoldRecord.source_date``: the fix's or introducing
commit's commit time; for cases made at mining time, the corpus's ``created_at``). Given a
cut-off date, every metric is computed on the cases before it and on those from it on,
each with its interval, and their difference (after − before) with a bootstrap interval
from the same case resamples.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ..errors import UsageError
from ..store.corpus import Corpus
from .metrics import CaseInfo, ConditionTally

__all__ = ["case_dates", "cutoff_scores", "date_histogram", "parse_cutoff"]


def parse_cutoff(text: str) -> datetime:
    """A cut-off given as YYYY-MM-DD (midnight UTC) or a full ISO 8601 time.

    Raises:
        UsageError: not a date.
    """
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"cutoff {text!r} is not a date (use YYYY-MM-DD)") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _parse(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def case_dates(corpus: Corpus) -> dict[str, datetime | None]:
    """Each case's source date: its own, else (older corpora) its provenance date for
    history cases, else the corpus's creation time (cases made at mining time)."""
    created = _parse(corpus.meta.created_at)
    out: dict[str, datetime | None] = {}
    for gold in corpus.gold:
        own = _parse(gold.source_date)
        if own is None and gold.provenance.commit:
            own = _parse(gold.provenance.date)
        out[gold.case_id] = own or created
    return out


def cutoff_scores(tally: ConditionTally, cases: Mapping[str, CaseInfo], dates: Mapping[str, datetime | None],
                  cutoff: datetime, resamples: int, seed: int) -> dict[str, Any]:  # fmt: skip
    """``{"date", "before", "after", "difference", "undated"}`` for one condition: clusters
    are split by their original case's source date (a variant goes with its original)."""
    before: set[str] = set()
    after: set[str] = set()
    undated = 0
    for case in cases.values():
        when = dates.get(case.cluster)
        if when is None:
            undated += 1
        elif when < cutoff:
            before.add(case.cluster)
        else:
            after.add(case.cluster)
    from .subsets import group_metrics  # numpy: not for `show`, which only wants the dates

    split = group_metrics(tally, {"before": before, "after": after}, resamples, seed, difference=("before", "after"))
    return {"date": cutoff.isoformat(), **split, "undated": undated}


def date_histogram(dates: Mapping[str, datetime | None]) -> dict[str, int]:
    """Cases per year-month of their source date (``"undated"`` for none)."""
    counts = Counter(d.strftime("%Y-%m") if d else "undated" for d in dates.values())
    return dict(sorted(counts.items()))
