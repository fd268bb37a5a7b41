"""The CI gate end to end: one registered experiment run twice against a loopback endpoint
(OpenAI wire format), ``compare`` and ``gate`` on the two real run directories; and a week
apart in simulated time, through ``rerun``."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reviewbench import engine
from reviewbench.score import registration

from ..conftest import run_cli
from ..reviewers.servers import FakeLLMServer, Reply
from .runsets import write_corpus

DEFECTS, CONTROLS = 12, 10


def reviewbench(*args: object) -> subprocess.CompletedProcess[str]:
    """``reviewbench ARGS`` through the real ``main``, in this process (a subprocess's result shape)."""
    return run_cli(*args)


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


def test_rerun_carries_labels_to_identical_claims(tmp_path, corpus):
    with FakeLLMServer() as server:
        server.default = Reply.answer(_reviewer(set(range(DEFECTS))))
        week1 = _run(tmp_path, corpus, server, "week1")
        packets = tmp_path / "packets.jsonl"
        assert reviewbench("label", "export", week1, "--out", packets).returncode == 0
        rows = []
        for line in packets.read_text().splitlines():
            packet = json.loads(line)
            for claim in packet["claims"]:
                rows.append({"comment_id": claim["comment_id"], "part": claim["part"], "class": "true_finding",
                             "defect_id": packet["defects"][0]["defect_id"], "fields": dict.fromkeys(
                                 ("location", "consequence", "evidence", "safe_fix", "severity_fit"), True)})
        assert len(rows) == DEFECTS
        for rater in ("ann", "bob"):
            (tmp_path / f"{rater}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
            assert reviewbench("label", "import", week1, tmp_path / f"{rater}.jsonl", "--rater", rater).returncode == 0
        hinted = reviewbench("rerun", week1, "--out", tmp_path / "plain")
        carried = reviewbench("rerun", week1, "--out", tmp_path / "week2", "--carry-labels")
    assert f"labels: reviewbench label carry {week1} {tmp_path / 'plain'}" in hinted.stdout
    assert carried.returncode == 0, carried.stderr
    assert f"carried {2 * DEFECTS} labels of {week1} to {DEFECTS} of {DEFECTS} claims" in carried.stdout
    verdicts = json.loads(reviewbench("label", "verdicts", tmp_path / "week2", "--json").stdout)["verdicts"]
    assert len(verdicts) == DEFECTS and all(v["carried"] and v["label_class"] == "true_finding" for v in verdicts)


def test_rerun_refuses_what_it_cannot_repeat(tmp_path, corpus):
    unregistered = tmp_path / "plain"
    from .runsets import Reviewer, write_runs

    write_runs(unregistered, corpus, {"bot": Reviewer()}, DEFECTS, CONTROLS)
    proc = reviewbench("rerun", unregistered, "--out", tmp_path / "again")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "is not registered: rerun repeats a registered experiment" in proc.stderr
    assert not (tmp_path / "again").exists()
    proc = reviewbench("rerun", unregistered, "--out", tmp_path / "again", "--carry-labels")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "has no labels (labels.sqlite)" in proc.stderr
    assert not (tmp_path / "again").exists()


def _wide(tmp_path):
    """Tolerances a 12-case corpus can settle (the exact bounds are 0.265 and 0.154)."""
    rules = tmp_path / "wide.toml"
    rules.write_text('[[rules]]\nmetric = "defect_recall"\nmax_drop = 0.3\n'
                     '[[rules]]\nmetric = "false_alarm_rate"\nmax_rise = 0.2\n')
    return rules


class _Clock:
    """Simulated wall time for in-process commands: registration and run timestamps read it,
    each reading a millisecond after the last, so a week passes between two calls at once."""

    def __init__(self, monkeypatch, start: datetime) -> None:
        self.at = start
        clock = self

        class Simulated(datetime):
            @classmethod
            def now(cls, tz=None):
                clock.at += timedelta(milliseconds=1)
                return clock.at if tz else clock.at.replace(tzinfo=None)

        monkeypatch.setattr(registration, "datetime", Simulated)
        monkeypatch.setattr(engine, "_now", lambda: Simulated.now(UTC).isoformat(timespec="milliseconds"))

    def week_later(self) -> None:
        self.at += timedelta(days=7)


def _weekly(tmp_path: Path, corpus: Path, server: FakeLLMServer, clock: _Clock, name: str,
            week2: Callable[[str], str]) -> tuple[Path, Path]:  # fmt: skip
    """Week 1: register and run the experiment (the endpoint as it is); a week later the
    endpoint answers with ``week2`` and ``rerun`` repeats the registered experiment."""
    experiment = tmp_path / f"{name}.toml"
    experiment.write_text(f'corpus = "{corpus}"\nrepeats = 1\nseed = 7\n[[condition]]\nname = "bot"\n'
                          f'reviewer = {{ kind = "openai", base_url = "{server.openai_base_url}", model = "m", '
                          'api_key_env = "" }\n')  # fmt: skip
    first, second = tmp_path / f"{name}-week1", tmp_path / f"{name}-week2"
    for args in (("register", experiment, "--out", first), ("run", experiment, "--out", first)):
        proc = run_cli(*args)
        assert proc.returncode == 0, proc.stderr
    clock.week_later()
    server.default = Reply.answer(week2)
    proc = run_cli("rerun", first, "--out", second)
    assert proc.returncode == 0, proc.stderr
    return first, second


def test_a_week_later_a_worse_endpoint_fails_and_the_same_one_passes(tmp_path, corpus, monkeypatch):
    """The issue's "done when", end to end: two runs of one registered experiment a week apart
    (simulated), against a loopback endpoint that answers worse the second time."""
    clock = _Clock(monkeypatch, datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    with FakeLLMServer() as server:
        server.default = Reply.answer(_reviewer(set(range(DEFECTS))))
        week1, worse = _weekly(tmp_path, corpus, server, clock, "worse", _reviewer({0, 1, 2}))
        server.default = Reply.answer(_reviewer(set(range(DEFECTS))))
        same1, same2 = _weekly(tmp_path, corpus, server, clock, "same", _reviewer(set(range(DEFECTS))))

    compared = run_cli("compare", week1, worse, "--json")
    assert compared.returncode == 0, compared.stderr
    report = json.loads(compared.stdout)
    started = report["changed"]["started"]
    assert started["a"]["first"].startswith("2026-03-02T09:00") and started["b"]["first"].startswith("2026-03-09T09:00")
    assert not started["same"] and not report["changed"]["registration"]["same"]
    assert "of 2026-03-02T09:00" in report["changed"]["registration"]["a"]
    assert "of 2026-03-09T09:00" in report["changed"]["registration"]["b"]
    (bot,) = report["conditions"]
    recall = bot["metrics"]["defect_recall"]
    assert (recall["a"]["num"], recall["a"]["den"], recall["b"]["num"], recall["b"]["den"]) == (12, 12, 3, 12)
    assert recall["diff"] == -0.75 and recall["lo"] < -0.75 < recall["hi"] < 0  # an interval, wholly below 0
    assert bot["mcnemar"] == {"both": 3, "only_a": 9, "only_b": 0, "neither": 0, "p": pytest.approx(2 * 0.5**9)}
    assert bot["changed"]["model_returned"]["same"]  # the same model string: only the answers got worse
    text = run_cli("compare", week1, worse).stdout
    assert "defect_recall" in text and "12/12" in text and "3/12" in text

    failed = run_cli("gate", worse, "--baseline", week1)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    (fail,) = [line for line in failed.stdout.splitlines() if line.startswith("FAIL")]
    assert "bot defect_recall (max_drop 0.05): baseline 12/12 = 1.000, now 3/12 = 0.250, change -0.750 [" in fail
    assert failed.stdout.splitlines()[-1].startswith("gate: fail (") and "exit 1" in failed.stdout.splitlines()[-1]

    # Identical behaviour a week later: 0 change on every case; the 12-case corpus settles
    # tolerances of 0.3 and 0.2 (its exact bounds are 0.265 and 0.154), not the built-in 0.05.
    passed = run_cli("gate", same2, "--baseline", same1, "--rules", _wide(tmp_path))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.splitlines()[-1] == "gate: pass (2 passed, 0 failed, 0 inconclusive); exit 0"


def test_a_week_later_a_tiny_corpus_is_inconclusive(tmp_path, monkeypatch):
    tiny = write_corpus(tmp_path / "tiny", 3, 2)
    clock = _Clock(monkeypatch, datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    with FakeLLMServer() as server:
        server.default = Reply.answer(_reviewer({0, 1, 2}))
        week1, week2 = _weekly(tmp_path, tiny, server, clock, "tiny", _reviewer(set()))  # worse, on 3 cases
    proc = run_cli("gate", week2, "--baseline", week1, "--json")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    # Recall on the 3 defect cases; false alarms on the 5 clean ones (3 mirrors, 2 controls).
    assert [(r["metric"], r["status"], r["reason"]) for r in result["rules"]] == [
        ("defect_recall", "inconclusive", "3 paired case clusters (< min_cases 10)"),
        ("false_alarm_rate", "inconclusive", "5 paired case clusters (< min_cases 10)")]
    assert result["outcome"]["exit_code"] == 3
