"""The forge reviewer kinds against a loopback forge and a real bare repository as remote."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus
from reviewbench.config.reviewers import GiteaConfig, GithubConfig
from reviewbench.errors import ReviewerError, SafetyStop, UsageError
from reviewbench.records import ReviewPacket
from reviewbench.review.experiment import load_experiment
from reviewbench.review.runner import run_experiment
from reviewbench.reviewers import make_reviewer
from reviewbench.reviewers.forge import summary_findings, time_to_first_review
from reviewbench.score import ScoreOptions, score_run
from reviewbench.store.corpus import read_corpus
from reviewbench.store.runs import RunStore

from .forge_server import ForgeServer, after_polls, never

TOKEN = "ghp_loopbacksecret0123456789"


@pytest.fixture
def bare(tmp_path) -> Path:
    path = tmp_path / "sandbox.git"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


@pytest.fixture
def case(tmp_path) -> tuple[ReviewPacket, Path]:
    """A packet and its exported post-patch tree, from a real two-commit history."""
    repo = tmp_path / "origin"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b", *args],
                              capture_output=True, text=True, check=True).stdout  # fmt: skip

    git("init", "-q")
    (repo / "app").mkdir()
    (repo / "app" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "README.md").write_text("calc\n")
    git("add", "-A")
    git("commit", "-qm", "base")
    (repo / "app" / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n")
    diff = git("diff")
    tree = tmp_path / "tree"
    shutil.copytree(repo, tree, ignore=shutil.ignore_patterns(".git"))
    packet = ReviewPacket(case_id="case-000000000001", title="Update calc module", diff=diff, paths=["app/calc.py"],
                          prompt="Review this change.")  # fmt: skip
    return packet, tree


def config(server: ForgeServer, bare: Path, **fields) -> GithubConfig:
    values = {"kind": "github", "api_url": server.api_url, "repo": server.repo, "remote": str(bare),
              "token_env": "RB_FORGE_TOKEN", "trigger": server.trigger, "bot": server.bot_login, "poll_s": 0.05,
              "timeout_s": 5.0, **fields}  # fmt: skip
    return GithubConfig(**values)


def review(cfg, packet, tree):
    async def go():
        reviewer = make_reviewer(cfg)
        try:
            return await reviewer.review(packet, tree)
        finally:
            await reviewer.aclose()

    return asyncio.run(go())


@pytest.fixture(autouse=True)
def token(monkeypatch):
    monkeypatch.setenv("RB_FORGE_TOKEN", TOKEN)


def test_a_bot_that_reviews_after_two_polls(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(3, "Nothing to add.")) as server:
        reply = review(config(server, bare), packet, tree)
    record = json.loads(reply.text)
    assert record["polls"] == 3 and record["pull_number"] == 1
    assert record["pull_url"].endswith("/acme/sandbox/pull/1")
    pull = server.pulls[1]
    assert record["head_sha"] == pull["head"]["sha"] and pull["state"] == "closed"
    assert pull["title"] == "Update calc module" and "reviewbench:" in pull["body"]
    assert "case-" not in pull["body"] and "case-" not in pull["head"]["ref"]  # neutral names, no case id
    assert [c["body"] for c in server.issue_comments[1] if c["user"]["login"] == "benchmark-user"] == ["@review-bot review"]
    assert server.branches() == []  # both branches deleted
    assert record["time_to_first_review_s"] is not None and record["time_to_first_review_s"] >= 0
    assert time_to_first_review(reply.text) == record["time_to_first_review_s"]
    assert record["triggered_at"] <= record["first_review_at"] <= record["completed_at"]
    assert reply.findings == ()  # a review with nothing to say: completed, no findings


def test_the_pushed_history_is_one_base_commit_and_the_change(bare, case):
    packet, tree = case
    seen = {}

    def bot(server, number, poll):
        head = server.pulls[number]["head"]["sha"]
        seen["log"] = subprocess.run(["git", "--git-dir", str(bare), "log", "--format=%s", head],
                                     capture_output=True, text=True, check=True).stdout.split("\n")  # fmt: skip
        seen["base_file"] = subprocess.run(["git", "--git-dir", str(bare), "show", f"{head}~1:app/calc.py"],
                                           capture_output=True, text=True, check=True).stdout  # fmt: skip
        server.add_review(number, "ok")

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        review(config(server, bare), packet, tree)
    assert seen["log"][:2] == ["Update calc module", "Base"]
    assert seen["base_file"] == "def add(a, b):\n    return a + b\n"


def test_a_bot_that_never_reviews_is_timed_out_and_its_pull_request_closed(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=never) as server:
        with pytest.raises(TimeoutError, match=r"no review by review-bot within 0.5s on pull request #1"):
            review(config(server, bare, timeout_s=0.5), packet, tree)
    assert server.pulls[1]["state"] == "closed" and server.branches() == []


def test_a_403_with_retry_after_is_waited_out(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1)) as server:
        server.fail_next(403, {"Retry-After": "1"}, on="POST /repos/acme/sandbox/pulls")
        started = time.monotonic()
        reply = review(config(server, bare), packet, tree)
    assert time.monotonic() - started >= 1.0
    # The refused request was the one opening the pull request: retried, it opened one.
    assert [r for r in server.requests if r[2] == 403] == [("POST", "/repos/acme/sandbox/pulls", 403)]
    assert json.loads(reply.text)["pull_number"] == 1 and len(server.pulls) == 1


def test_an_exhausted_quota_waits_until_its_reset(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1)) as server:
        server.fail_next(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(time.time()) + 1)},
                         on="POST /repos/acme/sandbox/pulls")
        started = time.monotonic()
        review(config(server, bare), packet, tree)
    assert time.monotonic() - started >= 1.0 and len(server.pulls) == 1


def test_a_summary_and_two_inline_comments_become_findings(bare, case):
    packet, tree = case

    def bot(server, number, poll):
        server.add_review(number, "Summary:\n- `calc.py`: add() now subtracts.\n- Docs are fine.",
                          [("app/calc.py", 2, "This returns a - b; add must add."),
                           ("app/calc.py", 5, "sub duplicates the broken add.")])  # fmt: skip

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        reply = review(config(server, bare), packet, tree)
    got = [(f.path, f.line, f.claim) for f in reply.findings]
    assert got == [("app/calc.py", 2, "This returns a - b; add must add."),
                   ("app/calc.py", 5, "sub duplicates the broken add."),
                   ("app/calc.py", None, "`calc.py`: add() now subtracts.")]  # fmt: skip


def test_automatic_review_needs_no_trigger(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, trigger=None, bot=after_polls(1)) as server:
        review(config(server, bare, trigger=None), packet, tree)
    assert 1 not in server.issue_comments  # nothing posted


def test_keep_open_leaves_the_pull_request_and_branches(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1)) as server:
        review(config(server, bare, keep_open=True), packet, tree)
    assert server.pulls[1]["state"] == "open" and len(server.branches()) == 2


def test_a_missing_token_is_a_usage_error_and_a_bad_one_names_no_secret(bare, case, monkeypatch):
    packet, tree = case
    with ForgeServer(bare, token="other-token") as server:
        monkeypatch.delenv("RB_FORGE_TOKEN")
        with pytest.raises(UsageError, match="RB_FORGE_TOKEN"):
            make_reviewer(config(server, bare))
        monkeypatch.setenv("RB_FORGE_TOKEN", TOKEN)
        with pytest.raises(Exception, match="HTTP 401") as info:
            review(config(server, bare), packet, tree)
        assert server.branches() == []  # pushed, refused, cleaned up
    assert TOKEN not in str(info.value)


def test_gitea_sends_its_token_scheme(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1), scheme="token") as server:
        cfg = GiteaConfig(kind="gitea", api_url=server.api_url, repo=server.repo, remote=str(bare),
                          token_env="RB_FORGE_TOKEN", bot=server.bot_login, trigger=server.trigger, poll_s=0.05)  # fmt: skip
        reply = review(cfg, packet, tree)
    assert reply.model == "gitea:review-bot" and server.pulls[1]["state"] == "closed" and server.branches() == []


def test_summary_findings_need_a_changed_file_named():
    found = summary_findings("- a.py: bug\n- see lib/b.py line 3\n- nothing here\n- xa.py is other",
                             ["src/a.py", "lib/b.py"])  # fmt: skip
    assert [(f.path, f.claim) for f in found] == [("src/a.py", "a.py: bug"), ("lib/b.py", "see lib/b.py line 3")]


# -- whole experiments ---------------------------------------------------------------


@pytest.fixture
def corpus(git_repo, tmp_path) -> Path:
    repo = git_repo()
    repo.commit("init", {"app/a.py": "def a(x):\n    return x\n", "app/b.py": "def b(x):\n    return x\n",
                         "app/c.py": "def c(x):\n    return x\n"})  # fmt: skip
    repo.commit("fix a", {"app/a.py": "def a(x):\n    if x is None:\n        return 0\n    return x\n"})
    repo.commit("fix b", {"app/b.py": "def b(x):\n    return x + 1\n"})
    repo.commit("fix c", {"app/c.py": "def c(x):\n    return abs(x)\n"})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), out)  # three fix reversals
    return out


def _experiment(tmp_path: Path, corpus: Path, server: ForgeServer, bare: Path, timeout_s: float = 5.0) -> Path:
    reviewer = (f'{{ kind = "github", api_url = "{server.api_url}", repo = "{server.repo}", remote = "{bare}", '
                f'token_env = "RB_FORGE_TOKEN", trigger = "{server.trigger}", bot = "{server.bot_login}", '
                f"poll_s = 0.05, timeout_s = {timeout_s} }}")  # fmt: skip
    path = tmp_path / "experiment.toml"
    path.write_text(f'corpus = "{corpus}"\nrepeats = 1\nseed = 3\nrename = false\n[[condition]]\nname = "bot"\n'
                    f'reviewer = {reviewer}\ncontext = "tree"\nconcurrency = 2\ntimeout_s = 600\n')  # fmt: skip
    return path


def _states(out: Path) -> list[str]:
    store = RunStore(out / "runs.sqlite")
    try:
        return sorted(r.state for r in store.runs())
    finally:
        store.close()


def test_a_whole_experiment_opens_each_pull_request_once_and_closes_it(tmp_path, corpus, bare):
    def bot(server, number, poll):  # reviews two of three, never the third
        if poll == 2 and number != 2:
            server.add_review(number, "Reviewed.", [("app/a.py", 2, "check None")])

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        experiment = load_experiment(_experiment(tmp_path, corpus, server, bare, timeout_s=1.0))
        out = tmp_path / "runs"
        summary = run_experiment(experiment, out)
        assert sum(summary.by_state.values()) == 3
        assert summary.by_state.get("timed_out") == 1
        assert len(server.pulls) == 3 and all(p["state"] == "closed" for p in server.pulls.values())
        assert server.branches() == []
        again = run_experiment(experiment, out)  # replay: recorded reviews are reused
        assert again.requests == 0 and len(server.pulls) == 3
    raw = (out / "runs.sqlite").read_bytes()
    assert TOKEN.encode() not in raw
    store = RunStore(out / "runs.sqlite")
    try:
        runs = list(store.runs())  # (a generator read twice checked nothing the second time)
        timed_out = [r for r in runs if r.state == "timed_out"]
        assert "pull request #" in timed_out[0].error
        done = [r for r in runs if r.state != "timed_out"]
        assert all(time_to_first_review(r.raw_output) is not None for r in done)
    finally:
        store.close()
    # Every run, timed_out included, names its pull request in a field of its own.
    pulls = {r.pull_request.number: r for r in runs}
    assert sorted(pulls) == [1, 2, 3]
    for number, run in pulls.items():
        pull, served = run.pull_request, server.pulls[number]
        assert (pull.kind, pull.repo, pull.url) == ("github", "acme/sandbox", served["html_url"])
        assert pull.head_sha == served["head"]["sha"] and pull.triggered_at and pull.completed_at
        assert pull.polls >= 1
    never = pulls[2]
    assert never.state == "timed_out" and never.raw_output is None
    assert never.pull_request.first_review_at is None and never.pull_request.time_to_first_review_s is None
    assert never.pull_request.triggered_at <= never.pull_request.completed_at
    for number in (1, 3):
        pull = pulls[number].pull_request
        assert pulls[number].state.completed and pull.time_to_first_review_s is not None
        assert pull.time_to_first_review_s == time_to_first_review(pulls[number].raw_output)
    # Time to first review is scored: 2 reviewed of 3 forge runs, the timed-out one not dropped.
    first = score_run(out, ScoreOptions(bootstrap=100, include_unvalidated=True)).as_json()
    first = first["conditions"]["bot"]["metrics"]["time_to_first_review_s"]
    assert (first["num"], first["den"], first["not_reviewed"]) == (2, 3, {"timed_out": 1})
    seconds = sorted(pulls[n].pull_request.time_to_first_review_s for n in (1, 3))
    assert (first["min"], first["max"]) == (seconds[0], seconds[1])
    # ... and the export carries it, so a user can find the pull request.
    exported = subprocess.run([sys.executable, "-m", "reviewbench", "export", str(out)], capture_output=True,
                              text=True, check=True).stdout  # fmt: skip
    by_state = {json.loads(line)["state"]: json.loads(line) for line in exported.splitlines()}
    assert by_state["timed_out"]["pull_request"]["number"] == 2
    assert by_state["timed_out"]["pull_request"]["url"].endswith("/acme/sandbox/pull/2")


def _run_until(server, experiment, out, ready, within: float = 60) -> subprocess.Popen:
    """``reviewbench run`` in a process of its own (to be killed or interrupted), returned
    once ``ready()`` holds or ``within`` seconds have passed."""
    env = {**os.environ, "RB_FORGE_TOKEN": TOKEN}
    proc = subprocess.Popen([sys.executable, "-m", "reviewbench", "run", str(experiment), "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)  # fmt: skip
    deadline = time.monotonic() + within
    while not ready() and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc


def test_kill_9_mid_run_then_resume_closes_the_stale_pull_request(tmp_path, corpus, bare, monkeypatch):
    scratch = tmp_path / "tmp"  # the killed run's push areas land here, and must not stay
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr("tempfile.tempdir", None)
    with ForgeServer(bare, token=TOKEN, bot=never) as server:
        experiment = _experiment(tmp_path, corpus, server, bare, timeout_s=300)
        out = tmp_path / "runs"
        proc = _run_until(server, experiment, out, lambda: len(server.pulls) >= 2)
        try:
            assert len(server.pulls) == 2, "the run never opened its pull requests"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        stale = dict(server.pulls)
        assert all(p["state"] == "open" for p in stale.values()) and len(server.branches()) == 4
        server.bot = after_polls(1)
        summary = run_experiment(load_experiment(experiment), out)
        assert summary.by_state == {"completed_no_findings": 3}
        assert all(server.pulls[n]["state"] == "closed" for n in stale)  # the stale ones, closed
        assert len(server.pulls) == 2 + 3  # each run opened once after the resume
        assert all(p["state"] == "closed" for p in server.pulls.values()) and server.branches() == []
    assert [p.name for p in scratch.iterdir() if p.name.startswith("reviewbench-forge-")] == []


def test_a_run_that_fails_after_opening_its_pull_request_records_it(tmp_path, corpus, bare):
    def bot(server, number, poll):  # reviews, but the forge breaks under the second pull request's polls
        if number == 2:
            server._failures.append((404, {}, None))  # (the server's lock is held while the bot runs)
        elif poll == 1:
            server.add_review(number, "Fine.")

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        out = tmp_path / "runs"
        run_experiment(load_experiment(_experiment(tmp_path, corpus, server, bare)), out)
    store = RunStore(out / "runs.sqlite")
    try:
        failed = [r for r in store.runs() if r.state == "failed"]
    finally:
        store.close()
    # (two runs at a time: the refusal may land on either's request, after its pull request opened)
    assert failed and all("HTTP 404" in r.error for r in failed)
    for run in failed:
        pull = run.pull_request
        assert pull.head_sha == server.pulls[pull.number]["head"]["sha"]
        # The second pull request is never reviewed; another one that the refusal reached
        # after the bot's review keeps the review time it saw (seen once under a loaded CI).
        assert pull.number != 2 or pull.first_review_at is None
    # Every pull request is closed, unless the one refusal landed on a close request itself
    # (a stale pull request that a resume closes: test_kill_9_mid_run_then_resume_...).
    assert sum(p["state"] != "closed" for p in server.pulls.values()) <= 1


def test_ctrl_c_mid_run_records_each_interrupted_run_with_its_pull_request(tmp_path, corpus, bare):
    with ForgeServer(bare, token=TOKEN, bot=never) as server:
        experiment = _experiment(tmp_path, corpus, server, bare, timeout_s=300)
        out = tmp_path / "runs"
        proc = _run_until(server, experiment, out, lambda: sum(1 for n in server.pulls if server.polls.get(n)) >= 2)
        try:
            assert len(server.pulls) == 2, "the run never opened its pull requests"
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=60) == 130
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        # Ctrl-C cancels each run twice; the clean-up still closes both before the client goes.
        assert all(p["state"] == "closed" for p in server.pulls.values()) and server.branches() == []
    store = RunStore(out / "runs.sqlite")
    try:
        cancelled = [r for r in store.runs() if r.state == "cancelled"]
    finally:
        store.close()
    assert sorted(r.pull_request.number for r in cancelled) == [1, 2]
    assert all(r.pull_request.head_sha == server.pulls[r.pull_request.number]["head"]["sha"] for r in cancelled)


@pytest.mark.parametrize(("extra", "message"), [
    ('context = "diff"\ntimeout_s = 600', 'set context = "tree"'),
    ('context = "tree"\ntimeout_s = 5', "must exceed the reviewer's own timeout_s"),
])  # fmt: skip
def test_a_forge_condition_without_a_tree_or_time_is_refused_on_load(tmp_path, extra, message):
    reviewer = ('{ kind = "github", repo = "a/b", remote = "/nowhere", bot = "bot", timeout_s = 30 }')
    path = tmp_path / "experiment.toml"
    path.write_text(f'corpus = "c"\n[[condition]]\nname = "bot"\nreviewer = {reviewer}\n{extra}\n')
    with pytest.raises(UsageError, match=message):
        load_experiment(path)


# -- rate limits: GET /rate_limit before a pull request is opened --------------------------


def _reviews(cfg, packets_and_trees):
    """Several reviews by one reviewer (one client, one quota seen), in order."""

    async def go():
        reviewer = make_reviewer(cfg)
        try:
            return [await reviewer.review(packet, tree) for packet, tree in packets_and_trees]
        finally:
            await reviewer.aclose()

    return asyncio.run(go())


def _gitea(server: ForgeServer, bare: Path, **fields) -> GiteaConfig:
    return GiteaConfig(kind="gitea", api_url=server.api_url, repo=server.repo, remote=str(bare),
                       token_env="RB_FORGE_TOKEN", bot=server.bot_login, trigger=server.trigger, poll_s=0.05,
                       **fields)  # fmt: skip


def test_a_spent_quota_is_asked_for_and_waited_out_before_the_pull_request_opens(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1)) as server:
        server.set_quota(remaining=0, reset_in=1.5)
        started = time.monotonic()
        reply = review(config(server, bare), packet, tree)
    assert time.monotonic() - started >= 1.0
    calls = [(method, path) for method, path, _ in server.requests]
    assert calls[0] == ("GET", "/rate_limit")  # asked first, before anything is pushed or opened
    assert not [r for r in server.requests if r[2] == 403]  # waited for the reset, never refused
    assert json.loads(reply.text)["pull_number"] == 1 and server.pulls[1]["state"] == "closed"


def test_a_reset_beyond_timeout_s_is_one_clear_line_and_opens_nothing(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1)) as server:
        server.set_quota(remaining=3, reset_in=3600)
        with pytest.raises(ReviewerError) as info:
            review(config(server, bare, timeout_s=5.0), packet, tree)
    message = str(info.value)
    assert "\n" not in message and "rate limit asks to wait" in message and "more than timeout_s (5s)" in message
    assert server.pulls == {} and server.branches() == []  # nothing pushed, nothing opened
    assert TOKEN not in message


def test_a_quota_told_by_every_answer_is_asked_for_once(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1)) as server:
        server.set_quota(remaining=500, reset_in=3600)
        _reviews(config(server, bare), [(packet, tree), (packet, tree)])
        low = server.quota["remaining"]
    assert [r[1] for r in server.requests].count("/rate_limit") == 1  # at start; the headers told the rest
    assert len(server.pulls) == 2 and low < 500


def test_a_low_quota_in_the_last_answer_asks_again_before_the_next_pull_request(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1)) as server:
        server.set_quota(remaining=14, reset_in=1.5)  # one review spends 6: 8 left, low
        _reviews(config(server, bare), [(packet, tree), (packet, tree)])
    paths = [r[1] for r in server.requests]
    second = [i for i, p in enumerate(paths) if p == "/repos/acme/sandbox/pulls"][-1]
    assert paths.count("/rate_limit") == 2 and paths[:second].count("/rate_limit") == 2
    assert not [r for r in server.requests if r[2] == 403] and len(server.pulls) == 2


def test_gitea_without_a_rate_limit_endpoint_is_asked_once_and_reviews(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1), scheme="token", rate_limit_endpoint=False) as server:
        replies = _reviews(_gitea(server, bare), [(packet, tree), (packet, tree)])
    assert [r for r in server.requests if r[1] == "/rate_limit"] == [("GET", "/rate_limit", 404)]
    assert [json.loads(r.text)["pull_number"] for r in replies] == [1, 2]
    assert all(p["state"] == "closed" for p in server.pulls.values()) and server.branches() == []


def test_gitea_answering_429_with_retry_after_is_waited_out(bare, case):
    packet, tree = case

    async def go(server):
        reviewer = make_reviewer(_gitea(server, bare))
        try:
            await reviewer.review(packet, tree)  # asks /rate_limit once (404)
            server.fail_next(429, {"Retry-After": "1"})  # then opening the next pull request is refused
            started = time.monotonic()
            reply = await reviewer.review(packet, tree)
            return reply, time.monotonic() - started
        finally:
            await reviewer.aclose()

    with ForgeServer(bare, token=TOKEN, bot=after_polls(1), scheme="token", rate_limit_endpoint=False) as server:
        reply, took = asyncio.run(go(server))
    assert took >= 1.0 and json.loads(reply.text)["pull_number"] == 2 and len(server.pulls) == 2
    assert [r for r in server.requests if r[2] == 429] == [("POST", "/repos/acme/sandbox/pulls", 429)]


@pytest.mark.parametrize("kind", ["github", "gitea"])
def test_long_lists_are_read_to_their_end_as_each_forge_pages_them(bare, case, kind):
    """Gitea reads ``limit`` (not ``per_page``) and serves at most 50 a page: a sweep of 120
    stale pull requests must still close every one of them."""
    from reviewbench.reviewers.base import RUN_SCOPE, RunScope

    packet, tree = case
    scheme = "Bearer" if kind == "github" else "token"
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1), scheme=scheme) as server:
        for number in range(1, 121):
            server.pulls[number] = {"number": number, "state": "open", "title": "t", "head": {"ref": f"h{number}"},
                                    "base": {"ref": f"b{number}"}, "body": "<!-- reviewbench:0123abcd:run -->\n"}  # fmt: skip
        cfg = config(server, bare) if kind == "github" else _gitea(server, bare)

        async def go():
            RUN_SCOPE.set(RunScope(experiment="0123abcd", run_id="0123456789ab"))
            reviewer = make_reviewer(cfg)
            try:
                return await reviewer.review(packet, tree)
            finally:
                await reviewer.aclose()

        reply = asyncio.run(go())
    assert all(server.pulls[n]["state"] == "closed" for n in range(1, 121))  # every page swept
    assert json.loads(reply.text)["pull_number"] == 121
    pages = [r for r in server.requests if r[:2] == ("GET", "/repos/acme/sandbox/pulls")]
    assert len(pages) == (2 if kind == "github" else 3)  # 100 + 20 on GitHub; 50 + 50 + 20 on Gitea


def test_gitea_without_a_pull_comments_list_reads_each_review_s_comments(bare, case):
    packet, tree = case

    def bot(server, number, poll):
        server.add_review(number, "Summary:\n- `calc.py`: add() now subtracts.",
                          [("app/calc.py", 2, "This returns a - b; add must add."),
                           ("app/calc.py", 5, "sub duplicates the broken add.")])  # fmt: skip

    with ForgeServer(bare, token=TOKEN, bot=bot, scheme="token", rate_limit_endpoint=False) as server:
        server.pull_comments_endpoint = False
        reply = review(_gitea(server, bare), packet, tree)
    assert [(f.path, f.line) for f in reply.findings] == [("app/calc.py", 2), ("app/calc.py", 5), ("app/calc.py", None)]
    assert ("GET", "/repos/acme/sandbox/pulls/1/comments", 404) in server.requests


# -- guidance files, completion rules, bot failures -----------------------------------------


def _blob(data: str) -> str:
    return subprocess.run(["git", "hash-object", "--stdin"], input=data, capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip


def test_guidance_files_are_committed_into_both_pushed_trees_and_their_blobs_recorded(bare, case):
    packet, tree = case
    rules = {"AGENTS.md": "Root: review carefully.\n", "app/AGENTS.md": "R-01: add must add.\n",
             "docs/AGENTS.md": "Docs only.\n"}  # fmt: skip
    seen = {}

    def bot(server, number, poll):
        head, base = server.pulls[number]["head"]["sha"], server.pulls[number]["base"]["sha"]
        seen.update({side: {p: server.show(f"{sha}:{p}") for p in rules} for side, sha in (("head", head), ("base", base))})
        server.add_review(number, "ok")

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        plain = json.loads(review(config(server, bare), packet, tree).text)
        placed = json.loads(review(config(server, bare), packet.model_copy(update={"guidance_files": rules}), tree).text)
    assert seen["head"] == rules and seen["base"] == rules  # the bot reads them from either tree
    # Recorded: the applicable ones (root and app/, not docs/), by git's own blob SHA.
    assert placed["guidance_blobs"] == {"AGENTS.md": _blob(rules["AGENTS.md"]), "app/AGENTS.md": _blob(rules["app/AGENTS.md"])}
    assert plain["guidance_blobs"] == {}
    # The case's tree is the same under both: the conditions differ only by the treatment.
    assert plain["case_tree"] == placed["case_tree"] and plain["head_sha"] != placed["head_sha"]
    assert placed["base_sha"] == server.pulls[2]["base"]["sha"] and placed["author"]["login"] == "benchmark-user"
    assert "reviewbench:" in placed["description"] and placed["labels"] == [] and placed["completion"] == "review"


def test_a_usage_limit_comment_is_a_failed_review_with_code_bot_error(bare, case):
    packet, tree = case

    def bot(server, number, poll):
        if poll == 2:
            server.add_issue_comment(number, "You have reached your Codex usage limit. Upgrade or try again later.")

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        with pytest.raises(ReviewerError, match="reported a failure instead of a review on pull request #1") as info:
            review(config(server, bare), packet, tree)
    assert info.value.code == "bot_error" and "usage limit" in str(info.value)
    assert server.pulls[1]["state"] == "closed"


def test_a_failure_word_in_a_review_that_names_a_file_is_still_a_review(bare, case):
    packet, tree = case

    def bot(server, number, poll):
        server.add_review(number, "- app/calc.py: an error occurred in add(): it subtracts.")

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        reply = review(config(server, bare), packet, tree)
    assert [f.path for f in reply.findings] == ["app/calc.py"]


def test_an_early_comment_does_not_end_the_review_and_its_inline_comments_are_read(bare, case):
    packet, tree = case

    def bot(server, number, poll):
        if poll == 1:
            server.add_issue_comment(number, "Reviewing this pull request now.")
        if poll == 3:
            server.add_review(number, "Done.", [("app/calc.py", 2, "add subtracts.")], state="CHANGES_REQUESTED")

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        reply = review(config(server, bare), packet, tree)
    record = json.loads(reply.text)
    assert record["polls"] == 3 and [(f.path, f.line) for f in reply.findings] == [("app/calc.py", 2)]
    # First activity (the comment) and completed review (the review) are two times.
    assert record["first_review_at"] <= record["completed_review_at"]
    assert record["time_to_first_review_s"] <= record["time_to_completed_review_s"]


def test_first_activity_stops_at_a_comment_as_before(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=lambda s, n, p: p == 1 and s.add_issue_comment(n, "LGTM")) as server:
        reply = review(config(server, bare, completion="first_activity"), packet, tree)
    assert json.loads(reply.text)["polls"] == 1 and reply.findings == ()


def test_quiet_waits_for_late_inline_comments(bare, case):
    packet, tree = case

    def bot(server, number, poll):
        if poll == 1:
            server.add_review(number, "Partial review.")
        if poll == 3:
            server.add_review_comment(number, "app/calc.py", 5, "sub duplicates add.")

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        reply = review(config(server, bare, completion="quiet", quiet_polls=2), packet, tree)
        reviewed = review(config(server, bare), packet, tree)  # the default rule stops at the first review
    assert [(f.path, f.line) for f in reply.findings] == [("app/calc.py", 5)]
    assert json.loads(reply.text)["polls"] == 5  # activity at 1 and 3, then two quiet polls
    assert reviewed.findings == ()


def test_a_review_with_only_a_comment_in_time_is_no_review_in_window(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=lambda s, n, p: p == 1 and s.add_issue_comment(n, "On it.")) as server:
        with pytest.raises(TimeoutError, match="the bot said only: On it.") as info:
            review(config(server, bare, timeout_s=0.5), packet, tree)
    assert info.value.code == "no_review_in_window"


def test_a_refused_pull_request_is_trigger_not_accepted_and_a_bad_token_permission(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1)) as server:
        server.fail_next(422, on="POST /repos/acme/sandbox/pulls")
        with pytest.raises(ReviewerError) as refused:
            review(config(server, bare), packet, tree)
    with ForgeServer(bare, token="other", bot=after_polls(1)) as server:
        with pytest.raises(ReviewerError) as denied:
            review(config(server, bare), packet, tree)
    assert (refused.value.code, denied.value.code) == ("trigger_not_accepted", "permission")


# -- the study: A/B/C guidance conditions on one forge -----------------------------------------


@pytest.fixture
def ledger_corpus(git_repo, tmp_path) -> Path:
    """Three fix reversals: two under services/ledger/ (a scoped rule's path), one under web/."""
    repo = git_repo()
    repo.commit("init", {"services/ledger/post.py": "def post(x):\n    return x\n",
                         "services/ledger/void.py": "def void(x):\n    return x\n",
                         "web/page.py": "def page(x):\n    return x\n"})  # fmt: skip
    repo.commit("fix post", {"services/ledger/post.py": "def post(x):\n    if x is None:\n        return 0\n    return x\n"})
    repo.commit("fix void", {"services/ledger/void.py": "def void(x):\n    return x + 1\n"})
    repo.commit("fix page", {"web/page.py": "def page(x):\n    return abs(x)\n"})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0), out)
    return out


