"""Patch shapes counted by hand, and the separability figure on sets whose answer is known."""

from __future__ import annotations

import random

import pytest

from reviewbench.mine.shape import (
    Shape,
    ShapeBin,
    mann_whitney_auc,
    patch_shape,
    shape_bin,
    shape_separability,
)

TWO_FILES = """\
diff --git a/pkg/a.py b/pkg/a.py
index 1111111..2222222 100644
--- a/pkg/a.py
+++ b/pkg/a.py
@@ -1,4 +1,3 @@ def f():
 def f():
-    x = 1
-    return x
+    return 1
 
@@ -10,2 +9,3 @@ def g():
 def g():
+    \"\"\"Doc.\"\"\"
     return 2
diff --git a/pkg/b.py b/pkg/b.py
index 3333333..4444444 100644
--- a/pkg/b.py
+++ b/pkg/b.py
@@ -3 +3 @@
--- not a header: a removed line
+++ not a header: an added line
\\ No newline at end of file
"""


def test_shape_counted_by_hand():
    # a.py: hunk 1 removes 2 and adds 1, hunk 2 adds 1; b.py: one hunk, -1 +1.
    shape = patch_shape(TWO_FILES)
    assert shape == Shape(changed=6, added=3, removed=3, files=2, hunks=3)
    assert shape.net == 0 and shape.features() == (6, 3, 3, 2, 3)
    assert patch_shape(TWO_FILES.encode()) == shape


def test_bins_of_hunks_net_and_size():
    assert shape_bin(Shape(2, 1, 1, 1, 1)) == ShapeBin(0, 1, 0)
    assert shape_bin(Shape(5, 1, 4, 1, 2)) == ShapeBin(1, 0, 1)
    assert shape_bin(Shape(12, 10, 2, 2, 4)) == ShapeBin(2, 2, 2)
    assert ShapeBin(0, 0, 0).distance(ShapeBin(2, 1, 0)) == 3


def test_mann_whitney_by_hand():
    # Pairs (p, n): 3>1, 3>2, 3=3 (half), 5>1, 5>2, 5>3 -> 5.5 of 6.
    assert mann_whitney_auc([3, 5], [1, 2, 3]) == pytest.approx(5.5 / 6)
    assert mann_whitney_auc([1], [2]) == 0.0
    with pytest.raises(ValueError):
        mann_whitney_auc([], [1])


def _one_hunk(n: int) -> Shape:
    return Shape(n, n, 0, 1, 1)


def test_perfectly_separable_is_one():
    defect = [Shape(10 + i, 2, 8 + i, 1, 3) for i in range(10)]
    clean = [_one_hunk(1 + i % 2) for i in range(10)]
    found = shape_separability(defect, clean)
    assert found.auc == 1.0
    assert found.best_feature_auc == 1.0 and found.best_feature in {"changed", "removed", "hunks"}


def test_identical_distributions_are_near_one_half():
    rng = random.Random(3)

    def draw() -> Shape:
        added, removed, hunks = rng.randint(0, 6), rng.randint(0, 6), rng.randint(1, 3)
        return Shape(added + removed, added, removed, 1, hunks)

    aucs = [shape_separability([draw() for _ in range(40)], [draw() for _ in range(40)], seed=s).auc for s in range(6)]
    assert 0.35 < sum(aucs) / len(aucs) < 0.65  # type: ignore[arg-type]


def test_oriented_best_feature_and_too_few_cases():
    # Defects have fewer hunks: the raw AUC of hunks is 0, oriented it is 1.
    found = shape_separability([_one_hunk(2)], [Shape(2, 2, 0, 1, 3), Shape(2, 2, 0, 1, 2)])
    assert found.auc is None  # one defect case: no cross-validation
    assert (found.best_feature, found.best_feature_auc) == ("hunks", 1.0)
    assert shape_separability([], [_one_hunk(1)]) == (None, None, None)
