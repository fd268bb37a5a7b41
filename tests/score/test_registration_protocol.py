"""The experiment's ``[registration]`` table: frozen whole into the registration record,
printed by score and the report; data controls required of conditions that send code out."""

from __future__ import annotations

import hashlib
import json

import pytest

from reviewbench import MineConfig, mine_corpus
from reviewbench.config.registration import needs_data_controls
from reviewbench.config.reviewers import AnthropicConfig, GiteaConfig, OpenAIConfig, SilentConfig

from ..conftest import run_cli

TABLE = """
[registration]
owner = "ana"
hypotheses = [{ id = "H1", statement = "A is fit for triage", gates = ["triage"] }]
severity_policy = { file = "severity.md", levels = { high = "money or data reaches a user", med = "a visible failure", low = "cosmetic" } }
exclusion_policy = "Only runs the harness broke."
stop_conditions = ["a safety stop", "three outages in a row"]
completion = "an answer within timeout_s"
product_surface = "flag_all on the diff"
approvals = [{ role = "security lead", name = "bo" }, { role = "decision owner", name = "ana" }]
data_controls = { account_type = "team API organisation", workspace = "evals", data_settings = "training off", retention = "30 days", raw_output_readers = ["ana", "bo"] }
"""
GATES = """min_defect_cases = 1
[[tier]]
name = "triage"
authority = "triage"
when = [{ metric = "defect_recall", op = ">=", value = 0.5 }]
[fallback]
name = "none"
permitted = []
not_permitted = ["gating"]
"""


def _error(proc):
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("reviewbench: error:"), proc.stderr
    return lines[0]


@pytest.fixture
def setup(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"app/a.py": "def a(x):\n    return x\n"})
    repo.commit("fix a", {"app/a.py": "def a(x):\n    return x or 0\n"})
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0), tmp_path / "corpus")
    (tmp_path / "gates.toml").write_text(GATES)
    (tmp_path / "severity.md").write_text("Severity is the worst credible outcome in production.\n")
    return tmp_path


def _experiment(tmp, table=TABLE, reviewer='{ kind = "flag_all" }'):
    path = tmp / "experiment.toml"
    path.write_text(f'corpus = "corpus"\nrepeats = 1\nmax_retries = 2\nretry_on = ["timeout"]\n[[condition]]\n'
                    f'name = "A"\nreviewer = {reviewer}\n{table}')  # fmt: skip
    return path


def test_the_record_holds_every_field_and_score_and_report_print_them(setup):
    tmp = setup
    experiment, out = _experiment(tmp), tmp / "runs"
    assert run_cli("register", experiment, "--out", out, "--gates", tmp / "gates.toml", "--bootstrap", "200").returncode == 0
    version = json.loads((out / "registration.json").read_text())["versions"][0]
    protocol = version["frozen"]["protocol"]
    assert set(protocol) == {"owner", "hypotheses", "severity_policy", "exclusion_policy", "stop_conditions",
                             "retry_rule", "completion", "product_surface", "approvals", "data_controls"}  # fmt: skip
    assert version["owner"] == "ana"  # the table's owner is the version's
    assert protocol["hypotheses"] == [{"id": "H1", "statement": "A is fit for triage", "gates": ["triage"]}]
    policy = protocol["severity_policy"]
    assert policy["file"] == "severity.md" and set(policy["levels"]) == {"low", "med", "high"}
    assert policy["sha256"] == hashlib.sha256((tmp / "severity.md").read_bytes()).hexdigest()
    assert protocol["retry_rule"] == {"max_retries": 2, "retry_on": ["timeout"]}
    assert protocol["approvals"][0] == {"role": "security lead", "name": "bo"}
    assert protocol["data_controls"]["raw_output_readers"] == ["ana", "bo"]
    assert run_cli("run", experiment, "--out", out).returncode == 0

    scored = run_cli("score", out, "--json")
    assert scored.returncode == 0, scored.stderr
    data = json.loads(scored.stdout)
    assert data["registration"]["protocol"] == protocol and data["registration"]["owner"] == "ana"
    board = run_cli("score", out).stdout
    assert "protocol: owner ana; 1 hypothesis, 2 approvals; every field stated" in " ".join(board.split())
    assert "decision (version 1, pre-registered, owner ana):" in board
    details = " ".join(run_cli("score", out, "--details").stdout.split())
    for said in ("hypotheses: H1: A is fit for triage (gates: triage)", "severity policy: file severity.md, SHA-256 "
                 f"{policy['sha256'][:12]}…; levels: high = money or data reaches a user",
                 "exclusion policy: Only runs the harness broke.", "stop conditions: a safety stop; three outages",
                 "retry rule: at most 2 retries per run, on timeout", "completion: an answer within timeout_s",
                 "product surface: flag_all on the diff", "approvals: security lead: bo; decision owner: ana",
                 "data controls: account team API organisation; workspace evals; data settings training off; "
                 "retention 30 days; raw outputs read by ana, bo"):  # fmt: skip
        assert said in details, said
    assert run_cli("report", out, "--html", tmp / "report.html").returncode == 0
    page = " ".join((tmp / "report.html").read_text().split())
    assert "Registered protocol: owner ana" in page
    assert "<dt>data controls</dt><dd>account team API organisation;" in page

    # The policy file's text is registered by its hash: an edit is a changed input.
    (tmp / "severity.md").write_text("Severity is whatever we say.\n")
    line = _error(run_cli("score", out))
    assert "severity policy file changed since registration" in line