RULES = {"broad": "R-01: every change must go through the validated helper.\n",
         "scoped": "R-01: ledger postings must go through ledger.helper.post (tests may build them directly).\n"}


def _study(tmp_path: Path, corpus: Path, server: ForgeServer, bare: Path) -> Path:
    rules = tmp_path / "rules"
    rules.mkdir()
    for name, text in RULES.items():
        (rules / f"{name}.md").write_text(text)
    reviewer = (f'{{ kind = "github", api_url = "{server.api_url}", repo = "{server.repo}", remote = "{bare}", '
                f'token_env = "RB_FORGE_TOKEN", trigger = "{server.trigger}", bot = "{server.bot_login}", '
                f"poll_s = 0.05, timeout_s = 5 }}")  # fmt: skip
    treatments = {"A": "", "B": 'guidance_files = [{ path = "AGENTS.md", file = "rules/broad.md" }]\n',
                  "C": 'guidance_files = [{ path = "services/ledger/AGENTS.md", file = "rules/scoped.md" }]\n'}
    text = f'corpus = "{corpus}"\nrepeats = 1\nseed = 5\nrename = false\nmax_retries = 1\n'
    for name, treatment in treatments.items():
        text += (f'[[condition]]\nname = "{name}"\nreviewer = {reviewer}\ncontext = "tree"\nconcurrency = 1\n'
                 f"timeout_s = 600\n{treatment}")  # fmt: skip
    path = tmp_path / "study.toml"
    path.write_text(text)
    return path


