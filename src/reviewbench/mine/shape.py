"""The shape of a patch, and how well shape alone tells defect cases from clean ones.

A reviewer that never reads the code can still game restraint if defect cases and clean
cases differ in shape (defects spanning several hunks and removing lines, controls one
small hunk each). :func:`patch_shape` measures a unified diff; :func:`shape_bin` puts a
shape in one of the bins ``mine`` matches controls to; :func:`shape_separability` is the
figure ``show`` prints and ``audit`` reuses: the cross-validated AUC of a logistic
regression on the shape features, and the single most separating feature with its
Mann–Whitney AUC. An AUC near 0.5 means shape says nothing about which cases hold a defect.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..store.corpus import patch_file

if TYPE_CHECKING:
    from ..store import Corpus

__all__ = [
    "FEATURES",
    "Separability",
    "Shape",
    "ShapeBin",
    "corpus_shapes",
    "mann_whitney_auc",
    "patch_shape",
    "shape_bin",
    "shape_separability",
]

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")

#: The shape features, in :class:`Shape`'s field order.
FEATURES = ("changed", "added", "removed", "files", "hunks")


@dataclass(frozen=True)
class Shape:
    """What a reviewer can count in a patch without reading it."""

    changed: int
    """Lines added plus lines removed."""
    added: int
    """Lines the patch adds (``+`` lines in hunks)."""
    removed: int
    """Lines the patch removes (``-`` lines in hunks)."""
    files: int
    """Files the patch touches (``diff --git`` sections)."""
    hunks: int
    """Hunks (``@@`` headers) over all files."""

    @property
    def net(self) -> int:
        """Lines added minus lines removed."""
        return self.added - self.removed

    def features(self) -> tuple[int, ...]:
        """The features in :data:`FEATURES` order."""
        return astuple(self)


def patch_shape(patch: bytes | str) -> Shape:
    """The shape of a unified diff (git's format; several files allowed).

    Hunk bodies are consumed by the line counts of their ``@@`` headers, so a removed line
    that reads ``--- x`` or an added ``+++ y`` is counted as a line, not taken for a header.
    """
    text = patch.decode("utf-8", "surrogateescape") if isinstance(patch, bytes) else patch
    added = removed = files = hunks = 0
    old_left = new_left = 0
    for line in text.split("\n"):
        if old_left > 0 or new_left > 0:
            if line.startswith("+"):
                added, new_left = added + 1, new_left - 1
            elif line.startswith("-"):
                removed, old_left = removed + 1, old_left - 1
            elif line.startswith("\\"):
                pass  # "\ No newline at end of file"
            else:
                old_left, new_left = old_left - 1, new_left - 1
            continue
        if line.startswith("diff --git "):
            files += 1
        elif match := _HUNK.match(line):
            hunks += 1
            old_left = int(match.group(1) or 1)
            new_left = int(match.group(2) or 1)
    if files == 0 and hunks:
        files = 1  # a bare unified diff without git's header lines
    return Shape(added + removed, added, removed, files, hunks)


class ShapeBin(NamedTuple):
    """A coarse shape class: hunks (1, 2, 3+), net lines (<0, =0, >0) and size."""

    hunks: int
    """0 for one hunk (or none), 1 for two, 2 for three or more."""
    net: int
    """0 when the patch removes more lines than it adds, 1 when balanced, 2 when it adds more."""
    size: int
    """0 small (≤ 3 changed lines), 1 medium (4–10), 2 large (11 or more)."""

    def distance(self, other: ShapeBin) -> int:
        """Steps between two bins, summed over the three ordinal axes."""
        return sum(abs(a - b) for a, b in zip(self, other, strict=True))


#: Upper bounds (inclusive) of the small and medium size classes, in changed lines.
SIZE_LIMITS = (3, 10)


def shape_bin(shape: Shape) -> ShapeBin:
    """The bin ``mine`` uses to match clean cases' shapes to defect cases'."""
    hunks = 0 if shape.hunks <= 1 else 1 if shape.hunks == 2 else 2
    net = 0 if shape.net < 0 else 1 if shape.net == 0 else 2
    size = 0 if shape.changed <= SIZE_LIMITS[0] else 1 if shape.changed <= SIZE_LIMITS[1] else 2
    return ShapeBin(hunks, net, size)


class Separability(NamedTuple):
    """How well diff shape alone separates defect cases from clean cases."""

    auc: float | None
    """Cross-validated AUC of a logistic regression on :data:`FEATURES` (None: too few cases)."""
    best_feature: str | None
    """The single feature whose Mann–Whitney AUC is highest."""
    best_feature_auc: float | None
    """That feature's AUC, oriented to be ≥ 0.5 (a high value either way separates)."""


def mann_whitney_auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(a positive scores above a negative), ties counting one half: the Mann–Whitney U
    statistic divided by ``len(positive) * len(negative)``."""
    if not positive or not negative:
        raise ValueError("the Mann–Whitney AUC needs at least one case on each side")
    wins = 0.0
    for p in positive:
        for n in negative:
            wins += 1.0 if p > n else 0.5 if p == n else 0.0
    return wins / (len(positive) * len(negative))


#: Folds of the cross-validation (fewer when a class has fewer cases).
FOLDS = 5


def shape_separability(defect: Sequence[Shape], clean: Sequence[Shape], *, seed: int = 0) -> Separability:
    """Cross-validated AUC of shape → "is a defect case", and the best single feature.

    The model is scikit-learn's L2 logistic regression on log(1 + feature), standardised,
    scored out of fold (stratified k-fold, k = min(5, smaller class), shuffled with
    ``seed``) and the pooled out-of-fold probabilities ranked against the labels. With
    fewer than two cases in either class no model is fitted and ``auc`` is None; the best
    single feature needs one case on each side.
    """
    best: tuple[float, str] | None = None
    if defect and clean:
        for index, name in enumerate(FEATURES):
            raw = mann_whitney_auc([s.features()[index] for s in defect], [s.features()[index] for s in clean])
            oriented = max(raw, 1.0 - raw)
            if best is None or oriented > best[0]:
                best = (oriented, name)
    folds = min(FOLDS, len(defect), len(clean))
    auc: float | None = None
    if folds >= 2:
        # scikit-learn is imported here: it is slow to import and only this figure needs it.
        import numpy as np
        from sklearn.linear_model import LogisticRegression
        from sklearn.metrics import roc_auc_score
        from sklearn.model_selection import StratifiedKFold, cross_val_predict
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        x = np.log1p(np.array([s.features() for s in [*defect, *clean]], dtype=float))
        y = np.array([1] * len(defect) + [0] * len(clean))
        model = make_pipeline(StandardScaler(), LogisticRegression())
        split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
        scores = cross_val_predict(model, x, y, cv=split, method="predict_proba")[:, 1]
        auc = float(roc_auc_score(y, scores))
        if math.isnan(auc):
            auc = None
    return Separability(auc, best[1] if best else None, best[0] if best else None)


def corpus_shapes(corpus: Path, data: Corpus) -> tuple[list[Shape], list[Shape]]:
    """(defect cases' shapes, clean cases' shapes) of a corpus read with ``read_corpus``.

    Defect cases are those expecting a finding, rename variants left out (they repeat a
    defect's shape); clean cases are the rest (controls, mirrors, clean noisy diffs).
    """
    gold = {g.case_id: g for g in data.gold}
    defect: list[Shape] = []
    clean: list[Shape] = []
    for case in data.cases:
        record = gold.get(case.case_id)
        if record is None or record.variant_of:
            continue
        shape = patch_shape(patch_file(corpus, case).read_bytes())
        (defect if record.expect_finding else clean).append(shape)
    return defect, clean
