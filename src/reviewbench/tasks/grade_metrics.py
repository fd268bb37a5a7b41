"""The fix-task scoreboard: resolve rate, pass@k, pass^k, overreach, paired comparisons.

Every figure is Σnum/Σden over units that each belong to one task, so the intervals come
from scoring's case-clustered bootstrap (:mod:`reviewbench.score.stats`): resample tasks
with replacement and carry all their runs. One call resamples every column of every
condition, which is also what pairs the differences between conditions.

- ``resolve_rate``: resolved runs / scored runs. A run without a patch, or with a patch
  rejected or not applying, is scored (not resolved); only runs whose grading itself
  broke (status ``error``) are not scored.
- ``applies_clean_rate``: runs whose patch passed strict ``git apply --check`` / scored runs.
- ``partial_rate``: runs not resolved with at least one FAIL_TO_PASS test passing / scored runs.
- ``overreach_rate``: runs whose patch changes a file outside the gold patch's files /
  runs with a parsable patch that changes at least one file.
- ``pass@k`` (unbiased, Chen et al. 2021): per task with ``n`` scored runs of which ``c``
  resolved, ``1 - C(n-c, k) / C(n, k)``: the chance that at least one of k runs drawn
  without replacement resolves it; averaged over tasks with ``n >= k``.
- ``pass^k`` (Yao et al. 2024): per task ``C(c, k) / C(n, k)``, the chance that all k
  resolve it; averaged likewise.
- Paired: for two conditions, the (task, repetition) pairs scored under both: resolved by
  both, by one only, by neither; the difference of resolve rates with its interval and the
  exact McNemar p-value of the discordant pairs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations
from math import comb
from typing import TypedDict

import numpy as np

from ..score.frame import Frame
from ..score.stats import mcnemar_exact
from .records import Grade, GradeStatus

__all__ = [
    "ConditionBoard",
    "Paired",
    "Rate",
    "Scoreboard",
    "pass_at_k",
    "pass_hat_k",
    "score_grades",
]

_PATCH_READ = (GradeStatus.TESTED, GradeStatus.APPLY_FAILED, GradeStatus.TEST_PATCH_FAILED)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task: ``1 - C(n-c, k) / C(n, k)`` (requires ``k <= n``)."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 < k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k of one task: ``C(c, k) / C(n, k)`` (requires ``k <= n``)."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass^k needs 0 < k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    return comb(c, k) / comb(n, k)


@dataclass(frozen=True)
class Rate:
    """A figure with its numerator, denominator and 95% interval (None: not scored)."""

    value: float | None
    num: float
    den: float
    lo: float | None
    hi: float | None
    exact: bool = False
    """The interval is exact on the tasks: resampling them had no variance (``score/frame.py``)."""

    def as_dict(self) -> dict[str, float | bool | None]:
        return {"value": self.value, "num": self.num, "den": self.den, "lo": self.lo, "hi": self.hi,
                "exact": self.exact}


@dataclass(frozen=True)
class Paired:
    """Condition a against condition b on the (task, repetition) pairs both scored."""

    a: str
    b: str
    pairs: int
    both: int
    only_a: int
    only_b: int
    neither: int
    difference: Rate
    """Resolve rate of a minus b on the shared pairs (num/den: the pairs a resolved, out of them)."""
    mcnemar_p: float | None

    def as_dict(self) -> dict[str, object]:
        return {"a": self.a, "b": self.b, "pairs": self.pairs, "both": self.both, "only_a": self.only_a,
                "only_b": self.only_b, "neither": self.neither, "difference": self.difference.as_dict(),
                "mcnemar_p": self.mcnemar_p}  # fmt: skip


@dataclass(frozen=True)
class ConditionBoard:
    name: str
    runs: int
    tasks: int
    by_status: dict[str, int]
    not_scored: int
    """Runs whose grading broke (status ``error``): outside every denominator."""
    resolve_rate: Rate
    applies_clean_rate: Rate
    partial_rate: Rate
    overreach_rate: Rate
    pass_at: dict[int, Rate]
    pass_hat: dict[int, Rate]
    paired: dict[str, Paired]
    """Against every other condition, by its name."""

    def as_dict(self) -> dict[str, object]:
        return {
            "runs": self.runs, "tasks": self.tasks, "by_status": self.by_status, "not_scored": self.not_scored,
            "resolve_rate": self.resolve_rate.as_dict(), "applies_clean_rate": self.applies_clean_rate.as_dict(),
            "partial_rate": self.partial_rate.as_dict(), "overreach_rate": self.overreach_rate.as_dict(),
            "pass_at_k": {str(k): r.as_dict() for k, r in self.pass_at.items()},
            "pass_hat_k": {str(k): r.as_dict() for k, r in self.pass_hat.items()},
            "paired": {other: p.as_dict() for other, p in self.paired.items()},
        }  # fmt: skip


#: Fewer tasks than this and the scoreboard says "insufficient evidence".
MIN_TASKS = 10


@dataclass(frozen=True)
class Scoreboard:
    conditions: list[ConditionBoard]
    resamples: int
    seed: int
    tasks: list[str] = field(default_factory=list)
    never_resolved: list[str] = field(default_factory=list)
    """Tasks no run of any condition resolved: perhaps unsolvable as posed; look at them."""

    @property
    def evidence(self) -> str:
        return "insufficient evidence" if len(self.tasks) < MIN_TASKS else "sufficient"

    def task_summary(self) -> dict[str, object]:
        return {"count": len(self.tasks), "never_resolved": self.never_resolved, "evidence": self.evidence,
                "min_tasks": MIN_TASKS}  # fmt: skip

    def as_dict(self) -> dict[str, dict[str, object]]:
        return {c.name: c.as_dict() for c in self.conditions}


class _Columns:
    """Per-task numerators and denominators of every statistic, one column each of the
    resampling frame scoring uses (tasks are the clusters)."""

    def __init__(self, tasks: list[str]) -> None:
        self.index = {t: i for i, t in enumerate(tasks)}
        self.frame = Frame(len(tasks))

    def add(self, per_task: dict[str, tuple[float, float]]) -> int:
        num, den = np.zeros(len(self.index)), np.zeros(len(self.index))
        for task, (n, d) in per_task.items():
            num[self.index[task]] += n
            den[self.index[task]] += d
        return self.frame.add(num, den)


def _scored(grade: Grade) -> bool:
    return grade.status is not GradeStatus.ERROR


def _counts(grades: list[Grade], hit: Callable[[Grade], bool],
            unit: Callable[[Grade], bool] = _scored) -> dict[str, tuple[float, float]]:  # fmt: skip
    out: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for g in grades:
        if unit(g):
            out[g.instance_id][1] += 1
            out[g.instance_id][0] += 1 if hit(g) else 0
    return {t: (n, d) for t, (n, d) in out.items()}


class _Plan(TypedDict):
    """One condition's columns (``resolve`` … ``hat``: indices into the bootstrap
    columns) and its plain counts."""

    resolve: int
    applies: int
    partial: int
    overreach: int
    at: dict[int, int]
    hat: dict[int, int]
    tasks: int
    runs: int
    by_status: dict[str, int]
    not_scored: int


def score_grades(grades: list[Grade], resamples: int = 10_000, seed: int = 0) -> Scoreboard:
    """The scoreboard of every condition in ``grades``."""
    tasks = sorted({g.instance_id for g in grades})
    by_condition: dict[str, list[Grade]] = defaultdict(list)
    for g in grades:
        by_condition[g.condition].append(g)
    names = sorted(by_condition)
    columns = _Columns(tasks)
    plan: dict[str, _Plan] = {}
    for name in names:
        mine = by_condition[name]
        scored = [g for g in mine if _scored(g)]
        per_task: dict[str, list[Grade]] = defaultdict(list)
        for g in scored:
            per_task[g.instance_id].append(g)
        repeats = max((len(v) for v in per_task.values()), default=0)
        at: dict[int, int] = {}
        hat: dict[int, int] = {}
        for k in range(1, repeats + 1):
            eligible = {
                t: (len(v), sum(g.tests_pass for g in v))
                for t, v in per_task.items()
                if len(v) >= k
            }
            at[k] = columns.add({t: (pass_at_k(n, c, k), 1.0) for t, (n, c) in eligible.items()})
            hat[k] = columns.add({t: (pass_hat_k(n, c, k), 1.0) for t, (n, c) in eligible.items()})
        plan[name] = {
            "resolve": columns.add(_counts(mine, lambda g: g.tests_pass)),
            "applies": columns.add(_counts(mine, lambda g: g.applies_clean)),
            "partial": columns.add(_counts(mine, lambda g: g.partial)),
            "overreach": columns.add(
                _counts(
                    mine,
                    lambda g: g.overreach > 0,
                    lambda g: g.status in _PATCH_READ and g.files > 0,
                )
            ),
            "at": at,
            "hat": hat,
            "tasks": len(per_task),
            "runs": len(mine),
            "by_status": dict(sorted(Counter(g.status.value for g in mine).items())),
            "not_scored": len(mine) - len(scored),
        }
    pairs: dict[tuple[str, str], tuple[int, int, dict[str, int]]] = {}
    for a, b in combinations(names, 2):
        left = {(g.instance_id, g.repetition): g.tests_pass for g in by_condition[a] if _scored(g)}
        right = {(g.instance_id, g.repetition): g.tests_pass for g in by_condition[b] if _scored(g)}
        shared = sorted(left.keys() & right.keys())
        tally = Counter((left[key], right[key]) for key in shared)
        count_a: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        count_b: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for task, rep in shared:
            count_a[task][0] += left[(task, rep)]
            count_b[task][0] += right[(task, rep)]
            count_a[task][1] += 1
            count_b[task][1] += 1
        pairs[(a, b)] = (
            columns.add({t: (n, d) for t, (n, d) in count_a.items()}),
            columns.add({t: (n, d) for t, (n, d) in count_b.items()}),
            {
                "pairs": len(shared),
                "both": tally[(True, True)],
                "only_a": tally[(True, False)],
                "only_b": tally[(False, True)],
                "neither": tally[(False, False)],
            },
        )
    frame = columns.frame
    frame.resample(resamples, seed)

    def rate(col: int) -> Rate:
        n, d = (float(x.sum()) for x in frame.columns[col])
        lo, hi = frame.interval(col) if d else (None, None)
        return Rate(value=n / d if d else None, num=round(n, 6), den=d, lo=lo, hi=hi,
                    exact=bool(d) and frame.exact(col))  # fmt: skip

    def difference(col_a: int, col_b: int) -> Rate:
        (na, d), (nb, _) = ((float(x.sum()) for x in frame.columns[c]) for c in (col_a, col_b))
        _, lo, hi = frame.paired(col_a, col_b) if d else (None, None, None)
        return Rate(value=(na - nb) / d if d else None, num=na - nb, den=d, lo=lo, hi=hi,
                    exact=bool(d) and lo is not None and frame.paired_exact(col_a, col_b))  # fmt: skip

    paired: dict[str, dict[str, Paired]] = defaultdict(dict)
    for (a, b), (col_a, col_b, counts) in pairs.items():
        p = mcnemar_exact(counts["only_a"], counts["only_b"])
        paired[a][b] = Paired(a=a, b=b, difference=difference(col_a, col_b), mcnemar_p=p, **counts)
        paired[b][a] = Paired(a=b, b=a, difference=difference(col_b, col_a), mcnemar_p=p,
                              pairs=counts["pairs"], both=counts["both"], only_a=counts["only_b"],
                              only_b=counts["only_a"], neither=counts["neither"])  # fmt: skip
    boards = []
    for name in names:
        q = plan[name]
        boards.append(ConditionBoard(
            name=name, runs=q["runs"], tasks=q["tasks"], by_status=q["by_status"], not_scored=q["not_scored"],
            resolve_rate=rate(q["resolve"]), applies_clean_rate=rate(q["applies"]), partial_rate=rate(q["partial"]),
            overreach_rate=rate(q["overreach"]), pass_at={k: rate(c) for k, c in q["at"].items()},
            pass_hat={k: rate(c) for k, c in q["hat"].items()}, paired=dict(paired.get(name, {})),
        ))  # fmt: skip
    resolved = {g.instance_id for g in grades if g.tests_pass}
    return Scoreboard(conditions=boards, resamples=resamples, seed=seed, tasks=tasks,
                      never_resolved=[t for t in tasks if t not in resolved])  # fmt: skip