def test_an_abc_study_reaches_the_bot_through_agents_md_and_keeps_its_missing_reviews(tmp_path, ledger_corpus, bare):
    """The bot reads AGENTS.md from the pushed tree and comments only where a rule applies;
    once, it answers 'usage limit reached' instead of reviewing. By hand: A reviews 3 clean,
    B flags 3 of 3, C flags the 2 ledger cases; one first attempt on web/ (A's or C's) is a
    bot_error, retried once: that condition's completion = 3 completed / 4 attempts, missing
    reviews 1 / 4."""
    limited = []

    def bot(server, number, poll):
        pull = server.pulls[number]
        head = pull["head"]["sha"]
        changed = subprocess.run(["git", "--git-dir", str(bare), "diff", "--name-only", pull["base"]["sha"], head],
                                 capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
        path = changed[0]
        folders = ["", *("/".join(path.split("/")[:i]) + "/" for i in range(1, path.count("/") + 1))]
        rules = [text for f in folders if (text := server.show(f"{head}:{f}AGENTS.md"))]
        if not rules and path.startswith("web/") and not limited:
            limited.append(number)
            server.add_issue_comment(number, "Codex usage limit reached. Try again later.")
        elif any("R-01" in r for r in rules):
            server.add_review(number, "R-01 applies.", [(path, 2, "R-01: this bypasses the validated helper.")])
        else:
            server.add_review(number, "No issues found.")

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        experiment = load_experiment(_study(tmp_path, ledger_corpus, server, bare))
        out = tmp_path / "runs"
        first = run_experiment(experiment, out)
        assert first.by_state == {"completed_findings": 5, "completed_no_findings": 3, "failed": 1}
        retried = run_experiment(experiment, out, retry_failed=True)
        assert retried.by_state == {"completed_findings": 5, "completed_no_findings": 4}
    store = RunStore(out / "runs.sqlite")
    try:
        runs, history = list(store.runs()), store.history()
    finally:
        store.close()
    (failed,) = history
    # (A's or C's web run, whichever the seeded order puts first: neither has a rule there)
    assert (failed.condition in "AC", failed.state, failed.failure_code) == (True, "failed", "bot_error")
    assert "usage limit reached" in failed.error and failed.pull_request.number == limited[0]
    by = {(r.condition, r.case_id): r for r in runs}
    cases = sorted({r.case_id for r in runs})
    paths = {c.case_id: c.paths for c in read_corpus(ledger_corpus).cases}
    ledger = {c for c in cases if paths[c][0].startswith("services/ledger/")}
    assert len(ledger) == 2
    assert [bool(by[("C", c)].findings) for c in cases] == [c in ledger for c in cases]  # the scope holds
    assert [bool(by[("A", c)].findings) for c in cases] == [False] * 3
    assert [bool(by[("B", c)].findings) for c in cases] == [True] * 3
    # Every run records the applicable guidance blobs, by git's own hash; the bot's view agrees.
    broad, scoped = _blob(RULES["broad"]), _blob(RULES["scoped"])
    for case_id in cases:
        assert by[("A", case_id)].guidance_blobs == {}
        assert by[("B", case_id)].guidance_blobs == {"AGENTS.md": broad}
        assert by[("C", case_id)].guidance_blobs == ({"services/ledger/AGENTS.md": scoped} if case_id in ledger else {})
        for name in "ABC":
            assert by[(name, case_id)].pull_request.guidance_blobs == by[(name, case_id)].guidance_blobs
        # One case, one tree under every condition (but the treatment).
        assert len({by[(name, case_id)].pull_request.case_tree for name in "ABC"}) == 1
        assert len({by[(name, case_id)].guidance_sha256 for name in "ABC"}) == 3
    # The allocation: the seeded order, written at the first run; each run knows its place.
    allocation = [json.loads(line) for line in (out / "allocation.jsonl").read_text().splitlines()]
    assert [a["position"] for a in allocation] == list(range(9))
    assert {a["run_id"]: a["position"] for a in allocation} == {r.run_id: r.position for r in runs}
    # Scored: the retried failure stays a missing review of A.
    scored = score_run(out, ScoreOptions(bootstrap=50, include_unvalidated=True)).as_json()["conditions"]
    completion = scored[failed.condition]["metrics"]["completion"]
    assert (completion["num"], completion["den"]) == (3, 4)
    assert completion["missing_reviews"] == {"value": 0.25, "num": 1, "den": 4}
    assert completion["failure_codes"] == {"bot_error": 1}
    assert scored["B"]["metrics"]["completion"]["missing_reviews"]["num"] == 0
    # The export carries the blobs and codes; no token anywhere.
    exported = subprocess.run([sys.executable, "-m", "reviewbench", "export", str(out)], capture_output=True,
                              text=True, check=True).stdout  # fmt: skip
    rows = [json.loads(line) for line in exported.splitlines()]
    assert {tuple(sorted(r["guidance_blobs"].items())) for r in rows if r["condition"] == "B"} == {(("AGENTS.md", broad),)}
    assert TOKEN.encode() not in (out / "runs.sqlite").read_bytes() and TOKEN not in exported


# -- safety stops: the review-only boundary ----------------------------------------------------


def test_a_bot_approval_stops_the_review(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=lambda s, n, p: s.add_review(n, "LGTM", state="APPROVED")) as server:
        with pytest.raises(SafetyStop, match=r"review-bot approved pull request #1 .*review-only boundary"):
            review(config(server, bare), packet, tree)
    assert server.pulls[1]["state"] == "closed" and server.branches() == []


def test_a_merged_pull_request_stops_the_experiment_and_marks_its_run(tmp_path, corpus, bare):
    def bot(server, number, poll):
        if number == 1:
            server.merge(number)
        server.add_review(number, "Fine.")

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        experiment = _experiment(tmp_path, corpus, server, bare)
        experiment.write_text(experiment.read_text().replace("concurrency = 2", "concurrency = 1"))
        with pytest.raises(SafetyStop, match=r"pull request #1 .* was merged"):
            run_experiment(load_experiment(experiment), tmp_path / "runs")
        assert len(server.pulls) == 1  # nothing opened after the stop
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    try:
        runs = list(store.runs())
    finally:
        store.close()
    (run,) = [r for r in runs if r.failure_code == "safety_stop"]
    assert (run.state, run.pull_request.number) == ("failed", 1)
    assert all(r.state == "cancelled" for r in runs if r is not run)  # the others: stopped before their turn


def test_the_connection_is_probed_before_the_first_run_and_after_each_and_recorded_with_a_usage_reading(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1)) as server:
        server.set_quota(remaining=500, reset_in=3600)
        first, second = (json.loads(r.text) for r in _reviews(config(server, bare), [(packet, tree), (packet, tree)]))
    # Once before the first pull request, then once after each run's window.
    assert [r[1] for r in server.requests].count("/repos/acme/sandbox") == 3
    connection = first["connection"]
    assert connection == second["connection"]
    assert connection["token_scopes"] == ["read:org", "repo"] and connection["permissions"]["push"] is True
    assert connection["bot"] == {"login": "review-bot", "type": "Bot"} and connection["automatic_review"] == "not_observable"
    after = first["connection_after"]
    assert {k: v for k, v in after.items() if k != "probed_at"} == {k: v for k, v in connection.items() if k != "probed_at"}
    assert after["probed_at"] >= connection["probed_at"]
    usage = first["usage"]
    assert usage["unit"] == "rate_limit_remaining" and usage["before"] > usage["after"] > 0 and usage["observed_at"]
    assert TOKEN not in json.dumps(first)


