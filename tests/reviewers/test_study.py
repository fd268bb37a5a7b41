"""The guidance study end to end, on a loopback forge and a real sandbox: issue 31's "done when".

One pre-registered experiment, four conditions, every case reviewed once:

- A, B, C: a review bot on the loopback forge. A places no guidance, B a root ``AGENTS.md``
  (R-01 everywhere), C ``services/ledger/AGENTS.md`` (R-01 scoped to the ledger). The bot
  reads ``AGENTS.md`` from the pushed tree, nearest folders first, and comments at the
  removed guard only where a rule's path scope applies; once, on the first web/ defect it
  has no rule for, it answers "usage limit reached" instead of reviewing.
- agent: a command reviewer with no network list, which tries to reach the forge's
  loopback port on every run.

The corpus: three fix reversals that each remove a guard (two under services/ledger/, one
under web/), each with its mirror (the fix itself, which only adds the guard), and every
defect tagged with rule R-01 by a curator after mining.

By hand: R-01 recall A 0/3 (the baseline: every rule defect is an opportunity), B 3/3, C 2/2
with the web defect not eligible (C's guidance does not reach web/: a scoping defect, not a
miss); the failed first attempt of A's or C's web defect is ``failed``/``bot_error``, retried
once under the registered rule, and stays a missing review: that condition's completion is
6 completed / 7 attempts. The gates tier on R-01 recall >= 0.9 grants B and C, not A.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus
from reviewbench.mine.authored import _rewrite
from reviewbench.report import ReportOptions, build_report, render_html
from reviewbench.review.experiment import load_experiment
from reviewbench.review.runner import run_experiment
from reviewbench.score import ScoreOptions, score_run
from reviewbench.store.corpus import read_corpus
from reviewbench.store.runs import RunStore

from ..conftest import run_cli
from .forge_server import ForgeServer

TOKEN = "ghp_loopbackstudy0123456789"
PYTHON_HOME = os.path.realpath(sys.base_prefix)
RULES = {"broad": "R-01: never drop an input guard (an early return on bad input).\n",
         "scoped": "R-01: ledger code must never drop an input guard (an early return on bad input).\n"}
GATES = """\
analysis = "end_to_end"
min_defect_cases = 3
min_controls = 3
max_interval_width = 1.0
[[tier]]
name = "rule_keeper"
authority = "points at R-01 violations"
when = [{ metric = "defect_recall@rule:R-01", op = ">=", value = 0.9 }]
permitted = ["flag R-01 violations for a reviewer"]
[fallback]
name = "none"
authority = "none"
"""
#: The command reviewer: tries the forge's loopback port, then says it found nothing.
AGENT = """
import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1] + "/agent-was-here", timeout=3)
    print("services/ledger/post.py:1 reached the network")
except Exception:
    print("NO_ISSUES")
