"""Exports to the evaluation ecosystem, loaded back with the real libraries (optional test
dependencies: the tests skip without them)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ..score.runsets import Reviewer, write_corpus, write_runs


def reviewbench(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reviewbench", *map(str, args)], capture_output=True, text=True,
                          check=False)  # fmt: skip


@pytest.fixture
def rundir(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", 4, 3)
    return write_runs(tmp_path / "runs", corpus, {"bot": Reviewer(finds={0, 1}, flags={2}, model="m-1")}, 4, 3,
                      repeats=2)  # fmt: skip


def test_inspect_log_reads_back_with_inspect_ai(tmp_path, rundir):
    log_module = pytest.importorskip("inspect_ai.log")
    proc = reviewbench("export", rundir, "--format", "inspect", "--out", tmp_path / "logs")
    assert proc.returncode == 0, proc.stderr
    log = log_module.read_eval_log(str(tmp_path / "logs" / "bot.json"))
    assert (log.status, log.eval.task, log.eval.model) == ("success", "reviewbench/bot", "m-1")
    # One sample per run: (4 defect cases + 4 mirrors + 3 controls) x 2 repetitions.
    assert len(log.samples) == 22 and log.results.total_samples == 22
    recall = log.results.scores[0].metrics["defect_recall"]
    assert (recall.value, recall.metadata["num"], recall.metadata["den"]) == (0.5, 4, 8)
    alarms = log.results.scores[0].metrics["false_alarm_rate"]
    assert (alarms.metadata["num"], alarms.metadata["den"]) == (2, 14)  # k2 in both repetitions; 7 clean cases
    found = next(s for s in log.samples if s.id == "bot-d0-1")
    assert found.epoch == 2
    assert found.scores["reviewbench"].value == {"identified": 1, "located": 1, "defects": 1, "false_positives": 0,
                                                 "findings": 1}  # fmt: skip
    assert found.output.completion == "app/m0.py:11 high fetch0 is off by one"
    flagged = next(s for s in log.samples if s.id == "bot-k2-0")
    assert flagged.scores["reviewbench"].value["false_positives"] == 1


def test_hf_dataset_loads_with_datasets_and_holds_no_gold(tmp_path, rundir, monkeypatch):
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    out = tmp_path / "public"
    proc = reviewbench("export", rundir, "--format", "hf", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "wrote" in proc.stdout and "7 of 11 cases" in proc.stdout  # the 4 mirrors left out
    data = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))["test"]
    assert sorted(data["case_id"]) == ["d0", "d1", "d2", "d3", "k0", "k1", "k2"]
    assert data.column_names == ["case_id", "title", "base", "paths", "language", "patch"]
    text = (out / "data" / "test.jsonl").read_text() + (out / "README.md").read_text()
    gold = json.loads((rundir.parent / "corpus" / "corpus.json").read_text())["gold_sha256"]
    assert gold in text  # committed to, not revealed
    for leak in ("boundary", "fix_reversal", "control", "expect_finding", "mirror\"", "-mirror"):
        assert leak not in (out / "data" / "test.jsonl").read_text(), leak


def test_ecosystem_formats_need_a_directory(rundir):
    proc = reviewbench("export", rundir, "--format", "inspect")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--out" in proc.stderr