def test_a_bot_removed_during_the_run_fails_it_connection_changed(bare, case):
    """The bot's app is removed while the run waits: the review never comes, and the run is
    connection_changed (not a plain no_review_in_window), naming what changed."""
    packet, tree = case

    def bot(server, number, poll):
        server.bot_installed = False

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        reviewer_config = config(server, bare, timeout_s=0.5)
        with pytest.raises(ReviewerError) as failed:
            review(reviewer_config, packet, tree)
    assert failed.value.code == "connection_changed"
    assert 'bot {"login": "review-bot", "type": "Bot"} -> "not_found"' in str(failed.value)
    assert "pull request #1" in str(failed.value)


def test_a_review_made_after_the_token_lost_a_right_is_not_taken_for_a_review(bare, case):
    packet, tree = case

    def bot(server, number, poll):
        server.permissions["push"] = False
        server.scopes = "read:org"
        server.add_review(number, "Looks fine.")

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        with pytest.raises(ReviewerError) as failed:
            review(config(server, bare), packet, tree)
    assert failed.value.code == "connection_changed"
    message = str(failed.value)
    assert 'token_scopes ["read:org", "repo"] -> ["read:org"]' in message and '"push": true' in message


def test_connection_changes_compares_only_what_both_probes_observed():
    from reviewbench.reviewers.forge import connection_changes

    before = {"probed_at": "t0", "token_scopes": ["repo"], "permissions": {"push": True}, "private": True,
              "bot": {"login": "b", "type": "Bot"}, "automatic_review": "not_observable"}
    assert connection_changes(before, {**before, "probed_at": "t1"}) == []
    assert connection_changes(before, {**before, "bot": "not_observable", "token_scopes": "not_observable"}) == []
    assert connection_changes(before, {**before, "repository": "not readable: 404"}) == [
        'repository "readable" -> "not readable"']
    assert connection_changes({**before, "repository": "not readable: 403"},
                              {**before, "repository": "not readable: 404"}) == []
    assert connection_changes(before, {**before, "private": False}) == ["private true -> false"]