def test_without_an_owner_every_decision_line_says_so(setup):
    tmp = setup
    experiment, out = _experiment(tmp, table=""), tmp / "runs"
    assert run_cli("register", experiment, "--out", out, "--gates", tmp / "gates.toml", "--bootstrap", "200").returncode == 0
    protocol = json.loads((out / "registration.json").read_text())["versions"][0]["frozen"]["protocol"]
    assert protocol["owner"] is None and protocol["hypotheses"] == [] and protocol["data_controls"] is None
    assert run_cli("run", experiment, "--out", out).returncode == 0
    board = " ".join(run_cli("score", out, "--details").stdout.split())
    assert "protocol: NO DECISION OWNER; 0 hypotheses, 0 approvals; not stated: hypotheses, severity policy" in board
    assert "decision (version 1, pre-registered, no decision owner):" in board
    assert "owner: NOT STATED: no one owns the decisions" in board
    assert "  decision (version 1, pre-registered, no decision owner): " in run_cli(
        "score", out, "--details").stdout  # each condition's own decision line too


def test_an_owner_given_twice_must_agree_and_hypotheses_name_real_gates(setup):
    tmp = setup
    experiment, out = _experiment(tmp), tmp / "runs"
    line = _error(run_cli("register", experiment, "--out", out, "--gates", tmp / "gates.toml", "--owner", "cy"))
    assert "--owner 'cy' is not the owner" in line
    wrong = TABLE.replace('gates = ["triage"]', 'gates = ["tirage"]')
    line = _error(run_cli("register", _experiment(tmp, wrong), "--out", out, "--gates", tmp / "gates.toml"))
    assert "hypothesis H1: no gate named tirage" in line
    unnamed = TABLE.replace('med = "a visible failure", ', "")
    assert "must name every level: med missing" in _error(run_cli("register", _experiment(tmp, unnamed), "--out",
                                                                     out))  # fmt: skip
    assert not (out / "registration.json").exists()


def test_a_condition_that_sends_code_out_needs_data_controls(setup):
    tmp = setup
    without = TABLE.split("data_controls")[0]
    hosted = '{ kind = "openai", base_url = "https://api.example.com/v1", model = "m", api_key_env = "" }'
    experiment, out = _experiment(tmp, without, hosted), tmp / "runs"
    line = _error(run_cli("register", experiment, "--out", out))
    assert "condition A sends the cases' code to a chat API" in line and "data_controls" in line
    line = _error(run_cli("run", experiment, "--out", out, "--no-endpoint-check"))
    assert "condition A sends the cases' code to a chat API" in line
    assert not out.exists()  # refused before anything was made
    local = '{ kind = "openai", base_url = "http://127.0.0.1:9/v1", model = "m", api_key_env = "" }'
    assert run_cli("register", _experiment(tmp, without, local), "--out", out).returncode == 0  # loopback: exempt


def test_which_reviewers_send_code_out():
    def gitea(api_url, remote):
        return GiteaConfig(kind="gitea", api_url=api_url, repo="o/r", remote=remote, bot="bot")

    assert needs_data_controls(OpenAIConfig(kind="openai", model="m")) == "api"  # api.openai.com
    assert needs_data_controls(AnthropicConfig(kind="anthropic", model="m", base_url="http://[::1]:8080")) is None
    assert needs_data_controls(OpenAIConfig(kind="openai", model="m", base_url="http://localhost:11434/v1")) is None
    assert needs_data_controls(gitea("http://127.0.0.1:3000/api/v1", "/srv/bare.git")) is None
    assert needs_data_controls(gitea("http://127.0.0.1:3000/api/v1", "git@forge.example.org:o/r.git")) == "forge"
    assert needs_data_controls(gitea("https://forge.example.org/api/v1", "file:///srv/bare.git")) == "forge"
    assert needs_data_controls(SilentConfig(kind="silent")) is None


def test_a_protocol_cannot_drive_the_terminal(setup):
    """Text of the table (an owner, a hypothesis) reaches the terminal escaped, never as ESC."""
    tmp = setup
    hostile = TABLE.replace('owner = "ana"', 'owner = "ana\\u001b[2J"').replace(
        '"A is fit for triage"', '"fit\\u202efor triage"')
    experiment, out = _experiment(tmp, hostile), tmp / "runs"
    assert run_cli("register", experiment, "--out", out, "--gates", tmp / "gates.toml", "--bootstrap", "200").returncode == 0
    assert run_cli("run", experiment, "--out", out).returncode == 0
    shown = run_cli("score", out, "--details").stdout
    assert "\x1b" not in shown and "\u202e" not in shown
    assert "owner ana\\x1b[2J" in shown and "fit\\u202efor triage" in shown