"""


@pytest.fixture(autouse=True)
def token(monkeypatch):
    monkeypatch.setenv("RB_FORGE_TOKEN", TOKEN)


@pytest.fixture
def corpus(git_repo, tmp_path) -> Path:
    """Three fixes that each add a guard; mined as reversals (the guard removed) with mirrors;
    then every defect tagged R-01, as a curator would after mining."""
    repo = git_repo()
    repo.commit("init", {"services/ledger/post.py": "def post(amount):\n    return amount\n",
                         "services/ledger/void.py": "def void(entry):\n    return entry\n",
                         "web/page.py": "def page(number):\n    return number\n"})  # fmt: skip
    repo.commit("fix post", {"services/ledger/post.py": "def post(amount):\n    if amount is None:\n        return LEDGER_ZERO\n"
                                                        "    return amount\n"})  # fmt: skip
    repo.commit("fix void", {"services/ledger/void.py": "def void(entry):\n    if entry < 0:\n        return VOID_FLOOR\n"
                                                        "    return entry\n"})  # fmt: skip
    repo.commit("fix page", {"web/page.py": "def page(number):\n    if not number:\n        return FIRST_PAGE\n"
                                            "    return number\n"})  # fmt: skip
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=True, controls_ratio=0), out)
    mined = read_corpus(out)
    tagged = [g.model_copy(update={"defects": [d.model_copy(update={"rule_id": "R-01"}) for d in g.defects]})
              for g in mined.gold]  # fmt: skip
    _rewrite(mined, list(mined.cases), tagged)
    return out


def _bot(bare: Path, limited: list[int]):
    def bot(server: ForgeServer, number: int, poll: int) -> None:
        pull = server.pulls[number]
        base, head = pull["base"]["sha"], pull["head"]["sha"]

        def git(*args: str) -> str:
            return subprocess.run(["git", "--git-dir", str(bare), *args], capture_output=True, text=True,
                                  check=True).stdout  # fmt: skip

        path = next(p for p in git("diff", "--name-only", base, head).split() if not p.endswith("AGENTS.md"))
        added, removed = map(int, git("diff", "--numstat", base, head, "--", path).split()[:2])
        folders = ["", *("/".join(path.split("/")[:i]) + "/" for i in range(1, path.count("/") + 1))]
        rules = [text for f in folders if (text := server.show(f"{head}:{f}AGENTS.md"))]
        violation = removed > 0 and added == 0  # the guard dropped; a mirror only adds it
        function = path.rsplit("/", 1)[1].removesuffix(".py")
        dropped = [line[1:] for line in git("diff", "-U0", base, head, "--", path).splitlines()
                   if line.startswith("-") and not line.startswith("---")]  # fmt: skip
        quoted = ", ".join(f"`{name}`" for name in re.findall(r"\b[A-Z][A-Z0-9_]{3,}\b", "\n".join(dropped)))
        if violation and not rules and path.startswith("web/") and not limited:
            limited.append(number)
            server.add_issue_comment(number, "Codex usage limit reached. Try again later.")
        elif violation and any("R-01" in r for r in rules):
            server.add_review(number, "R-01 applies.",
                              [(path, 2, f"`{function}` no longer returns {quoted} on bad input: it drops its "
                                         "input guard (R-01).")])  # fmt: skip
        else:
            server.add_review(number, "No issues found.")

    return bot


def _experiment(tmp_path: Path, corpus: Path, server: ForgeServer, bare: Path) -> Path:
    rules = tmp_path / "rules"
    rules.mkdir()
    for name, text in RULES.items():
        (rules / f"{name}.md").write_text(text)
    forge = (f'{{ kind = "github", api_url = "{server.api_url}", repo = "{server.repo}", remote = "{bare}", '
             f'token_env = "RB_FORGE_TOKEN", trigger = "{server.trigger}", bot = "{server.bot_login}", '
             f"poll_s = 0.05, timeout_s = 5 }}")  # fmt: skip
    agent = (f'{{ kind = "command", command = {json.dumps(f"{sys.executable} -c {shlex.quote(AGENT)} {server.api_url}")}, '
             f"expose = {json.dumps([PYTHON_HOME])} }}")  # fmt: skip
    treatments = {"A": "", "B": 'guidance_files = [{ path = "AGENTS.md", file = "rules/broad.md" }]\n',
                  "C": 'guidance_files = [{ path = "services/ledger/AGENTS.md", file = "rules/scoped.md" }]\n'}
    text = f'corpus = "{corpus}"\nrepeats = 1\nseed = 11\nrename = false\nmax_retries = 1\n'
    for name, treatment in treatments.items():
        text += (f'[[condition]]\nname = "{name}"\nreviewer = {forge}\ncontext = "tree"\nconcurrency = 1\n'
                 f"timeout_s = 600\n{treatment}")  # fmt: skip
    text += f'[[condition]]\nname = "agent"\nreviewer = {agent}\ntimeout_s = 60\n'
    path = tmp_path / "study.toml"
    path.write_text(text)
    (tmp_path / "gates.toml").write_text(GATES)
    return path


def _blob(text: str) -> str:
    return subprocess.run(["git", "hash-object", "--stdin"], input=text, capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip


def test_the_guidance_study_end_to_end(tmp_path, corpus):
    bare = tmp_path / "sandbox.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    limited: list[int] = []
    out = tmp_path / "runs"
    with ForgeServer(bare, token=TOKEN, bot=_bot(bare, limited)) as server:
        experiment = _experiment(tmp_path, corpus, server, bare)
        registered = run_cli("register", experiment, "--out", out, "--gates", tmp_path / "gates.toml",
                             "--include-unvalidated")  # mined cases, not validated here
        assert registered.returncode == 0, registered.stderr
        first = run_experiment(load_experiment(experiment), out)
        assert first.by_state == {"completed_findings": 5, "completed_no_findings": 18, "failed": 1}
        retried = run_experiment(load_experiment(experiment), out, retry_failed=True)
        assert retried.by_state == {"completed_findings": 5, "completed_no_findings": 19}
        again = run_cli("run", experiment, "--out", out, "--retry-failed")  # nothing failed now: nothing sent
        assert again.returncode == 0, again.stderr
        assert len(server.pulls) == 19  # 18 forge runs and the one retry
    assert not [r for r in server.requests if r[1] == "/agent-was-here"]  # the agent never reached the forge
    frozen = json.loads((out / "registration.json").read_text())["versions"][0]["frozen"]
    assert frozen["network"] == {"agent": {"policy": "none"}}

    store = RunStore(out / "runs.sqlite")
    try:
        runs, history = list(store.runs()), store.history()
    finally:
        store.close()
    gold = {g.case_id: g for g in read_corpus(corpus).gold}
    paths = {c.case_id: c.paths[0] for c in read_corpus(corpus).cases}
    defects = sorted(c for c, g in gold.items() if g.defects)
    ledger = {c for c in defects if paths[c].startswith("services/ledger/")}
    assert (len(defects), len(ledger), len(gold)) == (3, 2, 6)
    by = {(r.condition, r.case_id): r for r in runs}

    # The bot read AGENTS.md from the pushed trees: it commented only where a rule's scope applies.
    assert [bool(by[("A", c)].findings) for c in defects] == [False] * 3
    assert [bool(by[("B", c)].findings) for c in defects] == [True] * 3
    assert [bool(by[("C", c)].findings) for c in defects] == [c in ledger for c in defects]
    assert not any(by[(n, c)].findings for n in "ABC" for c in gold if not gold[c].defects)  # mirrors: silent
    # Blob SHAs per run, by git's own hash, as the pushed tree held them.
    broad, scoped = _blob(RULES["broad"]), _blob(RULES["scoped"])
    for case_id in gold:
        assert by[("A", case_id)].guidance_blobs == {}
        assert by[("B", case_id)].guidance_blobs == {"AGENTS.md": broad}
        expected = {"services/ledger/AGENTS.md": scoped} if paths[case_id].startswith("services/ledger/") else {}
        assert by[("C", case_id)].guidance_blobs == expected == by[("C", case_id)].pull_request.guidance_blobs
        assert len({by[(n, case_id)].pull_request.case_tree for n in "ABC"}) == 1  # one tree but the treatment
    # The usage-limit comment: failed with bot_error, its attempt kept and retired.
    (failed,) = history
    assert (failed.condition in "AC", failed.state, failed.failure_code, failed.try_no) == (True, "failed", "bot_error", 1)
    assert "usage limit reached" in failed.error and failed.pull_request.number == limited[0]
    assert failed.case_id in defects and paths[failed.case_id].startswith("web/")
    assert by[(failed.condition, failed.case_id)].try_no == 2
    # The command reviewer: no network, recorded so; every run completed without a finding.
    assert {by[("agent", c)].network["policy"] for c in gold} == {"none"}
    assert not any(by[("agent", c)].findings for c in gold) and by[("A", defects[0])].network is None
    # The allocation file: the seeded order of all 24 runs, written at the first run.
    allocation = [json.loads(line) for line in (out / "allocation.jsonl").read_text().splitlines()]
    assert [a["position"] for a in allocation] == list(range(24))
    assert {a["run_id"]: a["position"] for a in allocation} == {r.run_id: r.position for r in runs}

    # Scored as registered (its gates): per-rule recall differs by condition as planned.
    result = score_run(out, ScoreOptions())
    scored = result.as_json()["conditions"]

    def rule(name):
        m = scored[name]["metrics"]["defect_recall@rule:R-01"]
        return m["num"], m["den"], m["not_eligible"]

    assert (rule("A"), rule("B"), rule("C")) == ((0, 3, 0), (3, 3, 0), (2, 2, 1))
    assert [scored[n]["decision"]["tier"] for n in "ABC"] == ["none", "rule_keeper", "rule_keeper"]
    completion = scored[failed.condition]["metrics"]["completion"]
    assert (completion["num"], completion["den"]) == (6, 7)
    assert completion["missing_reviews"] == {"value": round(1 / 7, 6), "num": 1, "den": 7}
    assert completion["failure_codes"] == {"bot_error": 1} and completion["retired"] == {"failed": 1}
    other = "C" if failed.condition == "A" else "A"
    assert scored[other]["metrics"]["completion"]["missing_reviews"]["num"] == 0

    # runs, export and the report show the attempts.
    listed = run_cli("runs", out)
    assert "1 earlier attempt(s) retired by a retry or a resume are kept" in listed.stdout
    attempts = json.loads(run_cli("runs", out, "--json", "--attempts").stdout)
    mine = [a for a in attempts if a["run_id"] == failed.run_id]
    assert [(a["try_no"], a["retired"], a["failure_code"]) for a in mine] == [(1, True, "bot_error"), (2, False, None)]
    exported = [json.loads(line) for line in run_cli("export", out, "--attempts").stdout.splitlines()]
    assert [(r["try_no"], r["retired"]) for r in exported if r["run_id"] == failed.run_id] == [(1, True), (2, False)]
    assert {tuple(sorted(r["guidance_blobs"].items())) for r in exported if r["condition"] == "B"} == {(("AGENTS.md", broad),)}
    page = render_html(build_report(out, ReportOptions()))
    assert "missing reviews 1/7 attempts (1 retired by a retry and still counted); failure codes: bot_error 1" in page
    assert "attempt 2: 1 earlier attempt retired by a retry, each still a missing review in completion" in page
    assert TOKEN.encode() not in (out / "runs.sqlite").read_bytes() and TOKEN not in page
