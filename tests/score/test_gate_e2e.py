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

    passed = reviewbench("gate", same, "--baseline", week1)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.splitlines()[-1] == "gate: pass (2 passed, 0 failed, 0 inconclusive); exit 0"
