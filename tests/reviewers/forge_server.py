"""A loopback forge for the forge reviewer tests: the GitHub REST endpoints reviewbench uses,
over a real local bare repository that the reviewer pushes to as its ``remote``.

Endpoints (under ``/repos/OWNER/NAME``): ``GET`` of the repository itself (its
``permissions``; ``X-OAuth-Scopes`` as GitHub sends it), ``GET/POST /pulls``, ``PATCH /pulls/N``,
``GET /pulls/N/reviews``, ``GET /pulls/N/comments``, ``GET/POST /issues/N/comments``; pages
with ``per_page``/``page``; ``GET /rate_limit`` (GitHub's shape; a 404 with
``rate_limit_endpoint=False``, as Gitea); the token checked on every request (``scheme``:
``Bearer`` as GitHub, ``token`` as Gitea); and ``GET /users/LOGIN`` (the bot's account). What the
connection shows (``permissions``, ``scopes``, ``bot_installed``) may be changed mid-run by a bot
script, as a forge's settings can change under an experiment. ``set_quota`` gives GitHub's core quota: spent
one per request, told in ``X-RateLimit-*`` headers, a 403 once spent until its reset. Opening a pull
request checks both branches exist in the bare repository and that the head's parent is
the base. The bot is a script: ``bot(server, number, poll)`` is called on every poll of a
pull request's reviews once it has been triggered (its trigger comment posted, or at once
with ``trigger=None``), and may call :meth:`ForgeServer.add_review` (a ``state`` of its
choosing), :meth:`ForgeServer.add_review_comment` (a late inline comment) and
:meth:`ForgeServer.add_issue_comment` (a summary, or a failure message such as "usage
limit reached"); :meth:`ForgeServer.show` reads the pushed trees (a bot reading
``AGENTS.md``). ``fail_next(status, headers, on)`` answers the next
request (``on``: the next ``"METHOD /path"`` one) with an error (a rate limit, say).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

Bot = Callable[["ForgeServer", int, int], None]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def after_polls(n: int, body: str = "Looks fine to me.") -> Bot:
    """A bot that reviews on its ``n``-th poll (a plain review, no inline comment)."""

    def bot(server: ForgeServer, number: int, poll: int) -> None:
        if poll == n:
            server.add_review(number, body)

    return bot


def never(server: ForgeServer, number: int, poll: int) -> None:
    """A bot that never reviews."""


class ForgeServer:
    def __init__(self, bare: Path, *, token: str, repo: str = "acme/sandbox", bot_login: str = "review-bot",
                 trigger: str | None = "@review-bot review", bot: Bot = never, scheme: str = "Bearer",
                 rate_limit_endpoint: bool = True) -> None:  # fmt: skip
        self.bare = bare
        self.scheme = scheme
        self.token = token
        self.repo = repo
        self.bot_login = bot_login
        self.trigger = trigger
        self.bot = bot
        self.lock = threading.Lock()
        self.pulls: dict[int, dict[str, Any]] = {}
        self.reviews: dict[int, list[dict]] = {}
        self.review_comments: dict[int, list[dict]] = {}
        self.issue_comments: dict[int, list[dict]] = {}
        self.polls: dict[int, int] = {}
        self.requests: list[tuple[str, str, int]] = []
        self._failures: list[tuple[int, dict[str, str], str | None]] = []
        self._next_id = 1
        self.quota: dict[str, float] | None = None
        """GitHub's core quota (``limit``, ``remaining``, ``reset`` epoch): every request but
        ``GET /rate_limit`` spends one, every answer says what is left, a spent quota answers
        403 until its reset. None: no quota, and no headers (as Gitea)."""
        self.rate_limit_endpoint = rate_limit_endpoint
        self.max_page = 50
        self.permissions = {"admin": False, "push": True, "pull": True}
        """The token's rights on the repository, as ``GET /repos/OWNER/NAME`` shows them."""
        self.scopes = "repo, read:org"
        """The token's ``X-OAuth-Scopes`` (GitHub's scheme only)."""
        self.bot_installed = True
        """False: ``GET /users/BOT`` answers 404 (the bot's app removed)."""
        self.pull_comments_endpoint = True
        """False: no ``GET /pulls/N/comments`` (404), only each review's own comments."""
        """Gitea's MAX_RESPONSE_ITEMS: the largest page it serves, whatever ``limit`` asks."""
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True

    # -- control ---------------------------------------------------------------------
    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> ForgeServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def set_quota(self, remaining: int, reset_in: float, limit: int = 5000) -> None:
        with self.lock:
            # GitHub tells the reset as a whole epoch second, and the window refills then: a
            # fractional reset here would refill up to a second after the one it tells.
            self.quota = {"limit": limit, "remaining": remaining, "reset": math.ceil(time.time() + reset_in)}

    def _spend(self, path: str) -> tuple[int, dict[str, str], Any] | None:
        """Spend one request of the quota; a 403 when it is spent (None: go on)."""
        quota = self.quota
        if quota is None or path == "/rate_limit":
            return None
        if time.time() >= quota["reset"]:
            quota.update(remaining=quota["limit"], reset=math.ceil(time.time() + 3600))
        if quota["remaining"] <= 0:
            return 403, {}, {"message": "API rate limit exceeded"}
        quota["remaining"] -= 1
        return None

    def _quota_headers(self) -> dict[str, str]:
        if self.quota is None:
            return {}
        return {"X-RateLimit-Limit": str(int(self.quota["limit"])),
                "X-RateLimit-Remaining": str(int(self.quota["remaining"])),
                "X-RateLimit-Reset": str(int(self.quota["reset"]))}  # fmt: skip

    def fail_next(self, status: int, headers: dict[str, str] | None = None, on: str | None = None) -> None:
        """Answer the next request (``on``: the next ``"METHOD /path"`` request) with ``status``."""
        with self.lock:
            self._failures.append((status, headers or {}, on))

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def add_review(self, number: int, body: str, comments: list[tuple[str, int, str]] = (),
                   state: str = "COMMENTED") -> None:  # fmt: skip
        review_id = self._id()
        user = {"login": self.bot_login}
        self.reviews.setdefault(number, []).append(
            {"id": review_id, "user": user, "body": body, "state": state, "submitted_at": _now()})
        for path, line, text in comments:
            self.review_comments.setdefault(number, []).append(
                {"id": self._id(), "pull_request_review_id": review_id, "user": user, "path": path, "line": line,
                 "body": text, "created_at": _now()})  # fmt: skip

    def add_review_comment(self, number: int, path: str, line: int, body: str) -> None:
        """An inline comment posted after the bot's review (attached to its last review)."""
        review = (self.reviews.get(number) or [{"id": None}])[-1]["id"]
        self.review_comments.setdefault(number, []).append(
            {"id": self._id(), "pull_request_review_id": review, "user": {"login": self.bot_login}, "path": path,
             "line": line, "body": body, "created_at": _now()})  # fmt: skip

    def merge(self, number: int) -> None:
        """The pull request merged (what a bot or a branch rule must never do to a benchmark's)."""
        self.pulls[number].update(state="closed", merged=True, merged_at=_now())

    def show(self, rev: str) -> str | None:
        """A file of the bare repository (``rev`` as ``SHA:path``), or None when absent."""
        proc = subprocess.run(["git", "--git-dir", str(self.bare), "show", rev], capture_output=True, text=True)
        return proc.stdout if proc.returncode == 0 else None

    def add_issue_comment(self, number: int, body: str, login: str | None = None) -> dict:
        comment = {"id": self._id(), "user": {"login": login or self.bot_login}, "body": body, "created_at": _now()}
        self.issue_comments.setdefault(number, []).append(comment)
        return comment

    def branches(self) -> list[str]:
        out = subprocess.run(["git", "--git-dir", str(self.bare), "for-each-ref", "--format=%(refname:short)",
                              "refs/heads/"], capture_output=True, text=True, check=True).stdout  # fmt: skip
        return out.split()

    def _rev(self, ref: str) -> str | None:
        proc = subprocess.run(["git", "--git-dir", str(self.bare), "rev-parse", "--verify", "-q", f"refs/heads/{ref}"],
                              capture_output=True, text=True)  # fmt: skip
        return proc.stdout.strip() or None

    def _parents(self, sha: str) -> list[str]:
        out = subprocess.run(["git", "--git-dir", str(self.bare), "rev-list", "--parents", "-n1", sha],
                             capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
        return out[1:]

    # -- the API -----------------------------------------------------------------------
    def _triggered(self, number: int) -> bool:
        if self.trigger is None:
            return True
        return any(c["body"] == self.trigger for c in self.issue_comments.get(number, []))

    def handle(self, method: str, path: str, query: dict[str, list[str]], body: Any, auth: str | None
               ) -> tuple[int, dict[str, str], Any]:  # fmt: skip
        if auth != f"{self.scheme} {self.token}":
            return 401, {}, {"message": "Bad credentials"}
        for i, (status, headers, on) in enumerate(self._failures):
            if on is None or on == f"{method} {path}":
                del self._failures[i]
                return status, headers, {"message": "API rate limit exceeded"}
        status, headers, payload = self._spend(path) or self._route(method, path, query, body)
        return status, {**self._quota_headers(), **headers}, payload

    def _route(self, method: str, path: str, query: dict[str, list[str]], body: Any
               ) -> tuple[int, dict[str, str], Any]:  # fmt: skip
        if path == "/rate_limit" and method == "GET":
            if not self.rate_limit_endpoint:  # Gitea and Forgejo have none
                return 404, {}, {"message": "Not Found"}
            core = {k: int(v) for k, v in (self.quota or {"limit": 60, "remaining": 60, "reset": 0}).items()}
            return 200, {}, {"resources": {"core": {**core, "used": core["limit"] - core["remaining"]}}, "rate": core}
        if (m := re.fullmatch(r"/users/([^/]+)", path)) and method == "GET":
            if m.group(1) != self.bot_login or not self.bot_installed:
                return 404, {}, {"message": "Not Found"}
            return 200, {}, {"login": self.bot_login, "type": "Bot"}
        prefix = f"/repos/{self.repo}"
        if not path.startswith(prefix):
            return 404, {}, {"message": "Not Found"}
        rest = path[len(prefix):]
        if rest == "" and method == "GET":  # the token's view of the repository, scopes as GitHub tells them
            return 200, {"X-OAuth-Scopes": self.scopes} if self.scheme == "Bearer" else {}, {
                "full_name": self.repo, "private": True, "permissions": dict(self.permissions)}
        if rest == "/pulls" and method == "POST":
            return self._open(body)
        if rest == "/pulls" and method == "GET":
            state = query.get("state", ["open"])[0]
            return self._page([p for p in self.pulls.values() if state == "all" or p["state"] == state], query)
        if m := re.fullmatch(r"/pulls/(\d+)", rest):
            pull = self.pulls.get(int(m.group(1)))
            if pull is None:
                return 404, {}, {"message": "Not Found"}
            if method == "PATCH":
                pull["state"] = body.get("state", pull["state"])
            return 200, {}, pull
        if m := re.fullmatch(r"/pulls/(\d+)/reviews", rest):
            number = int(m.group(1))
            if self._triggered(number) and self.pulls[number]["state"] == "open":
                self.polls[number] = self.polls.get(number, 0) + 1
                self.bot(self, number, self.polls[number])
            return self._page(self.reviews.get(number, []), query)
        if m := re.fullmatch(r"/pulls/(\d+)/reviews/(\d+)/comments", rest):
            review = int(m.group(2))
            return self._page([c for c in self.review_comments.get(int(m.group(1)), [])
                               if c["pull_request_review_id"] == review], query)  # fmt: skip
        if (m := re.fullmatch(r"/pulls/(\d+)/comments", rest)) and self.pull_comments_endpoint:
            return self._page(self.review_comments.get(int(m.group(1)), []), query)
        if m := re.fullmatch(r"/issues/(\d+)/comments", rest):
            number = int(m.group(1))
            if method == "POST":
                return 201, {}, self.add_issue_comment(number, body["body"], login="benchmark-user")
            return self._page(self.issue_comments.get(number, []), query)
        return 404, {}, {"message": "Not Found"}

    def _open(self, body: dict) -> tuple[int, dict[str, str], Any]:
        head, base = self._rev(body["head"]), self._rev(body["base"])
        if head is None or base is None:
            return 422, {}, {"message": "Validation Failed: head or base branch missing"}
        if self._parents(base) != [] or self._parents(head) != [base]:
            return 422, {}, {"message": "unexpected history"}
        number = len(self.pulls) + 1
        self.pulls[number] = {
            "number": number, "state": "open", "title": body["title"], "body": body.get("body", ""),
            "html_url": f"{self.api_url}/{self.repo}/pull/{number}", "created_at": _now(),
            "head": {"ref": body["head"], "sha": head}, "base": {"ref": body["base"], "sha": base},
            "user": {"login": "benchmark-user", "type": "User"}, "draft": False, "labels": [], "merged": False,
            "merged_at": None,
        }  # fmt: skip
        return 201, {}, self.pulls[number]

    def _page(self, items: list, query: dict[str, list[str]]) -> tuple[int, dict[str, str], list]:
        """One page as each forge serves it. GitHub: ``per_page`` (30 by default, at most
        100) and a ``Link`` header with ``rel="next"`` while more follow. Gitea: ``limit``
        (``per_page`` ignored; 30 by default, clamped to ``max_page``, 50 as Gitea's default
        MAX_RESPONSE_ITEMS) and ``X-Total-Count``."""
        page = int(query.get("page", ["1"])[0])
        if self.scheme == "token":
            size = min(int(query.get("limit", ["0"])[0]) or 30, self.max_page)
            headers = {"X-Total-Count": str(len(items))}
        else:
            size = min(int(query.get("per_page", ["30"])[0]), 100)
            more = page * size < len(items)
            headers = {"Link": f'<{self.api_url}/next>; rel="next"'} if more else {}
        return 200, headers, items[(page - 1) * size: page * size]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _serve(self) -> None:
                url = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                with server.lock:
                    status, headers, payload = server.handle(self.command, url.path, parse_qs(url.query), body,
                                                             self.headers.get("Authorization"))  # fmt: skip
                    server.requests.append((self.command, url.path, status))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = _serve  # noqa: N815

        return Handler
