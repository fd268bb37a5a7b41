"""Review bots on a forge (``kind = "github"``, ``kind = "gitea"``): each run is a pull request.

Per run, on the user's sandbox repository: the case's base is pushed as a one-commit branch
with no history and the patched tree as a second commit on a head branch (``_forge_git``),
a pull request is opened (the case's neutral title; a body holding only a run marker), the
trigger comment is posted (or none, for bots that review by themselves), and the pull
request's reviews, review comments and issue comments are polled every ``poll_s`` until the
bot (``bot``) has reviewed or ``timeout_s`` has passed. Inline comments become findings
(path, line, body); lines of a summary that name a changed file become file-level
findings. Then the pull request is closed and both branches deleted (``keep_open`` keeps
them), whatever happened, Ctrl-C included.

Only REST endpoints GitHub documents for pulls, pull review comments, reviews and issue
comments are used, which Gitea and Forgejo implement alike (the token goes in an
``Authorization`` header: ``Bearer`` for GitHub, ``token`` for Gitea). Rate limits: before a
pull request is opened, ``GET /rate_limit`` is asked when the quota is unknown or low, and
its reset waited for (Gitea's 404 remembered); ``403``/``429`` with ``Retry-After``, or
``X-RateLimit-Remaining: 0`` with ``X-RateLimit-Reset``, wait as told; a wait longer than
``timeout_s`` is one clear error instead.

What is recorded: the run's ``pull_request`` (``records.PullRequest``: number, URL, head SHA,
trigger, first review and completion times, ``time_to_first_review_s`` by the server's
clock) whatever its end — :meth:`ForgeReviewer.pull_request` hands it to the engine, for a
``timed_out``, ``failed`` or ``cancelled`` run too; a completed run's raw output is the same
record with the bot's reviews and comments, as JSON. No review in time is ``timed_out`` (the
error names the pull request), never "no findings".

Replay safety: a finished run is never asked again (the runner's resume and cache). Every
pull request's body carries ``<!-- reviewbench:EXPERIMENT:RUN -->``; the first review of a
process closes open pull requests of its own experiment left by an interrupted one, and
deletes their branches, before opening any.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re
import secrets as _secrets
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from ..config.reviewers import GiteaConfig, GithubConfig
from ..errors import SafetyStop, UsageError
from ..records import Finding, PullRequest, ReviewPacket
from ..store.scratch import make_scratch, remove_tree
from ._forge_git import CaseCommits, build_commits, delete_branches, push_branches
from ._http import body_excerpt, parse_retry_after, redact
from .base import RUN_SCOPE, KindExamples, ReviewerError, ReviewReply, register
from .messages import clean_text
from .preflight import key_problem, url_problem

__all__ = ["ForgeReviewer", "connection_changes", "examples", "pull_request_of", "summary_findings",
           "time_to_first_review"]

MARKER = "<!-- reviewbench:{experiment}:{run} -->"
_MARKER_RE = re.compile(r"<!-- reviewbench:([0-9a-z]+):([0-9a-z]+) -->")
_PER_PAGE = 100
_MAX_RATE_WAITS = 20
_MAX_PAGES = 1000  # a forge that always says "more" cannot keep a review listing forever
#: A review takes a handful of requests and a few per poll: at or below this many left, the
#: quota is asked for (``GET /rate_limit``) before a pull request is opened.
_LOW_QUOTA = 10
_BOT_SUFFIX = "[bot]"
#: Review states that are a submitted review (a PENDING one is a draft the bot still writes).
_REVIEW_STATES = frozenset({"COMMENTED", "CHANGES_REQUESTED", "APPROVED"})
#: A bot's failure notice is a sentence or two; a longer message is a review, whatever it says.
_FAILURE_MAX_CHARS = 600
#: Fields of a run's forge record that ``records.PullRequest`` carries beside the basics.
_PROVENANCE = ("base_sha", "case_tree", "guidance_blobs", "draft", "labels", "author", "description",
               "completion", "completed_review_at", "time_to_completed_review_s", "connection", "connection_after",
               "usage")


def _now_time() -> datetime:
    """Now, to the second: the time :func:`_now` writes."""
    return datetime.now(UTC).replace(microsecond=0)


def _now() -> str:
    return _now_time().isoformat(timespec="seconds").replace("+00:00", "Z")


def _parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _login(item: dict[str, Any]) -> str:
    user = item.get("user") or {}
    return str(user.get("login") or "")


def time_to_first_review(raw_output: str | None) -> float | None:
    """Seconds from the trigger to the bot's first review, from a forge run's raw output."""
    try:
        value = json.loads(raw_output or "").get("time_to_first_review_s")
    except (ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, int | float) else None


def _as_pull_request(record: dict[str, Any]) -> PullRequest:
    url = record.get("pull_url")  # the forge's answer: untrusted, coerced to what is recorded
    return PullRequest(kind=str(record["kind"]), repo=str(record["repo"]), number=int(record["pull_number"]),
                       url=None if url is None else str(url), head_sha=str(record["head_sha"]),
                       triggered_at=record.get("triggered_at"), first_review_at=record.get("first_review_at"),
                       completed_at=record.get("completed_at"),
                       time_to_first_review_s=record.get("time_to_first_review_s"),
                       polls=record.get("polls") or 0, **{k: record[k] for k in _PROVENANCE if k in record})  # fmt: skip


def pull_request_of(raw_output: str | None) -> PullRequest | None:
    """The pull request named by a forge run's raw output (its JSON record), else None."""
    try:
        record = json.loads(raw_output or "")
        return _as_pull_request(record) if isinstance(record, dict) and "pull_number" in record else None
    except (ValueError, KeyError, TypeError):  # not a forge record (pydantic's error is a ValueError)
        return None


