"""``release``: the gold, its pre-run hash, people's final labels, every adjudication and
the final hash, from a real registered run against a loopback endpoint and real labels."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from ..conftest import run_cli
from ..reviewers.servers import FakeLLMServer, Reply
from ..score.runsets import write_corpus

DEFECTS, CONTROLS = 3, 2



def reviewbench(*args: object) -> subprocess.CompletedProcess[str]:
    """``reviewbench ARGS`` through the real ``main``, in this process (a subprocess's result shape)."""
    return run_cli(*args)


def _answer(request) -> str:
    prompt = json.dumps(request.json)
    for i in range(DEFECTS):
        if f"--- d{i}\\n" in prompt:
            return f"app/m{i}.py:11 high fetch{i} is off by one"
    return "NO_ISSUES"


def _experiment(tmp_path: Path, corpus: Path, server: FakeLLMServer, repeats: int = 1) -> Path:
    path = tmp_path / "experiment.toml"
    path.write_text(f'corpus = "{corpus}"\nrepeats = {repeats}\nseed = 7\n[[condition]]\nname = "bot"\n'
                    f'reviewer = {{ kind = "openai", base_url = "{server.openai_base_url}", model = "m", '
                    'api_key_env = "" }\n')  # fmt: skip
    return path


@pytest.fixture
def labelled(tmp_path) -> Path:
    """A registered run directory whose three claims two raters labelled, one disputed."""
    corpus = write_corpus(tmp_path / "corpus", DEFECTS, CONTROLS)
    rundir = tmp_path / "runs"
    with FakeLLMServer() as server:
        server.default = Reply.answer(_answer)
        experiment = _experiment(tmp_path, corpus, server)
        assert reviewbench("register", experiment, "--out", rundir).returncode == 0
        assert reviewbench("run", experiment, "--out", rundir).returncode == 0
    packets = tmp_path / "packets.jsonl"
    assert reviewbench("label", "export", rundir, "--out", packets).returncode == 0
    claims = [(c["comment_id"], p["defects"][0]["defect_id"]) for line in packets.read_text().splitlines()
              for p in [json.loads(line)] for c in p["claims"]]  # fmt: skip
    assert len(claims) == 3
    for rater, disputed in (("ann", "false_positive"), ("bob", "true_finding")):
        rows = [{"comment_id": cid, "class": "true_finding" if i else disputed,
                 "defect_id": defect if i or disputed == "true_finding" else None}
                for i, (cid, defect) in enumerate(claims)]  # fmt: skip
        path = tmp_path / f"{rater}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        proc = reviewbench("label", "import", rundir, path, "--rater", rater)
        assert proc.returncode == 0, proc.stderr
    (tmp_path / "claims.json").write_text(json.dumps(claims))
    return rundir


def test_refused_while_a_claim_is_disputed_then_released(tmp_path, labelled):
    refused = reviewbench("release", labelled, "--out", tmp_path / "rel")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "1 claims disputed (no final label)" in refused.stderr
    assert not (tmp_path / "rel").exists()  # nothing written when refused

    cid, defect = json.loads((tmp_path / "claims.json").read_text())[0]
    adjudication = tmp_path / "ada.jsonl"
    adjudication.write_text(json.dumps({"comment_id": cid, "class": "true_finding", "defect_id": defect,
                                        "reason": "it names the off-by-one"}) + "\n")  # fmt: skip
    assert reviewbench("label", "import", labelled, adjudication, "--adjudicator", "ada").returncode == 0

    proc = reviewbench("release", labelled, "--out", tmp_path / "rel")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "rel"
    gold = (tmp_path / "corpus" / "gold.jsonl").read_bytes()
    assert (out / "gold.jsonl").read_bytes() == gold
    manifest = json.loads((out / "release.json").read_text())
    sha = hashlib.sha256(gold).hexdigest()
    registered = json.loads((labelled / "registration.json").read_text())["versions"][0]["frozen"]["corpus"]
    assert manifest["gold"] == {"registered_sha256": registered["gold_sha256"], "registered_at": manifest["gold"]
                                ["registered_at"], "pre_registered": True, "recorded_by_runs": sha,
                                "final_sha256": sha, "unchanged": True}  # fmt: skip
    assert (manifest["partial"], manifest["incomplete"]) == (False, [])
    assert manifest["runs"] == {"planned": 8, "recorded": 8, "missing": 0}  # 3 defect cases, 3 mirrors, 2 controls
    assert (manifest["claims"]["agreed"], manifest["claims"]["adjudicated"], manifest["claims"]["final"]) == (2, 1, 3)
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest, name
    [change] = [json.loads(line) for line in (out / "adjudications.jsonl").read_text().splitlines()]
    assert change["raters"] == {"ann": {"class": "false_positive", "defect_id": None},
                                "bob": {"class": "true_finding", "defect_id": defect}}  # fmt: skip
    assert (change["reason"], change["adjudicator"], change["label"]["class"]) == (
        "it names the off-by-one", "ada", "true_finding")  # fmt: skip
    labels = [json.loads(line) for line in (out / "labels.jsonl").read_text().splitlines()]
    assert {(r["comment_id"], r["class"], r["basis"]) for r in labels} >= {(cid, "true_finding", "adjudicated")}
    assert "released" in proc.stdout and "gold unchanged" in proc.stdout
    # the rubric the labels were given under, and the people only in aggregate
    assert manifest["rubric"] == registered_rubric_version(labelled) == "003-1"
    assert manifest["people"]["profiles"]["raters"] == 2 and manifest["people"]["profiles"]["profiled"] == 0
    assert set(manifest["people"]["time"]["raters"]) == {"ann", "bob"}


def test_partial_release_says_so(tmp_path, labelled):
    proc = reviewbench("release", labelled, "--out", tmp_path / "rel", "--partial", "--json")
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads(proc.stdout)
    assert manifest["partial"] is True
    assert manifest["incomplete"] == ["1 claims disputed (no final label)"]
    assert manifest["claims"]["final"] == 2


def test_missing_runs_are_refused(tmp_path):
    corpus = write_corpus(tmp_path / "corpus", DEFECTS, CONTROLS)
    rundir = tmp_path / "runs"
    with FakeLLMServer() as server:
        server.default = Reply.answer("NO_ISSUES")
        experiment = _experiment(tmp_path, corpus, server)
        assert reviewbench("run", experiment, "--out", rundir).returncode == 0
        _experiment(tmp_path, corpus, server, repeats=2)  # unregistered: now plans twice the runs
    proc = reviewbench("release", rundir, "--out", tmp_path / "rel")
    assert proc.returncode == 2 and "8 of 16 planned runs are missing" in proc.stderr


def registered_rubric_version(rundir):
    return json.loads((rundir / "registration.json").read_text())["versions"][-1]["frozen"]["rubric"]["version"]
