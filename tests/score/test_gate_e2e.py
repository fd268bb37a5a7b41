"""The CI gate end to end: one registered experiment run twice against a loopback endpoint
(OpenAI wire format), ``compare`` and ``gate`` on the two real run directories."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..reviewers.servers import FakeLLMServer, Reply
from .runsets import write_corpus

DEFECTS, CONTROLS = 12, 10


def reviewbench(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reviewbench", *map(str, args)], capture_output=True, text=True,
                          check=False)  # fmt: skip


def _reviewer(finds: set[int]):
    """An endpoint naming the defect of each defect case in ``finds`` and silent elsewhere
    (the corpus's patches carry their case id, which the packet's diff shows)."""

    def answer(request) -> str:
        prompt = json.dumps(request.json)
        hit = re.search(r"--- d(\d+)(-mirror)?\\n", prompt)
        if hit and not hit.group(2) and int(hit.group(1)) in finds:
            i = int(hit.group(1))
            return f"app/m{i}.py:11 high fetch{i} is off by one"
        return "NO_ISSUES"

    return answer


@pytest.fixture
def corpus(tmp_path) -> Path:
    return write_corpus(tmp_path / "corpus", DEFECTS, CONTROLS)


def _run(tmp_path: Path, corpus: Path, server: FakeLLMServer, out: str) -> Path:
    path = tmp_path / "experiment.toml"
    path.write_text(f'corpus = "{corpus}"\nrepeats = 1\nseed = 7\n[[condition]]\nname = "bot"\n'
                    f'reviewer = {{ kind = "openai", base_url = "{server.openai_base_url}", model = "m", '
                    'api_key_env = "" }\n')  # fmt: skip
    rundir = tmp_path / out
    registered = reviewbench("register", path, "--out", rundir)
    assert registered.returncode == 0, registered.stderr
    ran = reviewbench("run", path, "--out", rundir)
    assert ran.returncode == 0, ran.stderr
    return rundir


def test_a_worse_endpoint_fails_the_gate_and_the_same_one_passes(tmp_path, corpus):
    with FakeLLMServer() as server:
        server.default = Reply.answer(_reviewer(set(range(DEFECTS))))
        week1 = _run(tmp_path, corpus, server, "week1")
        same = _run(tmp_path, corpus, server, "week2-same")
        server.default = Reply.answer(_reviewer({0, 1, 2}), model="m-2026-06")  # rerouted, and worse
        worse = _run(tmp_path, corpus, server, "week2-worse")

    compared = reviewbench("compare", week1, worse, "--json")
    assert compared.returncode == 0, compared.stderr
    bot = json.loads(compared.stdout)["conditions"][0]
    recall = bot["metrics"]["defect_recall"]
    assert (recall["a"]["num"], recall["a"]["den"], recall["b"]["num"], recall["b"]["den"]) == (12, 12, 3, 12)
    assert recall["diff"] == -0.75 and recall["lo"] < -0.75 < recall["hi"] < 0
    assert bot["mcnemar"] == {"both": 3, "only_a": 9, "only_b": 0, "neither": 0, "p": pytest.approx(2 * 0.5**9)}
    assert bot["changed"]["model_returned"] == {"a": ["m"], "b": ["m-2026-06"], "same": False}

    failed = reviewbench("gate", worse, "--baseline", week1)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert any(line.startswith("FAIL") and "bot defect_recall (max_drop 0.05)" in line
               for line in failed.stdout.splitlines())  # fmt: skip
    assert "MODEL CHANGED bot: returned m -> m-2026-06 [reported]" in failed.stdout

    # The same endpoint again: 0 change on every case. On 12 defect cases (22 clean) the
    # exact bound on how many cases could differ is 0.265 (0.154): only tolerances that wide
    # can pass; at the built-in 0.05 more cases would be needed, and gate says so.
    assert reviewbench("gate", same, "--baseline", week1).returncode == 3
    passed = reviewbench("gate", same, "--baseline", week1, "--rules", _wide(tmp_path))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.splitlines()[-1] == "gate: pass (2 passed, 0 failed, 0 inconclusive); exit 0"


def test_rerun_repeats_the_registered_experiment_ready_for_the_gate(tmp_path, corpus):
    with FakeLLMServer() as server:
        server.default = Reply.answer(_reviewer(set(range(DEFECTS))))
        week1 = _run(tmp_path, corpus, server, "week1")
        experiment = tmp_path / "experiment.toml"
        # A new model string in the experiment file: rerun registers the file as it is now.
        experiment.write_text(experiment.read_text().replace('model = "m"', 'model = "m-2"'))
        rerun = reviewbench("rerun", week1, "--out", tmp_path / "week2")
        assert rerun.returncode == 0, rerun.stderr
    assert f"changed since: experiment {experiment}" in rerun.stdout
    assert f"next: reviewbench gate {tmp_path / 'week2'} --baseline {week1}" in rerun.stdout
    old = json.loads((week1 / "registration.json").read_text())["versions"][-1]["frozen"]
    new = json.loads((tmp_path / "week2" / "registration.json").read_text())["versions"][-1]["frozen"]
    assert (new["gates"], new["seeds"], new["rules"], new["corpus"]) == (old["gates"], old["seeds"], old["rules"],
                                                                          old["corpus"])  # fmt: skip
    assert new["experiment"]["sha256"] != old["experiment"]["sha256"]
    # week1's experiment file changed since its registration: score refuses it, but compare
    # and gate read its runs as history (the registration file itself verified).
    assert reviewbench("score", week1).returncode == 2
    gate = reviewbench("gate", tmp_path / "week2", "--baseline", week1, "--rules", _wide(tmp_path))
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "MODEL CHANGED bot: requested m -> m-2; returned m -> m-2 [reported]" in gate.stdout


def test_rerun_refuses_what_it_cannot_repeat(tmp_path, corpus):
    unregistered = tmp_path / "plain"
    from .runsets import Reviewer, write_runs

    write_runs(unregistered, corpus, {"bot": Reviewer()}, DEFECTS, CONTROLS)
    proc = reviewbench("rerun", unregistered, "--out", tmp_path / "again")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "is not registered: rerun repeats a registered experiment" in proc.stderr
    assert not (tmp_path / "again").exists()


def _wide(tmp_path):
    """Tolerances a 12-case corpus can settle (the exact bounds are 0.265 and 0.154)."""
    rules = tmp_path / "wide.toml"
    rules.write_text('[[rules]]\nmetric = "defect_recall"\nmax_drop = 0.3\n'
                     '[[rules]]\nmetric = "false_alarm_rate"\nmax_rise = 0.2\n')
    return rules
