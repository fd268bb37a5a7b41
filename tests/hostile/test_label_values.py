"""Labels hold only values they may (issue 25, item 7), on every path: the app, ``label
import`` and the judge. A ``defect_id`` no gold defect has was stored and made its claim
``identified``; ``triage_s`` of ``Infinity`` or ``1e308`` made ``label verdicts --json``
print non-standard JSON and the report draw ``cx="nan"``."""

from __future__ import annotations

import json
import sys

import pytest

from reviewbench.label import LabelStore, Role
from reviewbench.label.app import AppOptions
from reviewbench.label.judge import judge_claims, load_judge

from ..label import conftest as label_fixtures
from ..label.conftest import Http, write_corpus, write_runs

serve = label_fixtures.serve

BAD = [
    ({"class": "true_finding", "defect_id": "nonexistent-defect"}, "not a gold defect"),
    ({"class": "true_finding", "defect_id": "d-2"}, "not a gold defect"),  # another case's defect
    ({"class": "unclear", "triage_s": 1e308}, "triage_s"),
    ({"class": "unclear", "triage_s": float("inf")}, "triage_s"),
    ({"class": "unclear", "triage_s": float("nan")}, "triage_s"),
    ({"class": "unclear", "triage_s": -1}, "triage_s"),
]


@pytest.fixture
def world(tmp_path):
    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"))
    with LabelStore(rundir) as store:
        claims = [c for c in store.packets().claims if c.case_id == "case-1"]  # gold: d-1 only
    return rundir, claims


@pytest.mark.parametrize(("bad", "message"), BAD)
def test_label_import_refuses_a_bad_link_or_time_in_one_line(world, tmp_path, cli, bad, message):
    rundir, claims = world
    path = tmp_path / "ann.jsonl"
    good = {"comment_id": claims[1].comment_id, "part": claims[1].part, "class": "false_positive"}
    row = {"comment_id": claims[0].comment_id, "part": claims[0].part, **bad}
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n")  # Python writes NaN, Infinity
    line = cli("label", "import", rundir, path, "--rater", "ann").one_line_error("ann.jsonl:2")
    assert message in line
    with LabelStore(rundir) as store:
        assert store.rows(probe=None) == []  # nothing of the file is written


@pytest.mark.parametrize(("bad", "message"), BAD)
def test_the_app_refuses_a_bad_link_or_time(world, serve, bad, message):
    rundir, claims = world
    with LabelStore(rundir) as store:
        token = store.invite("ann", Role.RATER)
    http = Http(serve(AppOptions(rundir)))
    row = {"comment_id": claims[0].comment_id, "part": claims[0].part, **bad}
    body = json.dumps({"labels": [row]}).encode()  # NaN and Infinity as Python writes them
    status, _, text = http.post_json(f"/r/ann/p/{claims[0].packet_id}", body,
                                     {"cookie": f"reviewbench_token={token}"})  # fmt: skip
    assert status == 400, text
    with LabelStore(rundir) as store:
        assert store.rows(probe=None) == []


def test_a_judge_linking_a_defect_the_case_lacks_labels_nothing(world, tmp_path):
    rundir, _ = world
    script = tmp_path / "judge.py"
    script.write_text("import json, sys\njson.load(sys.stdin)\n"
                      "print(json.dumps({'class': 'true_finding', 'defect_id': 'nonexistent-defect', 'fields': {}}))\n")  # fmt: skip
    config = tmp_path / "judge.toml"
    config.write_text(f'judge = {{ kind = "command", command = "{sys.executable} {script}", sandbox = false, network = true }}\n')
    with LabelStore(rundir) as store:
        run = judge_claims(store, load_judge(config))
        assert run.labelled == [] and len(run.failed) == 10
        assert all("not a gold defect" in reason for reason in run.failed.values())
        assert store.rows(role=Role.JUDGE, probe=None) == []


def test_verdicts_stay_standard_json(world, tmp_path, cli):
    rundir, claims = world
    rows = [{"comment_id": c.comment_id, "part": c.part, "class": "true_finding", "defect_id": "d-1",
             "triage_s": 86_400.0 if i == 0 else 3.5} for i, c in enumerate(claims)]  # fmt: skip
    for rater in ("ann", "bob"):
        (tmp_path / f"{rater}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        assert cli("label", "import", rundir, tmp_path / f"{rater}.jsonl", "--rater", rater).code == 0
    out = cli("label", "verdicts", rundir, "--json").out
    json.loads(out, parse_constant=lambda name: pytest.fail(f"non-standard JSON constant {name}"))