def test_a_changed_connection_marks_the_experiment_s_later_runs_and_is_counted(tmp_path, corpus, bare):
    """Three runs, one at a time: the first reviews on the probed connection; during the
    second the bot's account disappears, and stays gone for the third. Each later run is
    compared with the probe before the first: by hand, completion 1/3, failure codes
    {connection_changed: 2}; each run records both probes."""
    def bot(server, number, poll):
        if number == 2:
            server.bot_installed = False
        server.add_review(number, "Fine.")

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        experiment = _experiment(tmp_path, corpus, server, bare)
        experiment.write_text(experiment.read_text().replace("concurrency = 2", "concurrency = 1"))
        summary = run_experiment(load_experiment(experiment), tmp_path / "runs")
    assert summary.by_state == {"completed_no_findings": 1, "failed": 2}
    store = RunStore(tmp_path / "runs" / "runs.sqlite")
    try:
        runs = {r.pull_request.number: r for r in store.runs()}
    finally:
        store.close()
    assert runs[1].failure_code is None and runs[1].pull_request.connection_after["bot"]["login"] == "review-bot"
    for number in (2, 3):
        changed = runs[number]
        assert (changed.state, changed.failure_code) == ("failed", "connection_changed")
        assert changed.pull_request.connection["bot"] == {"login": "review-bot", "type": "Bot"}
        assert changed.pull_request.connection_after["bot"] == "not_found"
        assert "connection changed during the run" in changed.error
    scored = score_run(tmp_path / "runs", ScoreOptions(bootstrap=50, include_unvalidated=True)).as_json()
    completion = scored["conditions"]["bot"]["metrics"]["completion"]
    assert (completion["num"], completion["den"], completion["failure_codes"]) == (1, 3, {"connection_changed": 2})


def test_gitea_shows_no_scopes_nor_quota_and_says_so(bare, case):
    packet, tree = case
    with ForgeServer(bare, token=TOKEN, bot=after_polls(1), scheme="token", rate_limit_endpoint=False) as server:
        record = json.loads(review(_gitea(server, bare), packet, tree).text)
    assert record["connection"]["token_scopes"] == "not_observable" and record["usage"] == "not_observable"


def test_a_review_whose_summary_mentions_a_rate_limit_but_has_inline_comments_is_a_review(bare, case):
    packet, tree = case

    def bot(server, number, poll):
        server.add_review(number, "Consider what happens when the upstream rate limit is hit.",
                          [("app/calc.py", 2, "add subtracts.")])  # fmt: skip

    with ForgeServer(bare, token=TOKEN, bot=bot) as server:
        reply = review(config(server, bare), packet, tree)
    assert [(f.path, f.line) for f in reply.findings] == [("app/calc.py", 2)]
