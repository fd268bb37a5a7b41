"""Controls shaped like the defect cases: combined refactors in several hunks, and the quota."""

from __future__ import annotations

from collections import Counter

from reviewbench import MineConfig, read_corpus
from reviewbench.git.repo import open_repository
from reviewbench.git.stream import BlobReader
from reviewbench.mine.controls import ControlMaker, ShapeQuota
from reviewbench.mine.edits import FileEdit, make_case
from reviewbench.mine.head import HeadTree
from reviewbench.mine.naming import case_id
from reviewbench.mine.paths import PathClassifier
from reviewbench.mine.shape import Shape, ShapeBin, patch_shape, shape_bin
from reviewbench.records import GoldRecord, Provenance, Stratum
from reviewbench.validate import validate_corpus

from .conftest import validate_config


def _fake(seed: int, number: int, old: str, new: str):
    key = f"control:x.py:{number}:test"
    gold = GoldRecord(case_id=case_id(seed, key), stratum=Stratum.CONTROL, expect_finding=False, defects=[],
                      provenance=Provenance(operator="test"))
    return make_case(seed, key, "0" * 40, [FileEdit("x.py", old, new)], gold)


def _lines(n: int) -> str:
    return "".join(f"line{i}\n" for i in range(n))


def test_quota_follows_the_defect_bins_and_falls_back_to_the_nearest():
    defects = [Shape(6, 1, 5, 1, 3)] * 3 + [Shape(2, 1, 1, 1, 1)]  # 3 of (3+ hunks, net<0, medium), 1 small
    assert ShapeQuota(defects, 4).quota == {ShapeBin(2, 0, 1): 3, ShapeBin(0, 1, 0): 1}
    base = _lines(40)
    small = [_fake(0, i, base, base.replace(f"line{i}\n", f"LINE{i}\n")) for i in range(5)]
    removing = _fake(0, 9, base, base.replace("line2\nline3\n", "").replace("line30\n", ""))  # 2 hunks, net -3
    chosen, rest = ShapeQuota(defects, 4).choose([*small, removing], 4)
    assert removing in chosen  # the nearest to (3+ hunks, net < 0) there is
    assert len(chosen) == 4 and len(rest) == 2
    assert shape_bin(patch_shape(removing.mined.patch)) == ShapeBin(1, 0, 0)
    # The same inputs give the same choice.
    assert ShapeQuota(defects, 4).choose([*small, removing], 4)[0] == chosen


def test_combined_controls_span_hunks_and_keep_the_tests_green(project, tmp_path):
    from reviewbench import mine_corpus

    config = MineConfig(repo=project.path, fixes=False, mutations=4, controls_ratio=1.0)
    repo = open_repository(project.path)
    with BlobReader(repo.path) as blobs:
        head = HeadTree(repo, PathClassifier(config.test_patterns, config.include, config.exclude), blobs)
        made = ControlMaker(config, head).cases(["pkg/text.py", "pkg/shapes.py"], 16)
    kinds = Counter(c.mined.gold.provenance.operator for c in made)
    combined = [c for c in made if "+" in c.mined.gold.provenance.operator]
    assert combined, kinds
    assert all(patch_shape(c.mined.patch).hunks >= 2 for c in combined)
    assert any(patch_shape(c.mined.patch).net < 0 for c in made), kinds  # a removing edit
    # Mined and validated: every control, combined or removing, keeps the suite green.
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=project.path, fixes=False, mutations=6, controls_ratio=1.0, mirrors=False)
                if "mirrors" in MineConfig.model_fields else config.model_copy(update={"mutations": 6}), out,
                warn=lambda _m: None)  # fmt: skip
    validate_corpus(out, validate_config())
    gold = read_corpus(out).gold
    assert {g.validation.status.value for g in gold if g.stratum == "control"} == {"not_observed"}


def test_show_prints_the_shape_separability(project, tmp_path):
    import json

    from click.testing import CliRunner

    from reviewbench import mine_corpus
    from reviewbench.cli import cli

    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=project.path, fixes=False, mutations=6, controls_ratio=1.0), out, warn=lambda _m: None)
    shown = json.loads(CliRunner().invoke(cli, ["show", str(out), "--json"]).output)["shape"]
    assert shown["defect_cases"] == 6 and shown["clean_cases"] >= 6
    assert 0.0 <= shown["auc"] <= 1.0 and shown["best_feature"] and shown["best_feature_auc"] >= 0.5
    assert "shape separability: AUC" in CliRunner().invoke(cli, ["show", str(out)]).output
