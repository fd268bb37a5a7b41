"""The built-in probes, run through the real pipeline on a mined corpus, checked by hand.

The corpus is three fix reversals (each reversal undoes a fix commit):

- ``app/box.py``: the fix added a two-line guard to ``Box.get``; its reversal is one hunk
  starting at line 3 (git's section line: ``class Box:``) that removes lines 6-7, so the
  first changed post-patch line is 6, inside ``get``; 0 added, 2 removed.
- ``app/sign.py``: ``scale`` loses its ``abs``: one hunk, line 2, 1 added, 1 removed.
- ``app/calc.py``: ``total`` (line 2) and ``mean`` (line 18, in a hunk from line 15 whose
  section line is ``def helper2():``) both change: two hunks, 2 added, 2 removed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.config.reviewers import CALIBRATION_KINDS, ProbeConfig
from reviewbench.records import Severity
from reviewbench.review.experiment import load_experiment
from reviewbench.review.runner import run_experiment
from reviewbench.reviewers import make_reviewer
from reviewbench.reviewers.probe import ProbeReviewer, hunks, looks_like_a_defect
from reviewbench.store.runs import RunStore

BOX = ("class Box:\n    def __init__(self, items):\n        self.items = items\n\n"
       "    def get(self, key):\n{}        return self.items[key]\n")
SPACER = "".join(f"\n\ndef helper{i}():\n    return {i}\n" for i in range(3))
CALC = "def total(values):\n    return {}\n" + SPACER + "\n\ndef mean(values):\n    return total(values) / {}\n"


@pytest.fixture
def corpus(git_repo, tmp_path) -> Path:
    repo = git_repo()
    repo.commit("init", {"app/box.py": BOX.format(""), "app/calc.py": CALC.format("sum(values)", "len(values)"),
                         "app/sign.py": "def scale(amount):\n    return amount * 2\n"})  # fmt: skip
    repo.commit("fix get on a missing key",
                {"app/box.py": BOX.format("        if key not in self.items:\n            return None\n")})
    repo.commit("fix mean of an empty list",
                {"app/calc.py": CALC.format("sum(v for v in values if v is not None)", "max(len(values), 1)")})
    repo.commit("fix scale of negative amounts", {"app/sign.py": "def scale(amount):\n    return abs(amount) * 2\n"})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=False), out)  # the remarks on defect cases
    return out


NAMER = {
    "app/box.py": [("app/box.py", 6, "`get` would read better with a docstring and type hints")],
    "app/sign.py": [("app/sign.py", 2, "`scale` would read better with a docstring and type hints")],
    "app/calc.py": [("app/calc.py", 2, "`total` would read better with a docstring and type hints"),
                    ("app/calc.py", 18, "`mean` would read better with a docstring and type hints")],
}  # fmt: skip
EXPECTED = {
    "namer": NAMER,
    "namer_files": NAMER,  # the post-patch files in the packet give the same names
    # The first identifier of the changed lines: 'key', 'self', 'None', 'return', 'sum',
    # 'abs' are keywords or shorter than four characters.
    "quoter": {
        "app/box.py": [("app/box.py", 6, "`items` is a vague name")],
        "app/sign.py": [("app/sign.py", 2, "`amount` is a vague name")],
        "app/calc.py": [("app/calc.py", 2, "`values` is a vague name"), ("app/calc.py", 18, "`total` is a vague name")],
    },
    # Two hunks (calc) or more removed than added (box); sign's one-for-one hunk is left alone.
    "shape": {"app/box.py": NAMER["app/box.py"], "app/sign.py": [], "app/calc.py": NAMER["app/calc.py"]},
}


def test_each_probe_through_the_pipeline_writes_the_hand_computed_remarks(tmp_path, corpus):
    conditions = "".join(
        f'[[condition]]\nname = "{name}"\nreviewer = {{ kind = "probe", probe = "{name.split("_")[0]}" }}\n'
        + ('context = "files"\n' if name.endswith("_files") else "")
        for name in EXPECTED
    )
    path = tmp_path / "experiment.toml"
    path.write_text(f'corpus = "{corpus}"\nrepeats = 2\nseed = 1\n{conditions}')
    run_experiment(load_experiment(path), tmp_path / "runs")
    paths = {case.case_id: case.paths[0] for case in read_corpus(corpus).cases}
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    try:
        runs = list(store.runs())
    finally:
        store.close()
    assert len(runs) == len(EXPECTED) * 3 * 2
    for run in runs:
        expected = EXPECTED[run.condition][paths[run.case_id]]
        assert [(f.path, f.line, f.claim) for f in run.findings] == expected, (run.condition, run.case_id)
        assert all(f.severity is Severity.LOW for f in run.findings)
        assert run.state == ("completed_findings" if expected else "completed_no_findings")
        assert run.tokens_in is None and run.model_returned == f"probe-{run.condition.split('_')[0]}"


def test_probes_are_calibration_baselines_and_build_from_their_config():
    assert {"silent", "flag_all", "probe"} <= CALIBRATION_KINDS
    assert isinstance(make_reviewer(ProbeConfig(kind="probe", probe="shape")), ProbeReviewer)


DIFF = """\
diff --git a/src/m.py b/src/m.py
--- a/src/m.py
+++ b/src/m.py
@@ -40,4 +40,3 @@ class Store:
         x = 1
-        del x
-        y = 2
+        pass
         return x
@@ -60,2 +59,2 @@
-a
+b
 c
"""


def test_hunks_read_lines_sections_and_counts():
    first, second = hunks(DIFF)
    assert (first.path, first.start, first.section, first.first_changed) == ("src/m.py", 40, "class Store:", 41)
    assert (first.added, first.removed, first.post) == (1, 2, ["        x = 1", "        pass", "        return x"])
    assert (second.first_changed, second.section, second.changed) == (59, "", ["a", "b"])
    assert looks_like_a_defect([first]) and looks_like_a_defect([second, second])
    assert not looks_like_a_defect([second])


def test_a_hunk_without_a_name_gets_no_remark(make_packet):
    packet = make_packet(diff=DIFF.split("@@ -60")[0].replace(" class Store:", ""), paths=["src/m.py"])

    async def go():
        return await make_reviewer(ProbeConfig(kind="probe", probe="namer")).review(packet, None)

    reply = asyncio.run(go())
    assert (reply.text, reply.findings) == ("NO_ISSUES", ())


def test_the_shape_probe_takes_the_feature_and_cut_the_audit_gives_it():
    from reviewbench.records import ReviewPacket
    from reviewbench.reviewers.probe import probe_findings

    packet = ReviewPacket.model_construct(diff=DIFF, files={})
    # DIFF removes 3 lines and adds 2, in 2 hunks.
    at_three = ProbeConfig(kind="probe", probe="shape", feature="removed", at_least=3)
    at_four = ProbeConfig(kind="probe", probe="shape", feature="removed", at_least=4)
    one_hunk = ProbeConfig(kind="probe", probe="shape", feature="hunks", at_most=1)
    assert [f.line for f in probe_findings(at_three, packet)] == [41]  # the second hunk names no symbol
    assert probe_findings(at_four, packet) == [] and probe_findings(one_hunk, packet) == []
    for bad in ({"feature": "removed"}, {"feature": "removed", "at_least": 1, "at_most": 2}, {"at_least": 1},
                {"probe": "namer", "feature": "hunks", "at_most": 1}):
        with pytest.raises(ValueError, match="feature|at_least"):
            ProbeConfig(**{"kind": "probe", "probe": "shape", **bad})
