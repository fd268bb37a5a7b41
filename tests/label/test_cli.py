"""``label``, ``agreement`` and ``judge`` as a user runs them: the real ``main``, real files;
``label serve`` in a real subprocess, since Ctrl-C is the point there."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request

from ..conftest import run_cli


def run(*args):
    return run_cli(*args)


def one_error(proc, code, fragment):
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if line.strip()]
    assert line.startswith("reviewbench: error: ") and fragment in line, line


def test_export_import_queue_agreement_and_verdicts(rundir, tmp_path):
    packets = tmp_path / "packets.jsonl"
    proc = run("label", "export", rundir, "--out", packets)
    assert proc.returncode == 0 and "wrote 5 packets" in proc.stderr
    claims = [c for line in packets.read_text().splitlines() for c in json.loads(line)["claims"]]
    assert len(claims) == 10

    queue = json.loads(run("label", "queue", rundir, "--json").stdout)
    # The built-in gates want ten valid defect cases: with two, no label can change a gate.
    assert queue["remaining"] == {"claims": 10, "labels_needed": 20, "decisive": 0}
    assert not any(item["decisive"] for item in queue["queue"])
    assert queue["by_condition"] == {"condalphasecret": {"claims": 6, "labels_needed": 12},
                                     "condbetasecret": {"claims": 4, "labels_needed": 8}}

    rows = [{"comment_id": c["comment_id"], "part": c["part"], "class": "false_positive"} for c in claims]
    (tmp_path / "ann.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    rows[0]["class"] = "unclear"
    (tmp_path / "bob.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert "imported 10 labels" in run("label", "import", rundir, tmp_path / "ann.jsonl", "--rater", "ann").stderr
    assert run("label", "import", rundir, tmp_path / "bob.jsonl", "--rater", "bob").returncode == 0

    report = json.loads(run("agreement", rundir, "--json", "--bootstrap", "200").stdout)
    (pair,) = report["pairs"]
    assert (pair["raters"], pair["n"], pair["percent_agreement"]) == (["ann", "bob"], 10, 0.9)
    assert set(pair) >= {"kappa", "kappa_lo", "kappa_hi", "confusion", "fields"}
    assert report["adjudicated"] == 0 and report["disputed"] == 1
    text = run("agreement", rundir).stdout
    assert "ann × bob: 10 claims, 90.0% agree" in text

    queue = json.loads(run("label", "queue", rundir, "--json").stdout)
    assert queue["remaining"]["claims"] == 1 and queue["queue"][0]["status"] == "disputed"

    adjudication = [{**rows[0], "class": "false_positive", "reason": "not a defect"}]
    (tmp_path / "ada.jsonl").write_text(json.dumps(adjudication[0]) + "\n")
    assert run("label", "import", rundir, tmp_path / "ada.jsonl", "--adjudicator", "ada").returncode == 0
    verdicts = json.loads(run("label", "verdicts", rundir, "--json").stdout)
    assert len(verdicts["verdicts"]) == 8  # 10 claims, 8 comments (one split in three)
    assert all(v["evidence"] == "human" and ":" in v["comment_id"] for v in verdicts["verdicts"])

    out = tmp_path / "bob-out.jsonl"
    assert run("label", "export", rundir, "--out", out, "--rater", "bob").returncode == 0
    assert [json.loads(line)["class"] for line in out.read_text().splitlines()].count("unclear") == 1


def test_bad_input_is_one_line(rundir, tmp_path):
    one_error(run("label", "export", tmp_path, "--out", tmp_path / "p.jsonl"), 1, "not a run directory")
    (tmp_path / "bad.jsonl").write_text('{"comment_id": "x", "class": "maybe"}\n')
    one_error(run("label", "import", rundir, tmp_path / "bad.jsonl", "--rater", "ann"), 2, "bad.jsonl:1")
    one_error(run("label", "import", rundir, tmp_path / "bad.jsonl"), 2, "exactly one of --rater")
    one_error(run("judge", rundir, "--config", tmp_path / "missing.toml"), 2, "cannot read")
    one_error(run("label", "serve", rundir, "--rater", "a/b"), 2, "rater name")


def test_a_command_judge_through_the_cli(rundir, tmp_path):
    script = tmp_path / "judge.py"
    script.write_text("import json, sys\njson.load(sys.stdin)\n"
                      "print(json.dumps({'class': 'false_positive', 'defect_id': None, 'fields': {}}))\n")  # fmt: skip
    (tmp_path / "judge.toml").write_text(f'audit_seed = 3\njudge = {{ kind = "command", command = "{sys.executable} {script}", sandbox = false, network = true }}\n')
    result = json.loads(run("judge", rundir, "--config", tmp_path / "judge.toml", "--json").stdout)
    assert (result["asked"], result["labelled"], result["failed"]) == (10, 10, 0)
    assert result["audit"]["seed"] == 3 and len(result["audit"]["claims"]) == 1
    again = json.loads(run("judge", rundir, "--config", tmp_path / "judge.toml", "--json").stdout)
    assert again["asked"] == 0  # already labelled: nothing asked twice unless --all
    # no human label at all: the subset lacks every kind of claim, refused before asking
    one_error(run("judge", "calibrate", rundir, "--config", tmp_path / "judge.toml"), 2,
              "too few true findings, safe counterexamples")  # fmt: skip
    with (tmp_path / "judge.toml").open("a") as handle:
        handle.write("[rule]\nmin_per_kind = 0\n")
    calibration = json.loads(run("judge", "calibrate", rundir, "--config", tmp_path / "judge.toml", "--json",
                                 "--bootstrap", "100").stdout)  # fmt: skip
    assert calibration["n"] == 0 and calibration["usable"] is False and calibration["composition"]["waived"]


def test_serve_starts_on_loopback_and_stops_on_ctrl_c(rundir):
    import re
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "reviewbench", "label", "serve", str(rundir), "--port", str(port),
                             "--rater", "ann", "--adjudicator", "ada"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    lines = []
    try:
        while len(lines) < 3:  # the banner, then one link per person
            line = proc.stderr.readline()
            assert line, "".join(lines)
            lines.append(line)
        links = dict(re.findall(r"^  (?:rater|adjudicator) (\S+): (http://127\.0\.0\.1:\d+/\?token=\S+)$",
                                "".join(lines), re.MULTILINE))  # fmt: skip
        assert set(links) == {"ann", "ada"} and links["ann"] != links["ada"]
        # printed once the socket accepts: the link answers at once, no waiting (issue 27, item 11)
        with urllib.request.urlopen(links["ann"], timeout=10) as response:
            page = response.read().decode()
            assert "default-src 'none'" in response.headers["content-security-policy"]
        assert "Welcome, ann" in page
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5)
            raise AssertionError("the app answered without a token")
        except urllib.error.HTTPError as exc:
            assert exc.code == 403
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    err = "".join(lines) + err
    assert "Traceback" not in err and "labelling app on http://127.0.0.1:" in err


def test_serve_without_anyone_to_serve_is_one_line(rundir):
    one_error(run("label", "serve", rundir, "--port", "0"), 2, "nobody could open the app")


def test_serve_with_nothing_to_label_refuses_before_printing_a_link(tmp_path):
    from reviewbench.evidence.store import LabelStore, Role

    from .conftest import write_corpus, write_runs

    empty = write_runs(tmp_path / "runs", write_corpus(tmp_path / "corpus"), findings={})
    with LabelStore(empty) as store:
        token = store.invite("ann", Role.RATER)
    proc = run("label", "serve", empty, "--port", "0", "--rater", "ann")
    one_error(proc, 2, "no reviewer comment to label")
    assert "http://" not in proc.stderr + proc.stdout
    with LabelStore(empty) as store:
        assert store.identify(token) is not None  # refused before any token was rotated
    proc = run("label", "serve", tmp_path / "nowhere", "--port", "0", "--rater", "ann")
    assert proc.returncode != 0 and "http://" not in proc.stderr + proc.stdout


def test_invite_prints_one_link_and_status_names_people_not_tokens(rundir):
    proc = run("label", "invite", rundir, "cat", "--port", "9001")
    assert proc.returncode == 0, proc.stderr
    (link,) = proc.stdout.split()
    assert link.startswith("http://127.0.0.1:9001/?token=") and len(link) > 60
    token = link.split("=", 1)[1]
    status = run("label", "status", rundir, "--json")
    data = json.loads(status.stdout)
    assert [(p["name"], p["role"]) for p in data["people"]] == [("cat", "rater")]
    assert token not in status.stdout and token not in run("label", "status", rundir).stdout
    assert data["chain"]["labels"]["rows"] == 0
    one_error(run("label", "invite", rundir, "a/b"), 2, "rater name")
