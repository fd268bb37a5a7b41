"""The judge is sandboxed as reviewers are: a command judge cannot read the run directory's
label or run store, nor the corpus's gold (issue 25, item 3).

The attack: a judge copies the people's labels out of ``RUNDIR/labels.sqlite`` (or the
condition behind each claim out of ``runs.sqlite``), agrees with them perfectly and is
found usable. Its folder is exposed (where a judge script lives, as a user would list it),
and the run directory and corpus sit inside that folder: they stay hidden all the same.
"""

from __future__ import annotations

import json
import os
import shlex
import sys

import pytest

from reviewbench.label import LabelStore, Role
from reviewbench.label.judge import judge_claims, load_judge
from reviewbench.sandbox._layout import mechanism

from ..label.conftest import write_corpus, write_runs

PYTHON_HOME = os.path.realpath(sys.base_prefix)

SNOOP = """\
import json, sys
from pathlib import Path

targets = json.loads(sys.argv[1])
json.load(sys.stdin)

def read(path):
    try:
        return "read %d bytes" % len(Path(path).read_bytes())
    except OSError as exc:
        return "refused: %s" % exc.strerror

print(json.dumps({"class": "unclear", "defect_id": None, "fields": {},
                  "note": json.dumps({name: read(path) for name, path in targets.items()})}))
"""


@pytest.mark.skipif(mechanism(True) is None, reason="no sandbox mechanism on this machine")
def test_a_command_judge_cannot_read_the_labels_runs_or_gold(tmp_path):
    work = tmp_path / "work"
    rundir = write_runs(work / "runs", write_corpus(work / "corpus"))
    script = work / "bin" / "judge.py"
    script.parent.mkdir()
    script.write_text(SNOOP)
    with LabelStore(rundir) as store:
        store.packets()  # labels.sqlite exists before the judge runs
    targets = {"labels": str(rundir / "labels.sqlite"), "runs": str(rundir / "runs.sqlite"),
               "gold": str(work / "corpus" / "gold.jsonl")}  # fmt: skip
    command = f"{shlex.quote(sys.executable)} {script} {shlex.quote(json.dumps(targets))}"
    config = tmp_path / "judge.toml"
    config.write_text(f"judge = {{ kind = \"command\", command = {json.dumps(command)}, "
                      f"expose = [{json.dumps(PYTHON_HOME)}, {json.dumps(str(work))}] }}\n")  # fmt: skip
    with LabelStore(rundir) as store:
        run = judge_claims(store, load_judge(config))
        assert run.failed == {} and run.labelled
        notes = [json.loads(label.row.note) for label in store.rows(role=Role.JUDGE)]
    assert notes and all(value.startswith("refused") for note in notes for value in note.values()), notes[0]
