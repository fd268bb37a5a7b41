"""Whole experiments with command reviewers in the sandbox: the gold-reading reviewer that
scored perfectly now scores zero, and Ctrl-C leaves nothing behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus
from reviewbench.review.experiment import load_experiment
from reviewbench.review.runner import run_experiment
from reviewbench.score import ScoreOptions, score_run

from ..conftest import default_sigint

PYTHON_HOME = os.path.realpath(sys.base_prefix)

CHEATER = """\
import json, sys
from pathlib import Path
gold = Path(sys.argv[1]) / "gold.jsonl"
packet = json.load(sys.stdin)
try:
    lines = gold.read_text().splitlines()
except OSError:
    print("NO_ISSUES")
    sys.exit(0)
for line in lines:
    record = json.loads(line)
    if record["case_id"] == packet["case_id"]:
        for defect in record["defects"]:
            for loc in defect["locations"]:
                # Names what the fix changed, so the finding identifies the defect, not just
                # lands near it.
                names = " ".join(defect["removed_identifiers"] + defect["added_identifiers"])
                print(f"{loc['path']}:{loc['start_line']} high {names} {defect['description']}")
        if not record["defects"]:
            print("NO_ISSUES")
"""


@pytest.fixture
def corpus(git_repo, tmp_path) -> Path:
    return _corpus(git_repo, tmp_path, mirrors=True)


@pytest.fixture
def plain_corpus(git_repo, tmp_path) -> Path:
    """The same three fixes without their mirrors: three runs in flight at once."""
    return _corpus(git_repo, tmp_path, mirrors=False)


def _corpus(git_repo, tmp_path: Path, mirrors: bool) -> Path:
    repo = git_repo()
    # Each fix adds a code-shaped name: what identifies its defect (the function says where).
    repo.commit("init", {"app/a.py": "def alpha_value(x):\n    return x\n", "app/b.py": "def beta_value(x):\n    return x\n",
                         "app/c.py": "def gamma_value(x):\n    return x\n"})  # fmt: skip
    repo.commit("fix a", {"app/a.py": "def alpha_value(x):\n    if x is None:\n        return ALPHA_DEFAULT\n    return x\n"})
    repo.commit("fix b", {"app/b.py": "def beta_value(x):\n    return x + BETA_STEP\n"})
    repo.commit("fix c", {"app/c.py": "def gamma_value(x):\n    return abs(x) * GAMMA_SCALE\n"})
    out = tmp_path / "project" / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=mirrors), out)
    return out


def _experiment(tmp_path: Path, corpus: Path, reviewer: str, context: str = "diff") -> Path:
    path = tmp_path / "project" / "experiment.toml"
    path.write_text(f'corpus = "{corpus}"\nrepeats = 1\nseed = 1\nrename = false\n'
                    f'[[condition]]\nname = "A"\nreviewer = {reviewer}\ncontext = "{context}"\ntimeout_s = 60\n')  # fmt: skip
    return path


def test_a_reviewer_that_reads_the_gold_scores_zero_in_the_sandbox(tmp_path, corpus):
    script = tmp_path / "project" / "cheater.py"
    script.write_text(CHEATER)
    command = json.dumps(f"{sys.executable} {script} {corpus}")
    # The project folder (script, experiment, corpus) is exposed: only the corpus stays hidden.
    expose = json.dumps([PYTHON_HOME, str(tmp_path / "project")])
    recall = {}
    for sandbox in (False, True):
        net = "" if sandbox else ", network = true"
        reviewer = f'{{ kind = "command", command = {command}, expose = {expose}, sandbox = {str(sandbox).lower()}{net} }}'
        out = tmp_path / f"runs-{sandbox}"
        summary = run_experiment(load_experiment(_experiment(tmp_path, corpus, reviewer)), out)
        assert sum(summary.by_state.values()) == 6  # 3 fix reversals and their mirrors
        metric = score_run(out, ScoreOptions(include_unvalidated=True)).conditions["A"].metrics["defect_recall"]
        recall[sandbox] = (summary.by_state, metric.num, metric.den)
    # Unsandboxed, it "finds" every defect, and the gold keeps it silent on every mirror, so
    # even discriminating identification credits it: only the sandbox stops it.
    assert recall[False] == ({"completed_findings": 3, "completed_no_findings": 3}, 3, 3)
    assert recall[True] == ({"completed_no_findings": 6}, 0, 3)  # sandboxed, it sees no gold: zero


def _alive_with(marker: str, program: str | None = None) -> list[int]:
    """Processes whose command line holds ``marker`` (and whose program is ``program``)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
            except OSError:
                continue
            if marker in " ".join(argv) and (program is None or argv[0] == program):
                found.append(int(pid))
    return found


def test_ctrl_c_kills_every_sandboxed_reviewer_and_leaves_no_scratch(tmp_path, plain_corpus):
    corpus = plain_corpus
    marker = f"{700 + os.getpid() % 100}.{time.time_ns() % 10**6}"
    command = json.dumps(f"setsid sleep {marker} & sleep {marker}")
    experiment = _experiment(tmp_path, corpus, f'{{ kind = "command", command = {command} }}', context="tree")
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "reviewbench", "run", str(experiment), "--out",
                             str(tmp_path / "runs")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, preexec_fn=default_sigint)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(_alive_with(marker, "sleep")) < 6 and time.monotonic() < deadline:  # 3 runs × 2 sleepers
            time.sleep(0.1)
        assert len(_alive_with(marker, "sleep")) == 6, proc.stderr.read() if proc.poll() is not None else "not started"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert len(err.strip().splitlines()) == 1
    deadline = time.monotonic() + 5
    while _alive_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = _alive_with(marker)
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == []
    assert list(tmp.iterdir()) == []  # no agent scratch, no exported trees
    assert list(home.iterdir()) == []