def summary_findings(text: str, paths: list[str]) -> list[Finding]:
    """File-level findings: each line of a summary that names a changed file (by path, or
    by file name when that name is unique among the changed files)."""
    names: dict[str, str] = {}
    for path in paths:
        names[path] = path
    base_count: dict[str, int] = {}
    for path in paths:
        base_count[os.path.basename(path)] = base_count.get(os.path.basename(path), 0) + 1
    for path in paths:
        if base_count[os.path.basename(path)] == 1:
            names.setdefault(os.path.basename(path), path)
    found: list[Finding] = []
    for line in text.splitlines():
        claim = line.strip().lstrip("-*• ").strip()
        if not claim:
            continue
        for name in sorted(names, key=len, reverse=True):
            if re.search(rf"(?<![\w./-]){re.escape(name)}(?![\w/-])", claim):
                found.append(Finding(path=names[name], line=None, claim=clean_text(claim), raw=clean_text(line)))
                break
    return found


class _Refused(ReviewerError):
    """A 4xx answer (its status kept, so a missing endpoint can be told apart)."""

    def __init__(self, message: str, *, status: int, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.status = status


class _Api:
    """The REST calls, with rate limits honoured and the token kept out of every message."""

    def __init__(self, config: GithubConfig | GiteaConfig, token: str) -> None:
        self.config = config
        self.token = token
        scheme = "Bearer" if config.kind == "github" else "token"
        self.client = httpx.AsyncClient(
            base_url=config.api_url.rstrip("/"),
            headers={"Authorization": f"{scheme} {token}", "Accept": "application/vnd.github+json",
                     "User-Agent": "reviewbench"},
            timeout=httpx.Timeout(60.0, connect=15.0),
        )  # fmt: skip
        self.prefix = f"/repos/{config.repo}"
        self.requests = 0
        self.remaining: int | None = None
        """Requests left in the quota, as the last answer's ``X-RateLimit-Remaining`` said."""
        self.reset: float | None = None
        """When the quota refills (epoch seconds), from ``X-RateLimit-Reset``."""
        self.has_rate_limit = True
        """False once ``GET /rate_limit`` answered 404 (Gitea and Forgejo have no such endpoint)."""

    async def call(self, method: str, path: str, *, body: dict | None = None, params: dict | None = None) -> Any:
        """The JSON answer of one call (None when empty)."""
        return (await self._call(method, path, body=body, params=params))[0]

    async def _call(self, method: str, path: str, *, body: dict | None = None, params: dict | None = None,
                    prefixed: bool = True) -> tuple[Any, httpx.Headers]:  # fmt: skip
        label = f"{self.config.kind} {method} {path}"
        failures = 0
        for _ in range(_MAX_RATE_WAITS):
            self.requests += 1
            try:
                resp = await self.client.request(method, (self.prefix if prefixed else "") + path, json=body,
                                                 params=params)  # fmt: skip
            except httpx.TransportError as exc:
                failures += 1
                if failures > 3:
                    raise ReviewerError(f"{label}: {type(exc).__name__}", transient=True) from None
                await asyncio.sleep(2.0 * failures)
                continue
            self._note_quota(resp.headers)
            wait = self._rate_wait(resp)
            if wait is not None:
                await self._wait(wait, label)
                continue
            if resp.status_code >= 500:
                failures += 1
                if failures > 3:
                    raise ReviewerError(f"{label}: HTTP {resp.status_code}", transient=True, code="outage_indicated")
                await asyncio.sleep(2.0 * failures)
                continue
            if resp.status_code >= 400:
                excerpt = redact(body_excerpt(resp.text, (self.token,)), (self.token,))
                raise _Refused(f"{label}: HTTP {resp.status_code}: {excerpt}", status=resp.status_code,
                               code=_refusal_code(method, path, resp.status_code))
            if resp.status_code == 204 or not resp.content:
                return None, resp.headers
            try:
                return resp.json(), resp.headers
            except ValueError:
                raise ReviewerError(f"{label}: the answer is not JSON") from None
        raise ReviewerError(f"{label}: still rate-limited after {_MAX_RATE_WAITS} waits", transient=True)

    def _note_quota(self, headers: httpx.Headers) -> None:
        """Keep what an answer says of the quota (GitHub says it on every answer; Gitea not)."""
        with contextlib.suppress(KeyError, ValueError):
            self.remaining = int(headers["x-ratelimit-remaining"])
        with contextlib.suppress(KeyError, ValueError):
            self.reset = float(headers["x-ratelimit-reset"])

    async def _wait(self, seconds: float, what: str) -> None:
        """Sleep as the forge asks, unless that is longer than the reviewer waits for a bot:
        then a one-line error instead of a run that would silently outlive its attempt."""
        if seconds > self.config.timeout_s:
            raise ReviewerError(f"{what}: the {self.config.kind} rate limit asks to wait {seconds:.0f}s, more than "
                                f"timeout_s ({self.config.timeout_s:g}s); run again after the reset, or raise timeout_s")  # fmt: skip
        await asyncio.sleep(seconds)

    async def ensure_quota(self) -> None:
        """Before a pull request is opened: when no answer has told the quota yet, or the last
        one said it is low, ask ``GET /rate_limit`` and wait for the reset if the quota is
        spent — rather than open a pull request that cannot be polled. A forge without the
        endpoint (Gitea, Forgejo: 404) is asked once; its 403/429 answers are waited out."""
        if self.remaining is not None and self.remaining > _LOW_QUOTA:
            return
        if self.has_rate_limit:
            self.requests += 1
            try:
                resp = await self.client.get("/rate_limit")
            except httpx.TransportError:
                return  # the calls that follow say what is wrong
            self._note_quota(resp.headers)
            if resp.status_code == 404:
                self.has_rate_limit = False
            elif resp.status_code < 400:
                self._read_rate_limit(resp)
            elif (wait := self._rate_wait(resp)) is not None:  # refused for now: waited out, then go on
                await self._wait(wait, f"{self.config.kind} GET /rate_limit")
                return
        if self.remaining is not None and self.remaining <= _LOW_QUOTA:
            if self.reset is not None and self.reset > time.time():
                await self._wait(self.reset - time.time() + 1.0, f"{self.config.kind} GET /rate_limit")
            self.remaining = None  # refilled (or the reset passed): the next answer tells again

    def _read_rate_limit(self, resp: httpx.Response) -> None:
        """The core quota of a ``GET /rate_limit`` answer (GitHub's shape), else its headers."""
        try:
            core = resp.json()["resources"]["core"]
            self.remaining, self.reset = int(core["remaining"]), float(core["reset"])
        except (ValueError, KeyError, TypeError):
            self._note_quota(resp.headers)

    @staticmethod
    def _rate_wait(resp: httpx.Response) -> float | None:
        """Seconds to wait when the forge says so (403/429 with Retry-After or an exhausted
        quota), else None."""
        if resp.status_code not in (403, 429):
            return None
        after = parse_retry_after(resp.headers)
        if after is not None:
            return min(after, 3600.0)
        if resp.headers.get("x-ratelimit-remaining") == "0":
            try:
                reset = float(resp.headers.get("x-ratelimit-reset", ""))
            except ValueError:
                return 60.0
            return min(max(0.0, reset - time.time()) + 1.0, 3600.0)
        return 60.0 if resp.status_code == 429 else None

    async def pages(self, path: str, **params: Any) -> list[dict[str, Any]]:
        """Every item of a list, page by page. GitHub reads ``per_page`` (at most 100), Gitea
        and Forgejo ``limit`` (clamped by the server, 50 by default): both are sent, and the
        end is read from the ``Link`` header (``rel="next"``), else ``X-Total-Count``, else a
        short page — never from the size asked for, which Gitea may cut."""
        items: list[dict[str, Any]] = []
        page = 1
        while True:
            got, headers = await self._call("GET", path, params={**params, "per_page": _PER_PAGE, "limit": _PER_PAGE,
                                                                 "page": page})  # fmt: skip
            if not isinstance(got, list):
                raise ReviewerError(f"{self.config.kind} GET {path}: expected a list")
            items.extend(i for i in got if isinstance(i, dict))
            if not got or not _more(headers, len(items), len(got)) or page >= _MAX_PAGES:
                return items
            page += 1

    async def aclose(self) -> None:
        await self.client.aclose()


def forge_preflight(config: GithubConfig | GiteaConfig, context: str | None, keys: bool) -> str | None:
    """The token variable (where the runs happen) and the API's URL."""
    return (key_problem(config.token_env) if keys else None) or url_problem(config.api_url)


@register(GithubConfig, GiteaConfig, preflight=forge_preflight)
class ForgeReviewer:
    """One pull request per review, on ``config.repo``; the bot's review is the answer."""

    def __init__(self, config: GithubConfig | GiteaConfig) -> None:
        """Raises:
            UsageError: the token variable is not set.
        """
        self.config = config
        token = os.environ.get(config.token_env, "")
        if not token:
            raise UsageError(f"{config.kind} reviewer: environment variable {config.token_env} (token_env) is not set")
        self.api = _Api(config, token)
        self._swept = False
        self._sweep_lock = asyncio.Lock()
        self.opened: list[int] = []
        """Pull requests this reviewer opened (numbers), in order."""
        self._pulls: dict[str, PullRequest] = {}
        self.connection: dict[str, Any] | None = None
        """What the forge showed of the connection when this process first reviewed (``_probe``)."""
        self._cleanups: set[asyncio.Task] = set()

    def pull_request(self, run_id: str, text: str | None = None) -> PullRequest | None:
        """The pull request of a run: from its reply's record (a cached reply too), else the
        one this process opened for it (a run that timed out, failed or was interrupted)."""
        return pull_request_of(text) or self._pulls.get(run_id)

    def _bot(self, item: dict[str, Any]) -> bool:
        login = _login(item)
        return login == self.config.bot or login == self.config.bot + _BOT_SUFFIX

    async def sweep(self, experiment: str) -> list[int]:
        """Close this experiment's pull requests an interrupted process left open; their numbers."""
        closed = []
        for pull in await self.api.pages("/pulls", state="open"):
            match = _MARKER_RE.search(str(pull.get("body") or ""))
            if match and match.group(1) == experiment:
                await self._close(pull)
                closed.append(int(pull["number"]))
        return closed

    async def _close(self, pull: dict[str, Any]) -> None:
        await self.api.call("PATCH", f"/pulls/{pull['number']}", body={"state": "closed"})
        branches = [str((pull.get(side) or {}).get("ref") or "") for side in ("head", "base")]
        await asyncio.to_thread(delete_branches, self.config.remote, [b for b in branches if b])

    async def review(self, packet: ReviewPacket, tree: Path | None) -> ReviewReply:
        if tree is None:
            raise ReviewerError(f'the {self.config.kind} reviewer pushes the case\'s trees: set context = "tree" '
                                "in its condition")  # fmt: skip
        scope = RUN_SCOPE.get()
        experiment = scope.experiment if scope else "adhoc"
        run = (scope.run_id if scope and scope.run_id else None) or _secrets.token_hex(8)
        async with self._sweep_lock:
            if not self._swept and scope is not None:
                await self.sweep(experiment)
            self._swept = True
        branch = f"review-{experiment[:8]}-{run[:12]}"
        base_branch, head_branch = f"{branch}-base", f"{branch}-head"
        await self.api.ensure_quota()  # before anything is pushed or opened
        async with self._sweep_lock:
            if self.connection is None:
                self.connection = await self._probe()
        quota_before = self.api.remaining
        work = make_scratch("reviewbench-forge-")  # names its pid: a kill -9's is swept by the next
        pull: dict[str, Any] | None = None
        pushed = False
        try:
            guidance = {path: text.encode("utf-8") for path, text in packet.guidance_files.items()}
            names = frozenset({"AGENTS.md", *(os.path.basename(p) for p in guidance)})
            commits = await asyncio.to_thread(build_commits, tree, packet.diff, packet.title, work, guidance, names,
                                              list(packet.paths))  # fmt: skip
            await asyncio.to_thread(push_branches, commits, self.config.remote, base_branch, head_branch)
            pushed = True
            body = f"{MARKER.format(experiment=experiment, run=run)}\n"
            pull = await self.api.call("POST", "/pulls", body={"title": packet.title, "head": head_branch,
                                                               "base": base_branch, "body": body})  # fmt: skip
            if not isinstance(pull, dict) or "number" not in pull:
                raise ReviewerError(f"{self.config.kind} POST /pulls: no pull request in the answer",
                                    code="trigger_not_accepted")  # fmt: skip
            self.opened.append(int(pull["number"]))
            try:
                reply = await self._await_review(packet, pull, commits, run, quota_before)
            except (ReviewerError, TimeoutError):  # no review: a changed connection may be why
                await self._recheck(run)
                raise
            after = await self._recheck(run)
            record = {**json.loads(reply.text), "connection_after": after}
            return dataclasses.replace(reply, text=json.dumps(record, ensure_ascii=False, sort_keys=True))
        finally:
            await self._finish(self._clean_up(pull, pushed, base_branch, head_branch))
            remove_tree(work)

    async def _clean_up(self, pull: dict[str, Any] | None, pushed: bool, base: str, head: str) -> None:
        if self.config.keep_open:
            return
        if pull is not None:
            await self._close(pull)
        elif pushed:
            await asyncio.to_thread(delete_branches, self.config.remote, [head, base])

    async def _await_review(self, packet: ReviewPacket, pull: dict[str, Any], commits: CaseCommits,
                            run: str, quota_before: int | None = None) -> ReviewReply:  # fmt: skip
        number = int(pull["number"])
        record: dict[str, Any] = {
            "kind": self.config.kind, "repo": self.config.repo, "pull_number": number,
            "pull_url": pull.get("html_url"), "head_sha": (pull.get("head") or {}).get("sha") or commits.head,
            "bot": self.config.bot, "trigger": self.config.trigger, **_surface(pull, commits),
            "completion": self.config.completion, "connection": self.connection,
        }  # fmt: skip
        self._pulls[run] = _as_pull_request(record)  # findable from here on, whatever happens next
        if self.config.trigger:
            comment = await self.api.call("POST", f"/issues/{number}/comments", body={"body": self.config.trigger})
            record["triggered_at"] = (comment or {}).get("created_at") or _now()
        else:
            record["triggered_at"] = pull.get("created_at") or _now()
        self._pulls[run] = _as_pull_request(record)
        deadline = time.monotonic() + self.config.timeout_s
        polls = 0
        seen, quiet = -1, 0
        while True:
            polls += 1
            self._pulls[run] = _as_pull_request({**record, "polls": polls})
            reviews = [r for r in await self.api.pages(f"/pulls/{number}/reviews")
                       if self._bot(r) and str(r.get("state", "")).upper() != "PENDING"]  # fmt: skip
            notes = [c for c in await self.api.pages(f"/issues/{number}/comments") if self._bot(c)]
            await self._refuse_failure(reviews, notes, packet, record, polls, number, run)
            self._stop_if_approved(reviews, record, number)
            inline: list[dict[str, Any]] | None = None
            if self.config.completion == "first_activity":
                done = bool(reviews or notes)
            elif self.config.completion == "review":
                done = any(str(r.get("state", "")).upper() in _REVIEW_STATES for r in reviews)
            else:  # quiet: the bot's activity, inline comments included, stopped growing
                inline = await self._inline(number, reviews) if reviews or notes else []
                activity = len(reviews) + len(notes) + len(inline)
                quiet = quiet + 1 if activity and activity == seen else 0
                seen = activity
                done = quiet >= self.config.quiet_polls
            if done:
                inline = inline if inline is not None else await self._inline(number, reviews)
                break
            left = deadline - time.monotonic()
            if left <= 0:
                self._pulls[run] = _as_pull_request({**record, "polls": polls, "completed_at": _now(),
                                                     **_first(reviews, notes, record)})  # fmt: skip
                await self._stop_if_merged(number, record)
                said = f"; the bot said only: {_excerpt(notes[0].get('body'))}" if notes and not reviews else ""
                raise _NoReviewInWindow(f"no review by {self.config.bot} within {self.config.timeout_s:g}s on pull "
                                       f"request #{number} ({record['pull_url']}, head {record['head_sha'][:12]}, "
                                       f"{polls} polls){said}")  # fmt: skip
            await asyncio.sleep(min(self.config.poll_s, left))
        await self._stop_if_merged(number, record)
        triggered = _parse_time(record["triggered_at"])
        if self.config.completion == "review":
            ends = [_parse_time(r.get("submitted_at")) for r in reviews
                    if str(r.get("state", "")).upper() in _REVIEW_STATES]  # fmt: skip
        elif self.config.completion == "first_activity":
            ends = list(_stamps(reviews, notes))
        else:  # the last activity seen
            ends = [max((s for s in _stamps(reviews, notes, inline) if s is not None), default=None)]
        done_at = min((s for s in ends if s is not None), default=None) or _now_time()
        after = self.api.remaining
        record.update({
            **_first(reviews, notes, record),
            "completed_at": _now(),
            "usage": ({"unit": "rate_limit_remaining", "before": quota_before, "after": after, "observed_at": _now()}
                      if quota_before is not None and after is not None else "not_observable"),
            "completed_review_at": _iso(done_at),
            "time_to_completed_review_s": round((done_at - triggered).total_seconds(), 3) if triggered else None,
            "polls": polls,
            "reviews": [{"state": r.get("state"), "body": r.get("body") or ""} for r in reviews],
            "comments": [{"path": c.get("path"), "line": _line(c), "body": c.get("body") or ""} for c in inline],
            "issue_comments": [{"body": c.get("body") or ""} for c in notes],
        })  # fmt: skip
        self._pulls[run] = _as_pull_request(record)
        findings = [Finding(path=str(c["path"]), line=_line(c), claim=clean_text(str(c.get("body") or "")).strip(),
                            raw=clean_text(f"{c['path']}:{_line(c) or ''} {c.get('body') or ''}"))
                    for c in inline if c.get("path")]  # fmt: skip
        summaries = [r.get("body") or "" for r in reviews] + [c.get("body") or "" for c in notes]
        for text in summaries:
            findings.extend(summary_findings(str(text), list(packet.paths)))
        return ReviewReply(text=json.dumps(record, ensure_ascii=False, sort_keys=True),
                           model=f"{self.config.kind}:{self.config.bot}", findings=tuple(findings))  # fmt: skip

    async def _probe(self) -> dict[str, Any]:
        """The connection as the forge shows it, before the first pull request: the token's
        scopes (GitHub's ``X-OAuth-Scopes``; fine-grained tokens and Gitea show none), the
        token's permissions on the repository, and whether the bot's account exists. Whether
        the bot is installed with automatic review on is shown by no endpoint a repository
        token may read: ``not_observable``. Best effort: what cannot be read says so."""
        out: dict[str, Any] = {"probed_at": _now(), "automatic_review": "not_observable"}
        try:
            repo, headers = await self.api._call("GET", "")
            scopes = headers.get("x-oauth-scopes")
            out["token_scopes"] = sorted(filter(None, (p.strip() for p in scopes.split(",")))) if scopes is not None \
                else "not_observable"
            perms = repo.get("permissions") if isinstance(repo, dict) else None
            out["permissions"] = {str(k): bool(v) for k, v in perms.items()} if isinstance(perms, dict) \
                else "not_observable"
            out["private"] = repo.get("private") if isinstance(repo, dict) else None
        except _Refused as exc:  # refused (rights, gone): a state of the connection
            out["repository"] = f"not readable: {exc}"
        except ReviewerError:  # the forge did not answer: nothing observed
            out["repository"] = "not_observable"
        try:
            user, _ = await self.api._call("GET", f"/users/{self.config.bot.removesuffix(_BOT_SUFFIX)}",
                                           prefixed=False)  # fmt: skip
            out["bot"] = {"login": str((user or {}).get("login") or ""), "type": str((user or {}).get("type") or "")}
        except _Refused as exc:
            out["bot"] = "not_found" if exc.status == 404 else "not_observable"
        except ReviewerError:
            out["bot"] = "not_observable"
        return out

    async def _recheck(self, run: str) -> dict[str, Any]:
        """Probe the connection again after the run's window and compare it with the one probed
        before this process's first pull request: any difference (scopes, permissions, the
        bot's account, the repository's visibility) fails the run ``connection_changed``,
        whatever the bot did — the review was not made on the registered surface. A field one
        of the two probes could not observe is not compared. Returns the new probe.

        Raises:
            ReviewerError: ``connection_changed``, naming what changed.
        """
        after = await self._probe()
        pull = self._pulls.get(run)
        if pull is not None:
            self._pulls[run] = pull.model_copy(update={"connection_after": after})
        changed = connection_changes(self.connection or {}, after)
        if changed:
            where = f" on pull request #{pull.number} ({pull.url})" if pull is not None else ""
            raise ReviewerError(f"the {self.config.kind} connection changed during the run{where}: "
                                f"{'; '.join(changed)} (probed {(self.connection or {}).get('probed_at')} and "
                                f"{after.get('probed_at')})", code="connection_changed")  # fmt: skip
        return after

    def _stop_if_approved(self, reviews: list[dict[str, Any]], record: dict[str, Any], number: int) -> None:
        """A bot that approves acts beyond reviewing: the experiment stops (the review-only boundary)."""
        if any(str(r.get("state", "")).upper() == "APPROVED" for r in reviews):
            raise SafetyStop(f"{self.config.bot} approved pull request #{number} ({record['pull_url']}): an action "
                             "beyond the review-only boundary; the experiment stopped — check the sandbox "
                             "repository's settings and the bot's permissions")  # fmt: skip

    async def _stop_if_merged(self, number: int, record: dict[str, Any]) -> None:
        """A pull request found merged (by anyone: it must never be) stops the experiment."""
        pull = await self.api.call("GET", f"/pulls/{number}")
        if isinstance(pull, dict) and (pull.get("merged") or pull.get("merged_at")):
            raise SafetyStop(f"pull request #{number} ({record['pull_url']}) was merged: an action beyond the "
                             "review-only boundary; the experiment stopped — check the sandbox repository's "
                             "branch protection and the bot's permissions")  # fmt: skip

    async def _refuse_failure(self, reviews: list[dict[str, Any]], notes: list[dict[str, Any]], packet: ReviewPacket,
                              record: dict[str, Any], polls: int, number: int, run: str) -> None:  # fmt: skip
        """A bot message that says no review was done ("usage limit reached", "could not
        review") fails the run (``bot_error``): never a clean review. Only a short message
        (at most ``_FAILURE_MAX_CHARS``) that names no changed file counts, and only while
        the bot has posted no inline comment: a review that says "rate limit" of the code
        under review is a review."""
        said = [str(item.get("body") or "") for item in [*reviews, *notes]]
        failing = [text for text in said if len(text) <= _FAILURE_MAX_CHARS
                   and not summary_findings(text, list(packet.paths))
                   and any(re.search(p, text, re.IGNORECASE) for p in self.config.failure_patterns)]  # fmt: skip
        if not failing or (reviews and any(c.get("path") for c in await self._inline(number, reviews))):
            return
        self._pulls[run] = _as_pull_request({**record, "polls": polls, "completed_at": _now(),
                                             **_first(reviews, notes, record)})  # fmt: skip
        raise ReviewerError(f"{self.config.bot} reported a failure instead of a review on pull request "
                            f"#{number} ({record['pull_url']}): {_excerpt(failing[0])}", code="bot_error")  # fmt: skip

    async def _finish(self, cleanup: Any) -> None:
        """Run ``cleanup`` to its end even when cancelled: Ctrl-C cancels a run more than
        once (the gather, then each task, and ``wait_for`` stops waiting at the second), so
        the clean-up is a task of its own that :meth:`aclose` waits for before the client
        closes — a pull request must not stay open. Its own failure is swallowed (the run's
        outcome is decided already); its calls are bounded by the client's timeouts."""
        task = asyncio.ensure_future(cleanup)
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)
        while not task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
        with contextlib.suppress(BaseException):
            task.result()

    async def _inline(self, number: int, reviews: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The bot's review comments: the pull request's list, or, where a forge has no such
        list (older Gitea answers 404), each of the bot's reviews' own comments."""
        try:
            return [c for c in await self.api.pages(f"/pulls/{number}/comments") if self._bot(c)]
        except _Refused as exc:
            if exc.status != 404:
                raise
        found: list[dict[str, Any]] = []
        for review in reviews:
            if isinstance(review.get("id"), int):
                found.extend(await self.api.pages(f"/pulls/{number}/reviews/{review['id']}/comments"))
        return found

    async def aclose(self) -> None:
        if self._cleanups:  # clean-ups a cancelled run left running: closing their client would break them
            await asyncio.gather(*self._cleanups, return_exceptions=True)
        await self.api.aclose()


class _NoReviewInWindow(TimeoutError):
    """The bot's review did not complete within the reviewer's ``timeout_s``."""

    code = "no_review_in_window"


#: What a connection probe shows that a run depends on (``probed_at`` aside).
_CONNECTION_FIELDS = ("repository", "token_scopes", "permissions", "private", "bot", "automatic_review")


def connection_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What differs between two connection probes, one phrase each; a field either probe
    could not observe (``not_observable``) is not compared. A readable repository has no
    ``repository`` entry; an unreadable one says why."""
    changes = []
    for key in _CONNECTION_FIELDS:
        old, new = before.get(key, "readable" if key == "repository" else None), after.get(key, "readable" if key == "repository" else None)
        if "not_observable" in (old, new) or old == new:
            continue
        if key == "repository":
            old, new = ("readable" if v == "readable" else "not readable" for v in (old, new))
            if old == new:
                continue
        changes.append(f"{key} {json.dumps(old, sort_keys=True)} -> {json.dumps(new, sort_keys=True)}")
    return changes


def _refusal_code(method: str, path: str, status: int) -> str:
    """The ``failure_code`` of a refused call: rights, a refused pull request or trigger, else the endpoint's."""
    if status in (401, 403):
        return "permission"
    if method == "POST" and (path == "/pulls" or path.endswith("/comments")):
        return "trigger_not_accepted"
    return "endpoint_error"


def _iso(stamp: datetime | None) -> str | None:
    return stamp.isoformat().replace("+00:00", "Z") if stamp else None


def _excerpt(text: object, limit: int = 160) -> str:
    one = " ".join(clean_text(str(text or "")).split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _stamps(reviews: list[dict[str, Any]], notes: list[dict[str, Any]],
            inline: Sequence[dict[str, Any]] = ()) -> list[datetime | None]:  # fmt: skip
    return ([_parse_time(r.get("submitted_at")) for r in reviews] + [_parse_time(c.get("created_at")) for c in notes]
            + [_parse_time(c.get("created_at")) for c in inline])  # fmt: skip


def _first(reviews: list[dict[str, Any]], notes: list[dict[str, Any]], record: dict[str, Any]) -> dict[str, Any]:
    """The bot's first activity, by the forge's clock (this poll's when it gives none); {} before any."""
    if not reviews and not notes:
        return {}
    first = min((s for s in _stamps(reviews, notes) if s is not None), default=None) or _now_time()
    triggered = _parse_time(record.get("triggered_at"))
    return {"first_review_at": _iso(first),
            "time_to_first_review_s": round((first - triggered).total_seconds(), 3) if first and triggered else None}


def _surface(pull: dict[str, Any], commits: CaseCommits) -> dict[str, Any]:
    """What the pull request showed the bot, as the forge answered when it was opened (untrusted)."""
    labels = [str(label.get("name")) for label in pull.get("labels") or [] if isinstance(label, dict)]
    author = (pull.get("user") or {}) if isinstance(pull.get("user"), dict) else {}
    return {
        "base_sha": str((pull.get("base") or {}).get("sha") or commits.base),
        "case_tree": commits.case_tree or None,
        "guidance_blobs": commits.guidance_blobs,
        "draft": bool(pull.get("draft")) if "draft" in pull else None,
        "labels": labels,
        "author": {"login": str(author.get("login") or ""), "type": str(author.get("type") or "")} if author else None,
        "description": clean_text(str(pull.get("body") or "")),
    }


def _more(headers: httpx.Headers, seen: int, last: int) -> bool:
    """Whether a list goes on after the page just read."""
    link = headers.get("link")
    if link is not None:
        return 'rel="next"' in link
    total = headers.get("x-total-count", "")
    if total.isdigit():
        return seen < int(total)
    return last >= _PER_PAGE


def _line(comment: dict[str, Any]) -> int | None:
    for key in ("line", "original_line", "position"):
        value = comment.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def examples() -> KindExamples:
    common = {"repo": "you/sandbox", "remote": "git@example.org:you/sandbox.git", "bot": "review-bot",
              "token_env": "RB_EXAMPLE_TOKEN"}
    return KindExamples(
        tables=[({"kind": "github", **common, "trigger": "@codex review"}, "tree"),
                ({"kind": "gitea", **common, "api_url": "https://forge.example.org/api/v1"}, "tree")],
        refused=[({"kind": "github", **common, "token_env": "RB_EXAMPLE_UNSET"}, "tree", "RB_EXAMPLE_UNSET is not set"),
                 ({"kind": "gitea", **common, "api_url": "forge.example.org"}, "tree", "base_url")],
        env={"RB_EXAMPLE_TOKEN": "t-example"},
    )  # fmt: skip
