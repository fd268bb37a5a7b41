"""The judge and its calibration: a loopback OpenAI-compatible judge server answering planned
labels, an order-biased one that must be found unusable, and a command judge."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from reviewbench.evidence.overrides import label_verdicts
from reviewbench.label import LabelStore, Role, import_labels
from reviewbench.label.judge import PADDING, calibrate, judge_claims, load_judge

from .conftest import CONDITIONS, write_corpus, write_runs

YES = dict.fromkeys(("location", "consequence", "evidence", "safe_fix", "severity_fit"), True)


def planned(text: str) -> dict:
    """The label people gave each claim: decided by the claim's number and its case."""
    number = int(text.split()[1])
    if text.startswith("c2") and number % 2 == 0:
        return {"class": "true_finding", "defect_id": "d-2" if number % 4 == 0 else "d-3", "fields": YES}
    if text.startswith("c1") and number % 3 == 0:
        return {"class": "true_finding", "defect_id": "d-1", "fields": {**YES, "safe_fix": number % 2 == 0}}
    if number % 5 == 0:
        return {"class": "unclear", "defect_id": None, "fields": {}}
    return {"class": "false_positive", "defect_id": None, "fields": {}}


FINDINGS = {
    (CONDITIONS[0], "case-1"): [f"c1 {i} remark about the slice" for i in range(12)],
    (CONDITIONS[1], "case-1"): [f"c1 {i} remark about the slice" for i in range(12, 20)],
    (CONDITIONS[0], "case-2"): [f"c2 {i} remark about the lookup" for i in range(10)],
    (CONDITIONS[1], "case-2"): [f"c2 {i} remark about the lookup" for i in range(10, 16)],
    (CONDITIONS[0], "case-3"): [f"c3 {i} remark people never labelled" for i in range(1, 5)],
}


@pytest.fixture
def big_rundir(tmp_path):
    rundir = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), findings=FINDINGS)
    with LabelStore(rundir) as store:
        claims = store.packets().claims
    rows = [{"comment_id": c.comment_id, "part": c.part, **planned(c.text),
             "note": None, "triage_s": 5} for c in claims if not c.text.startswith("c3")]  # fmt: skip
    path = tmp_path / "people.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_labels(rundir, path, rater="ann")
    import_labels(rundir, path, rater="bob")
    return rundir


class _Judge(BaseHTTPRequestHandler):
    biased = False
    requests: ClassVar[list] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        user = body["messages"][1]["content"]
        request = json.loads(user[user.index("{"):])
        type(self).requests.append(request)
        claim = request["claim"]
        claim = claim.removesuffix(PADDING)
        label = planned(claim)
        if self.biased and label["class"] == "true_finding":
            label = {**label, "defect_id": request["defects"][0]["defect_id"]}  # primacy: the first listed
        answer = {"model": "judge-model", "choices": [{"message": {"content": "```json\n" + json.dumps(label) + "\n```"}}]}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def judge_server():
    servers = []

    def start(biased: bool):
        handler = type("Handler", (_Judge,), {"biased": biased, "requests": []})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1", handler

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _config(tmp_path, url, name="j", min_per_kind=0):
    """A judge file; ``min_per_kind`` 0 waives the subset's composition (tests of other rules)."""
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\naudit_seed = 11\n'
                    f'judge = {{ kind = "openai", base_url = "{url}", model = "judge-model", api_key_env = "" }}\n'
                    f'[rule]\nmin_per_kind = {min_per_kind}\n')  # fmt: skip
    return load_judge(path)


def test_a_faithful_judge_is_usable(big_rundir, judge_server, tmp_path):
    url, handler = judge_server(biased=False)
    with LabelStore(big_rundir) as store:
        result = calibrate(store, _config(tmp_path, url), resamples=300)
    assert result["n"] == 36
    assert result["kappa"] == 1.0 and result["kappa_lo"] == 1.0
    assert (result["order_flips"], result["length_flips"]) == (0, 0)
    assert result["usable"] is True and result["reasons"] == []
    assert result["fields"]["safe_fix"]["n"] == 15 and result["fields"]["safe_fix"]["kappa"] == 1.0
    assert result["classes"]["true_finding"] == {"human": 15, "judge": 15, "both": 15}
    # plain, reversed and padded: three questions per claim, and nothing names a condition
    assert len(handler.requests) == 3 * 36
    assert set(handler.requests[0]) == {"comment_id", "claim", "diff", "defects", "path", "line"}
    assert not any(c in json.dumps(handler.requests) for c in CONDITIONS)
    with LabelStore(big_rundir) as store:
        assert store.latest_calibration("j")[1]["usable"] is True
        assert len(store.rows(role=Role.JUDGE, probe=None)) == 3 * 36
        assert len(store.rows(role=Role.RATER)) == 72  # people's labels untouched
        judge_claims(store, _config(tmp_path, url), [k for k, ref in store.claims().items()
                                                     if ref.text.startswith("c3")])  # fmt: skip
    verdicts = label_verdicts(big_rundir)
    assert len(verdicts) == 40
    judged = [v for v in verdicts if v.evidence.value == "judge"]
    assert len(judged) == 4 and {v.case_id for v in judged} == {"case-3"}
    assert all(v.basis.value == "judge" for v in judged)
    assert {v.evidence.value for v in verdicts if v.case_id != "case-3"} == {"human"}


