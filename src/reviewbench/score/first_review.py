"""Time to first review: how long a review bot on a forge took to answer.

Only forge runs (``kind = "github"``/``"gitea"``) have it: the seconds from the trigger
(the trigger comment, or the pull request's opening) to the bot's first review or comment,
by the forge's own clock (``RunRow.pull_request``). Its shape is the latency metric's —
median, IQR, min and max — over the runs that were reviewed, with ``num`` = runs with a
first review and ``den`` = forge runs. A run the bot never answered (``timed_out``) is not
dropped: it stays in the denominator and is counted in ``not_reviewed`` by state, beside
runs that failed or were interrupted before a review appeared.

A condition with no forge run has no such metric: it is absent from its metrics, not zero.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..config.reviewers import capabilities_of
from ..store.runs import RunRow
from .metrics import latency_summary
from .result import MetricValue

__all__ = ["FirstReviews", "first_review_note", "first_reviews"]



@dataclass
class FirstReviews:
    """The forge runs of one condition: seconds to the first review, and those never reviewed."""

    runs: int = 0
    seconds: list[float] = field(default_factory=list)
    not_reviewed: Counter[str] = field(default_factory=Counter)
    """Forge runs with no review, by terminal state (``timed_out``, ``failed``, ``cancelled``…)."""

    def add(self, run: RunRow) -> None:
        """Count ``run`` if it is a forge run (others are not this metric's)."""
        if not capabilities_of(str(run.params.get("kind"))).opens_pull_requests:
            return
        self.runs += 1
        pull = run.pull_request
        seconds = pull.time_to_first_review_s if pull is not None else None
        if run.reviewed and seconds is not None:
            self.seconds.append(float(seconds))
        elif not run.reviewed:  # a completed run whose failure code says no review: its code
            self.not_reviewed[run.state.value if not run.state.completed else str(run.failure_code)] += 1
        # A completed run without a time (recorded before forge runs kept their pull request)
        # stays in the denominator, and in neither count: den - num - not reviewed.


def first_reviews(runs: Iterable[RunRow]) -> dict[str, Any] | None:
    """``latency_summary``'s shape over the reviewed forge runs among ``runs``, with
    ``num``/``den`` = reviewed / forge runs and ``not_reviewed`` by state; None without a
    forge run."""
    tally = FirstReviews()
    for run in runs:
        tally.add(run)
    if not tally.runs:
        return None
    summary = latency_summary(tally.seconds)
    summary.update(
        num=len(tally.seconds),
        den=tally.runs,
        not_reviewed=dict(sorted(tally.not_reviewed.items())),
    )
    return summary


def first_review_note(m: MetricValue) -> str:
    """The metric's IQR, min, max and the runs not reviewed, in words (``score`` and the report)."""
    missing = ", ".join(f"{state} {n}" for state, n in (m.not_reviewed or {}).items())
    parts = [] if m.value is None else [f"IQR [{m.lo:.3f}, {m.hi:.3f}] min {m.min:.3f} max {m.max:.3f}"]
    parts.append(f"reviewed {m.num} of {m.den} forge runs; not reviewed: {missing or 'none'}")
    return "; ".join(parts)
