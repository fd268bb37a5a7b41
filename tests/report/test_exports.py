"""Exports to the evaluation ecosystem, loaded back with the real libraries (the ``exports``
extra, which scripts/bootstrap installs: outside CI a test skips without its library, in CI
it fails, so a lost pin cannot turn into a silent skip)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import run_cli
from ..score.runsets import Reviewer, write_corpus, write_runs


def reviewbench(*args: object) -> subprocess.CompletedProcess[str]:
    """``reviewbench ARGS`` through the real ``main``, in this process (a subprocess's result shape)."""
    return run_cli(*args)


def library(name: str):
    if os.environ.get("CI"):
        return importlib.import_module(name)
    return pytest.importorskip(name, reason=f"{name} is in the exports extra: pip install -e '.[exports]'")


@pytest.fixture
def rundir(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", 4, 3)
    return write_runs(tmp_path / "runs", corpus, {"bot": Reviewer(finds={0, 1}, flags={2}, model="m-1")}, 4, 3,
                      repeats=2)  # fmt: skip


def test_inspect_log_reads_back_with_inspect_ai(tmp_path, rundir):
    log_module = library("inspect_ai.log")
    proc = reviewbench("export", rundir, "--format", "inspect", "--out", tmp_path / "logs")
    assert proc.returncode == 0, proc.stderr
    # inspect's own listing (what 'inspect view' shows) finds it: a name starting with an ISO time.
    (listed,) = log_module.list_eval_logs(str(tmp_path / "logs"))
    assert (listed.task, Path(listed.name).name in proc.stdout) == ("reviewbench-bot", True)
    log = log_module.read_eval_log(listed.name)
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
    # Before the import: huggingface_hub and datasets read these when first imported.
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # nothing read from or written to ~/.cache
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a local directory: no request to any hub
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    datasets = library("datasets")
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


def test_inspect_log_names_follow_inspects_convention():
    from reviewbench.report.inspect_log import log_name

    created = "2026-03-02T09:00:00+00:00"
    assert log_name("bot", created) == f"2026-03-02T09-00-00+00-00_reviewbench-bot_{_sha('bot')}.json"
    # '_' separates inspect's parts: a condition's own is written '-', and the id keeps
    # apart two names that then read alike.
    assert log_name("flag_all", created).split("_")[1] == "reviewbench-flag-all"
    assert log_name("flag_all", created) != log_name("flag-all", created)


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:12]


def test_ecosystem_formats_need_a_directory(rundir):
    proc = reviewbench("export", rundir, "--format", "inspect")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--out" in proc.stderr