def test_an_order_biased_judge_is_refused(big_rundir, judge_server, tmp_path):
    url, _ = judge_server(biased=True)
    with LabelStore(big_rundir) as store:
        result = calibrate(store, _config(tmp_path, url, "biased"), resamples=300)
    # case-2 true findings: 8; each links the first listed defect, so reversing flips them all
    assert result["order_flips"] == 8 and result["length_flips"] == 0
    assert result["usable"] is False
    assert any("flip on order" in r for r in result["reasons"])
    assert result["kappa"] == 1.0  # classes agree: only the probe exposes the bias
    with LabelStore(big_rundir) as store:
        judge_claims(store, _config(tmp_path, url, "biased"))
    assert {v.evidence.value for v in label_verdicts(big_rundir)} == {"human"}  # refused: people only


def test_too_few_human_labels_is_not_usable(rundir, judge_server, tmp_path):
    url, _ = judge_server(biased=False)
    with LabelStore(rundir) as store:
        result = calibrate(store, _config(tmp_path, url), resamples=100)
    assert result["n"] == 0 and result["usable"] is False
    assert any("only 0 human-labelled" in r for r in result["reasons"])


JUDGE_SCRIPT = """\
import json, sys
request = json.load(sys.stdin)
text = request["claim"]
if "slice" in text:
    print(json.dumps({"class": "true_finding", "defect_id": request["defects"][0]["defect_id"],
                      "fields": {"location": True, "consequence": True, "evidence": True, "safe_fix": True,
                                 "severity_fit": True}}))
else:
    print(json.dumps({"class": "false_positive", "defect_id": None, "fields": {}}))
"""


def test_a_command_judge_labels_every_claim(rundir, tmp_path):
    script = tmp_path / "judge.py"
    script.write_text(JUDGE_SCRIPT)
    config = tmp_path / "judge.toml"
    config.write_text(f'judge = {{ kind = "command", command = "{sys.executable} {script}", sandbox = false, network = true }}\n')
    judge = load_judge(config)
    with LabelStore(rundir) as store:
        run = judge_claims(store, judge)
        assert run.failed == {}
        labels = store.latest(Role.JUDGE)["command-judge"]
        assert len(labels) == 10
        texts = {ref.comment_id + str(ref.part): ref.text for ref in store.claims().values()}
        for (comment_id, part), label in labels.items():
            expected = "true_finding" if "slice" in texts[comment_id + str(part)] else "false_positive"
            assert label.row.label_class.value == expected


def test_a_judge_that_fails_leaves_claims_unlabelled(rundir, tmp_path):
    config = tmp_path / "judge.toml"
    config.write_text('judge = { kind = "command", command = "echo not json" }\n')
    with LabelStore(rundir) as store:
        run = judge_claims(store, load_judge(config))
        assert run.labelled == [] and len(run.failed) == 10
        assert "no JSON object" in next(iter(run.failed.values()))


def test_bad_judge_files_are_one_clear_error(tmp_path):
    from reviewbench.errors import UsageError

    for text, message in (('judge = { kind = "silent" }', "must be openai, anthropic or command"),
                          ('judge = { kind = "openai" }', "model"), ("judge = [", "invalid TOML")):  # fmt: skip
        path = tmp_path / "j.toml"
        path.write_text(text)
        with pytest.raises(UsageError, match=message):
            load_judge(path)


def test_the_library_scores_as_the_cli_does_with_people_and_a_judge(big_rundir, judge_server, tmp_path):
    """``score_run(rundir)`` reads labels.sqlite as ``reviewbench score`` does: the same JSON,
    with people's labels on cases 1-2 and a calibrated judge's on case 3."""
    import reviewbench
    from reviewbench.score import ScoreOptions

    from ..conftest import run_cli

    url, _ = judge_server(biased=False)
    with LabelStore(big_rundir) as store:
        calibrate(store, _config(tmp_path, url), resamples=100)
        judge_claims(store, _config(tmp_path, url), [k for k, ref in store.claims().items()
                                                     if ref.text.startswith("c3")])  # fmt: skip
    library = reviewbench.score_run(big_rundir, ScoreOptions(bootstrap=200)).as_json()
    proc = run_cli("score", big_rundir, "--json", "--bootstrap", "200")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == library
    levels = {e["level"] for c in library["conditions"].values() for e in c["metric_evidence"].values()}
    assert {"human", "judge"} <= levels | {c["evidence"] for c in library["conditions"].values()}
    unlabelled = reviewbench.score_run(big_rundir, ScoreOptions(bootstrap=200, overrides={}, labels={}))
    assert unlabelled.as_json() != library  # the labels changed the figures: the check above was not vacuous
