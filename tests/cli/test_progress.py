"""Progress where nobody watches a terminal (CI logs, nohup): a plain status line with
done/total, rate and ETA, at least every REVIEWBENCH_STATUS_EVERY seconds and at the end."""

from __future__ import annotations

import io
import re
import sys

from reviewbench import MineConfig, mine_corpus
from reviewbench.cli._output import StatusLine


def test_status_line_by_hand_with_a_fake_clock():
    now = [100.0]
    out = io.StringIO()
    status = StatusLine("validating", stream=out, clock=lambda: now[0])
    status.update(1, 10, "case-1: observed")
    now[0] = 100.0 + 60  # 60 s for the first case: 1 case/min, 9 to go
    status.tick()
    assert out.getvalue() == "validating: 1/10, 1.0/min, ETA 9m00s, case-1: observed\n"
    status.update(4, 10, "case-4: flaky")
    now[0] = 100.0 + 120  # 4 in 120 s: 2/min, 6 to go -> 180 s
    status.tick()
    assert out.getvalue().splitlines()[-1] == "validating: 4/10, 2.0/min, ETA 3m00s, case-4: flaky"


def test_status_line_before_anything_is_done_says_eta_unknown():
    out = io.StringIO()
    status = StatusLine("grading", stream=out, clock=lambda: 5.0)
    status.update(0, 3)
    status.tick()
    assert out.getvalue() == "grading: 0/3, 0.0/min, ETA unknown\n"


def test_run_prints_status_lines_when_stderr_is_not_a_terminal(git_repo, tmp_path, cli):
    repo = git_repo()
    repo.commit("init", {"a.py": "def a(x):\n    return x\n", "b.py": "def b(x):\n    return x\n"})
    repo.commit("fix a", {"a.py": "def a(x):\n    return x or 0\n"})
    repo.commit("fix b", {"b.py": "def b(x):\n    return x + 1\n"})
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), tmp_path / "corpus")  # two cases
    experiment = tmp_path / "experiment.toml"
    experiment.write_text(f'corpus = "{tmp_path / "corpus"}"\nrepeats = 2\n'
                          '[[condition]]\nname = "s"\nreviewer = { kind = "silent" }\n')  # fmt: skip
    quick = cli("run", experiment, "--out", tmp_path / "runs", env={"REVIEWBENCH_STATUS_EVERY": "30"})
    assert quick.code == 0 and quick.stderr == ""  # done long before the first 30 s: nothing to say
    assert "4 runs planned" in quick.stdout
    # A reviewer that takes 0.3 s per run against a 0.02 s interval: lines while it works,
    # and a closing line with the whole count.
    slow = tmp_path / "slow.py"
    slow.write_text("import sys, time\nsys.stdin.read()\ntime.sleep(0.3)\nprint('NO_ISSUES')\n")
    experiment.write_text(f'corpus = "{tmp_path / "corpus"}"\nrepeats = 1\n[[condition]]\nname = "c"\n'
                          f'reviewer = {{ kind = "command", command = "{sys.executable} {slow}", sandbox = false, network = true }}\nconcurrency = 1\n')  # fmt: skip
    result = cli("run", experiment, "--out", tmp_path / "runs-slow", env={"REVIEWBENCH_STATUS_EVERY": "0.02"})
    assert result.code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) >= 2 and all(line.startswith("reviewing: ") for line in lines)
    assert re.fullmatch(r"reviewing: 2/2, [0-9.]+/min, ETA 0s, completed_no_findings=2", lines[-1])
