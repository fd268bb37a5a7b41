"""The labelling web app: Starlette pages rendered on the server, served by uvicorn on loopback.

Nobody gets in without a secret token. ``label serve --rater NAME --adjudicator NAME`` (or
``label invite``) issues one per person and prints one URL each, ``/?token=T``; the first
visit sets it as an HttpOnly, SameSite=Strict cookie, and every request but the two static
files is refused (403) without a valid token, in the query or the cookie. The token fixes
who the person is and in which role: a rater's token opens that rater's pages only
(``/r/<name>/...``), an adjudicator's the adjudication pages (``/a/<name>/...``); names are
case-insensitive. The store keeps only the tokens' SHA-256.

Raters get packets in their own random order (claims that can change a decision first);
they see only the packet, the gold defects and their own earlier labels, never another
rater's labels or any aggregate. Adjudicators see only the claims where raters disagree,
with both initial labels, and record final labels with a reason. A packet's claims come
:data:`PAGE_SIZE` to a page. Nothing is fetched from elsewhere: the script and style sheet
ship in the package, and the Content Security Policy allows nothing but this origin.

Labels arrive as JSON: the media type must be exactly ``application/json`` (any other
makes a request a browser would send cross-site without a preflight), a request whose
``Origin`` is not this app's or whose ``Sec-Fetch-Site`` says it came from elsewhere is
refused, and bodies are read up to :data:`MAX_BODY` bytes and :data:`MAX_DEPTH` levels of
nesting. Rows are validated as :class:`LabelRow` and against the packet's gold, then
appended to ``labels.sqlite``.
"""

from __future__ import annotations

import hashlib
import json
import math
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ..errors import ReviewbenchError, UsageError
from ..evidence.packets import PacketSet
from ..evidence.records import ACTIONABILITY_FIELDS, VALID_INCIDENTAL, LabelPacket, LabelRow
from ..evidence.resolve import ClaimStatus, _adjudications, claim_status
from ..evidence.rubric import registered_rubric
from ..evidence.store import LabelStore, Person, Role, StoredLabel
from .practice import check_practice_rows, practice_result, practice_set
from .queue import label_queue
from .settle import gate_priority

__all__ = ["COOKIE", "MAX_BODY", "MAX_DEPTH", "PAGE_SIZE", "AppOptions", "build_app", "serve"]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'none'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")  # fmt: skip
FIELD_KEYS = {"location": "l", "consequence": "c", "evidence": "e", "safe_fix": "s", "severity_fit": "v"}
FIELD_NAMES = {"location": "location", "consequence": "consequence", "evidence": "evidence",
               "safe_fix": "safe fix", "severity_fit": "severity fit"}  # fmt: skip
CLASS_KEYS = (("true_finding", "t", "true finding"), ("false_positive", "f", "false positive"),
              ("duplicate", "d", "duplicate"), ("unclear", "u", "unclear"))  # fmt: skip
RUBRIC = {
    "true_finding": "It names a real problem of this change. Link the gold defect it identifies, or "
                    "“valid incidental” when it is real but none of them (say what it is).",
    "false_positive": "It is wrong, or names nothing that is a problem here (a taste, a guess, a remark "
                      "on code the change does not affect).",
    "duplicate": "It says again what another claim of this review already says (same problem, same "
                 "place): label the first one, call this one a duplicate.",
    "unclear": "You cannot tell what it claims, or whether it is right, from the change, the tests and the "
               "gold defects.",
}
"""What each class means, in the rubric panel and a choice's tooltip (rubric 003-1)."""
RUBRIC_SHORT = {
    "true_finding": "a real problem of this change: link its gold defect, or valid incidental",
    "false_positive": "wrong, or not a problem of this change",
    "duplicate": "repeats another claim of this review",
    "unclear": "you cannot tell what it claims, or whether it holds",
}
"""The same, in a line under each choice."""
QUESTIONS = {
    "location": "Does it point at the affected code (file and line, or the function)?",
    "consequence": "Does it say what goes wrong (which behaviour, input or failure)?",
    "evidence": "Does it give evidence a reader can check: a quoted line, a failing input, a test, a trace?",
    "safe_fix": "Does it propose a fix that is right and breaks nothing else? (No fix proposed: no.)",
    "severity_fit": "Does the severity it states or implies fit the defect: neither alarmist nor dismissive?",
}
"""The five actionability questions, asked of true findings only."""

COOKIE = "reviewbench_token"
"""The cookie holding a person's token after their first visit."""

PAGE_SIZE = 25
"""Claims per page of a packet (a review may print tens of thousands of findings)."""

MAX_BODY = 64 * 1024
"""Bytes a submission may have; a page of :data:`PAGE_SIZE` labels with notes fits."""

MAX_DEPTH = 8
"""Nesting levels a submission may have (it needs four: body, list, label, fields)."""

_MODES = {"r": Role.RATER, "a": Role.ADJUDICATOR}
_SAFE_METHODS = ("GET", "HEAD")


@dataclass(frozen=True)
class DiffRow:
    """One line of a packet's diff as shown: numbered in the old and new file, marked when a
    claim of the page or a gold defect points at it."""

    kind: str
    text: str
    old: int | None = None
    new: int | None = None
    path: str | None = None
    anchor: str | None = None
    claimed: bool = False
    gold: bool = False


def _strip_prefix(path: str) -> str | None:
    path = path.split("\t", 1)[0].strip()
    if path == "/dev/null":
        return None
    return path[2:] if path[:2] in ("a/", "b/") else path


def line_anchor(path: str, line: int) -> str:
    """The id of a new-tree line in the page's diff (paths may hold any character)."""
    return f"L{hashlib.sha256(path.encode()).hexdigest()[:8]}-{line}"


def diff_rows(diff: str, claimed: set[tuple[str, int]], gold: set[tuple[str, int]]) -> list[DiffRow]:
    """The diff's lines with old and new line numbers (from the hunk headers), anchors on new
    lines, and the lines claims and gold defects point at (paths and lines of the new tree)."""
    rows: list[DiffRow] = []
    path: str | None = None
    old: int | None = None
    new: int | None = None
    for line in diff.splitlines():
        if line.startswith("diff "):
            path, old, new = None, None, None
            rows.append(DiffRow("file", line))
        elif line.startswith("+++ ") and new is None:
            path = _strip_prefix(line[4:])
            rows.append(DiffRow("file", line))
        elif line.startswith("--- ") and new is None:
            rows.append(DiffRow("file", line))
        elif line.startswith("@@"):
            fields = line.split("@@")[1].split() if line.count("@@") >= 2 else []
            try:
                old = int(next(f for f in fields if f.startswith("-"))[1:].split(",")[0])
                new = int(next(f for f in fields if f.startswith("+"))[1:].split(",")[0])
            except (StopIteration, ValueError):
                old = new = None
            rows.append(DiffRow("hunk", line))
        elif old is None or new is None or line.startswith("\\"):
            rows.append(DiffRow("meta", line))
        elif line.startswith("+"):
            rows.append(DiffRow("add", line, new=new, path=path))
            new += 1
        elif line.startswith("-"):
            rows.append(DiffRow("del", line, old=old, path=path))
            old += 1
        else:
            rows.append(DiffRow("ctx", line, old=old, new=new, path=path))
            old, new = old + 1, new + 1
    return [DiffRow(r.kind, r.text, r.old, r.new, r.path, anchor=line_anchor(r.path, r.new),
                    claimed=(r.path, r.new) in claimed, gold=(r.path, r.new) in gold)
            if r.new is not None and r.path is not None else r for r in rows]  # fmt: skip


@dataclass(frozen=True)
class AppOptions:
    rundir: Path


class _Refused(Exception):
    """A request the app answers with an error status and a one-line reason (never raised past it)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("reviewbench.label", "templates"),
                              autoescape=True, undefined=jinja2.StrictUndefined)  # fmt: skip


def _static(name: str) -> bytes:
    return resources.files("reviewbench.label").joinpath("static", name).read_bytes()


def _priority(rundir: Path, store: LabelStore) -> set[str] | None:
    """Comments that can change a registered gate; None (defect cases first) when the run
    cannot be scored yet (the app still serves its packets)."""
    try:
        return gate_priority(rundir, store)
    except ReviewbenchError as exc:
        print(f"reviewbench: note: packets with claims on defect cases first; gates not read ({exc})",
              file=sys.stderr)  # fmt: skip
        return None


class _State:
    """Packets built once; the store opened per request (SQLite connections stay in their thread)."""

    def __init__(self, options: AppOptions) -> None:
        self.options = options
        self.lock = threading.Lock()
        with LabelStore(options.rundir) as store:
            self.packet_set: PacketSet = store.packets()
            self.secret = store.secret()
            queue, _ = label_queue(store, priority=_priority(options.rundir, store))
        # A rubric file changed since registration stops the app here (IntegrityError).
        self.rubric = registered_rubric(options.rundir, with_text=True)
        self.packets = {p.packet_id: p for p in self.packet_set.packets}
        decisive = {item.packet_id for item in queue if item.decisive}
        self.decisive = decisive

    def order(self, rater: str) -> list[LabelPacket]:
        """This rater's own random order, packets with decisive claims first."""
        def key(p: LabelPacket) -> tuple[bool, str]:
            digest = hashlib.sha256(self.secret + f"rater\0{rater}\0{p.packet_id}".encode()).hexdigest()
            return (p.packet_id not in self.decisive, digest)

        return sorted(self.packet_set.packets, key=key)


def _html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers={"content-security-policy": CSP,
                                                           "x-content-type-options": "nosniff",
                                                           "referrer-policy": "no-referrer",
                                                           "cache-control": "no-store"})  # fmt: skip


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class _Depth:
    """Nesting depth of JSON text fed in pieces, refused past :data:`MAX_DEPTH` as soon as seen
    (``json.loads`` would recurse once per level)."""

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escaped = False

    def feed(self, data: bytes) -> None:
        for byte in data:
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif byte == 0x5C:  # backslash
                    self.escaped = True
                elif byte == 0x22:  # quote
                    self.in_string = False
            elif byte == 0x22:
                self.in_string = True
            elif byte in (0x5B, 0x7B):  # [ {
                self.depth += 1
                if self.depth > MAX_DEPTH:
                    raise _Refused(400, f"not a valid submission: JSON nested too deep (at most {MAX_DEPTH} levels)")
            elif byte in (0x5D, 0x7D):
                self.depth -= 1


async def _read_json(request: Request) -> object:
    """The body as JSON, read up to :data:`MAX_BODY` bytes and :data:`MAX_DEPTH` levels."""
    depth = _Depth()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        depth.feed(chunk)
        size += len(chunk)
        if size > MAX_BODY:
            raise _Refused(413, f"a submission is at most {MAX_BODY // 1024} KiB: shorten notes or reasons")
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks))
    except (ValueError, RecursionError):
        raise _Refused(400, "not a valid submission: not JSON") from None


def build_app(options: AppOptions) -> Starlette:
    """The ASGI app for ``options`` (builds the packets once, at start)."""
    state = _State(options)
    env = _env()

    def check_origin(request: Request) -> None:
        """Only this app's own pages may send requests that change anything."""
        origin = request.headers.get("origin")
        if origin is not None and origin != f"http://{request.headers.get('host', '')}":
            raise _Refused(403, "requests from another origin are refused")
        fetch_site = request.headers.get("sec-fetch-site")
        if request.method not in _SAFE_METHODS and fetch_site is not None and fetch_site != "same-origin":
            raise _Refused(403, "requests from another site are refused")

    def person_of(request: Request) -> tuple[Person, str | None]:
        """Who the token of the request belongs to, and the token when it came in the query."""
        check_origin(request)
        query_token = request.query_params.get("token")
        token = query_token or request.cookies.get(COOKIE)
        if not token:
            raise _Refused(403, "open the link you were given: it carries your token")
        with LabelStore(options.rundir) as store:
            person = store.identify(token)
        if person is None:
            raise _Refused(403, "this token is not valid (ask for a new link: 'reviewbench label invite')")
        return person, query_token

    def identity(request: Request) -> tuple[Person, str, str | None]:
        """The person of a page under ``/{mode}/{name}``: it must be the token's own."""
        person, query_token = person_of(request)
        mode = request.path_params["mode"]
        if _MODES.get(mode) is not person.role or request.path_params["name"].casefold() != person.name.casefold():
            raise _Refused(403, "this page belongs to someone else")
        return person, mode, query_token

    def remember(response: Response, query_token: str | None) -> Response:
        if query_token:  # the first visit: the link's token becomes the cookie
            response.set_cookie(COOKIE, query_token, httponly=True, samesite="strict", path="/")
        return response

    def url(mode: str, person: Person, packet_id: str | None = None, page: int = 1) -> str:
        base = f"/{mode}/{quote(person.name, safe='')}"
        if packet_id is None:
            return base
        return f"{base}/p/{packet_id}" + (f"?page={page}" if page > 1 else "")

    def render(template: str, mode: str, status: int = 200, **values: object) -> HTMLResponse:
        return _html(env.get_template(template).render(mode=mode, **values), status=status)

    def wants_json(request: Request) -> bool:
        return request.method not in _SAFE_METHODS or "application/json" in request.headers.get("content-type", "")

    async def refused(request: Request, exc: Exception) -> Response:
        status = exc.status if isinstance(exc, _Refused) else 400
        if wants_json(request):
            return JSONResponse({"error": str(exc)}, status_code=status)
        mode = request.path_params.get("mode", "r")
        return render("error.html", mode if mode in _MODES else "r", status=status, message=str(exc))

    async def home(request: Request) -> Response:
        person, query_token = person_of(request)
        mode = "a" if person.role is Role.ADJUDICATOR else "r"
        return remember(render("home.html", mode, name=person.name, start=url(mode, person)), query_token)

    def own_labels(name: str, store: LabelStore) -> dict[tuple[str, int], StoredLabel]:
        """The rater's latest labels under the current rubric (older ones are asked again),
        counted or not (a conflicted rater's label waiting for a first label is still theirs)."""
        rubric = store.rubric_version
        return {k: v for k, v in store.latest(Role.RATER, counted=False).get(name, {}).items()
                if v.rubric_version == rubric}  # fmt: skip

    def open_claims(name: str, store: LabelStore) -> set[tuple[str, int]] | None:
        """The claims this rater may label: None (all), or for a conflicted rater those a rater
        without a conflict labelled first (and their own)."""
        if name.casefold() not in store.conflicted():
            return None
        return store.open_to_conflicted() | set(own_labels(name, store))

    def rater_claims(packet: LabelPacket, allowed: set[tuple[str, int]] | None) -> list:
        return [c for c in packet.claims if allowed is None or (c.comment_id, c.part) in allowed]

    def rater_next(name: str, store: LabelStore) -> tuple[str, int] | None:
        mine = own_labels(name, store)
        allowed = open_claims(name, store)  # once: not per packet
        for packet in state.order(name):
            for index, c in enumerate(rater_claims(packet, allowed)):
                if (c.comment_id, c.part) not in mine:
                    return packet.packet_id, index // PAGE_SIZE + 1
        return None

    def disputed(store: LabelStore) -> set[tuple[str, int]]:
        raters = store.latest(Role.RATER)
        adjudicated = _adjudications(store)
        keys = {key for labels in raters.values() for key in labels}
        return {k for k in keys if claim_status(raters, adjudicated, k) is ClaimStatus.DISPUTED}

    async def start(request: Request) -> Response:
        person, mode, query_token = identity(request)
        with LabelStore(options.rundir) as store:
            if mode == "a":
                waiting = disputed(store)
                packet_id = next((p.packet_id for p in state.packet_set.packets
                                  if any((c.comment_id, c.part) in waiting for c in p.claims)), None)  # fmt: skip
                target = None if packet_id is None else (packet_id, 1)
            else:
                practice = practice_set(store)
                if practice is not None:  # the practice set first, then its agreement, then the packets
                    result = practice_result(store, practice, person.name)
                    if not result.done:
                        done = store.latest(Role.RATER, probe=practice.probe, counted=False).get(person.name, {})
                        first = next(item.packet.packet_id for item in practice.items
                                     if any((c.comment_id, c.part) not in done for c in item.packet.claims))  # fmt: skip
                        return remember(RedirectResponse(f"{url(mode, person)}/practice/{first}", status_code=303),
                                        query_token)  # fmt: skip
                    if not own_labels(person.name, store) and request.query_params.get("begin") != "1":
                        return remember(render("practice_done.html", mode, name=person.name, result=result,
                                               begin=url(mode, person) + "?begin=1"), query_token)  # fmt: skip
                target = rater_next(person.name, store)
            conflicted = mode == "r" and person.name.casefold() in store.conflicted()
        if target is None:
            return remember(render("done.html", mode, name=person.name, packets=len(state.packets),
                                   conflicted=conflicted), query_token)  # fmt: skip
        return remember(RedirectResponse(url(mode, person, *target), status_code=303), query_token)

    def packet_or_404(request: Request) -> LabelPacket:
        packet = state.packets.get(request.path_params["packet_id"])
        if packet is None:
            raise _Refused(404, "no such packet")
        return packet

    async def packet_page(request: Request) -> Response:
        person, mode, query_token = identity(request)
        packet = packet_or_404(request)
        with LabelStore(options.rundir) as store:
            if mode == "a":
                waiting = disputed(store)
                claims = [c for c in packet.claims if (c.comment_id, c.part) in waiting]
            else:
                claims = rater_claims(packet, open_claims(person.name, store))
            pages = max(1, math.ceil(len(claims) / PAGE_SIZE))
            raw = request.query_params.get("page", "1")
            page = int(raw) if raw.isdigit() and len(raw) < 10 else 0
            if not 1 <= page <= pages:
                raise _Refused(400, f"no page {raw[:20]!r} of this packet: pages 1 to {pages}")
            first = (page - 1) * PAGE_SIZE
            shown = claims[first:first + PAGE_SIZE]
            keys = {(c.comment_id, c.part) for c in shown}
            earlier: dict[tuple[str, int], tuple[str, LabelRow]] = {}
            if mode == "a":
                raters = store.latest(Role.RATER)
                initial = {key: [(rater, labels[key].row) for rater, labels in sorted(raters.items()) if key in labels]
                           for key in keys}  # fmt: skip
                earlier = {key: (label.author, label.row) for key, label in _adjudications(store).items() if key in keys}
                own = {}
                # Where these claims stand among every disputed one, in the order they are visited.
                queue = [(c.comment_id, c.part) for p in state.packet_set.packets for c in p.claims
                         if (c.comment_id, c.part) in waiting]  # fmt: skip
                position = queue.index((shown[0].comment_id, shown[0].part)) + 1 if shown else 0
                total = len(queue)
            else:
                initial = {}
                own = {k: v.row for k, v in own_labels(person.name, store).items() if k in keys}
        if mode != "a":
            order = [p.packet_id for p in state.order(person.name)]
            position = order.index(packet.packet_id) + 1 if packet.packet_id in order else 0
            total = len(order)
        claimed = {(c.path, c.line) for c in shown if c.path and c.line}
        gold = {(loc.path, line) for d in packet.defects for loc in d.locations
                for line in range(loc.start_line, min(loc.end_line, loc.start_line + 500) + 1)}  # fmt: skip
        rows = diff_rows(packet.diff, claimed, gold)
        anchors = {(r.path, r.new): r.anchor for r in rows if r.anchor}
        links = {"prev": url(mode, person, packet.packet_id, page - 1) if page > 1 else None,
                 "next": url(mode, person, packet.packet_id, page + 1) if page < pages else None}  # fmt: skip
        response = render("packet.html", mode, name=person.name, packet=packet, claims=shown, own=own,
                          initial=initial, earlier=earlier, position=position, total=total,
                          fields=ACTIONABILITY_FIELDS, field_keys=FIELD_KEYS, field_names=FIELD_NAMES,
                          class_keys=CLASS_KEYS, rubric=RUBRIC, rubric_short=RUBRIC_SHORT, questions=QUESTIONS, diff_rows=rows,
                          anchors=anchors, page=page, pages=pages, first=first + 1,
                          last=first + len(shown), claim_total=len(claims), links=links,
                          max_body=MAX_BODY, rubric_version=state.rubric.version,
                          rubric_text=state.rubric.text, practice=False)  # fmt: skip
        return remember(response, query_token)

    def practice_item(request: Request, store: LabelStore) -> tuple[Any, Any]:
        practice = practice_set(store)
        item = practice.packet(request.path_params["packet_id"]) if practice is not None else None
        if practice is None or item is None:
            raise _Refused(404, "no such practice packet")
        return practice, item

    async def practice_page(request: Request) -> Response:
        person, mode, query_token = identity(request)
        if mode != "r":
            raise _Refused(404, "practice is for raters")
        with LabelStore(options.rundir) as store:
            practice, item = practice_item(request, store)
            done = store.latest(Role.RATER, probe=practice.probe, counted=False).get(person.name, {})
        packet = item.packet
        claims = list(packet.claims)
        own = {k: v.row for k, v in done.items() if k in {(c.comment_id, c.part) for c in claims}}
        order = [i.packet.packet_id for i in practice.items]
        gold = {(loc.path, line) for d in packet.defects for loc in d.locations
                for line in range(loc.start_line, min(loc.end_line, loc.start_line + 500) + 1)}  # fmt: skip
        rows = diff_rows(packet.diff, {(c.path, c.line) for c in claims if c.path and c.line}, gold)
        response = render("packet.html", mode, name=person.name, packet=packet, claims=claims, own=own, initial={},
                          earlier={}, position=order.index(packet.packet_id) + 1, total=len(order),
                          fields=ACTIONABILITY_FIELDS, field_keys=FIELD_KEYS, field_names=FIELD_NAMES,
                          class_keys=CLASS_KEYS, rubric=RUBRIC, rubric_short=RUBRIC_SHORT, questions=QUESTIONS,
                          diff_rows=rows, anchors={(r.path, r.new): r.anchor for r in rows if r.anchor}, page=1,
                          pages=1, first=1, last=len(claims), claim_total=len(claims),
                          links={"prev": None, "next": None}, max_body=MAX_BODY, rubric_version=state.rubric.version,
                          rubric_text=state.rubric.text, practice=True)  # fmt: skip
        return remember(response, query_token)

    async def practice_submit(request: Request) -> Response:
        person, mode, _ = identity(request)
        if mode != "r":
            raise _Refused(404, "practice is for raters")
        rows = await submitted_rows(request)
        with state.lock, LabelStore(options.rundir) as store:
            practice, item = practice_item(request, store)
            problem = check_practice_rows(practice, item.packet.packet_id, rows)
            if problem is not None:
                raise _Refused(400, problem)
            saved = store.add_practice(rows, author=person.name, probe=practice.probe)
        return JSONResponse({"saved": saved, "unchanged": len(rows) - saved, "next": url(mode, person)})

    async def submitted_rows(request: Request) -> list[LabelRow]:
        """The label rows of a submission: JSON of the right type, size and depth, each a label row."""
        if _media_type(request) != "application/json":
            raise _Refused(415, "labels are sent as application/json")
        data = await _read_json(request)
        items = data.get("labels") if isinstance(data, dict) else None
        if not isinstance(items, list) or not items:
            raise _Refused(400, "not a valid submission: no labels")
        try:
            return [LabelRow.model_validate(item) for item in items]
        except ValidationError as exc:
            raise _Refused(400, f"not a valid submission: {exc.errors()[0]['msg']}") from None

    async def submit(request: Request) -> Response:
        person, mode, _ = identity(request)
        packet = packet_or_404(request)
        rows = await submitted_rows(request)
        allowed = {(c.comment_id, c.part) for c in packet.claims}
        if any((r.comment_id, r.part) not in allowed for r in rows):
            raise _Refused(400, "a label names a claim of another packet")
        gold = {d.defect_id for d in packet.defects} | {VALID_INCIDENTAL}
        if any(r.defect_id is not None and r.defect_id not in gold for r in rows):
            raise _Refused(400, "a label links a defect that is not one of this packet's gold defects")
        if mode == "a" and any(not (r.reason or "").strip() for r in rows):
            raise _Refused(400, "every adjudication needs a reason")
        if mode == "r" and any(r.reason is not None for r in rows):
            raise _Refused(400, "reasons belong to adjudications")
        with state.lock, LabelStore(options.rundir) as store:
            if mode == "r":  # a conflicted rater never gives a claim's first independent label
                problems = [p for r in rows if (p := store.first_label_problem(r, person.name)) is not None]
                if problems:
                    raise _Refused(409, problems[0])
            # The same labels sent again (a double click, Enter twice) add no rows.
            saved = store.add(rows, author=person.name, role=person.role, source="app", skip_unchanged=True)
        return JSONResponse({"saved": saved, "unchanged": len(rows) - saved, "next": url(mode, person)})

    async def static(request: Request) -> Response:
        name = request.path_params["file"]
        types = {"label.js": "text/javascript", "label.css": "text/css"}
        if name not in types:
            return Response("not found", status_code=404)
        return Response(_static(name), media_type=types[name], headers={"x-content-type-options": "nosniff"})

    async def not_found(request: Request) -> Response:
        person_of(request)  # nothing is told to a request without a token, not even what exists
        raise _Refused(404, "no such page")

    routes = [
        Route("/", home),
        Route("/static/{file}", static),
        Route("/{mode:str}/{name}", start),
        Route("/{mode:str}/{name}/p/{packet_id}", packet_page, methods=["GET"]),
        Route("/{mode:str}/{name}/p/{packet_id}", submit, methods=["POST"]),
        Route("/{mode:str}/{name}/practice/{packet_id}", practice_page, methods=["GET"]),
        Route("/{mode:str}/{name}/practice/{packet_id}", practice_submit, methods=["POST"]),
        Route("/{path:path}", not_found, methods=["GET", "POST"]),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost", "[::1]"])]
    app = Starlette(routes=routes, middleware=middleware,
                    exception_handlers={_Refused: refused, UsageError: refused})  # fmt: skip
    app.state.packets = len(state.packets)
    return app


def serve(options: AppOptions, port: int, on_ready: Callable[[int], None] | None = None,
          prepare: Callable[[], None] | None = None) -> None:
    """Run the app on ``127.0.0.1:port`` until interrupted; ``on_ready`` gets the port bound
    (``port`` 0 picks a free one) once the socket accepts connections, so a link printed then
    answers at once. ``prepare`` runs once the run directory is known to have claims, before
    the port is bound (``label serve`` issues its tokens there, so a refusal rotates none).

    Raises:
        UsageError: the run directory has no reviewer comment to label, or the port is taken.
    """
    import uvicorn

    app = build_app(options)
    if not app.state.packets:
        raise UsageError(f"no reviewer comment to label in {options.rundir}: no completed review there produced "
                         "findings ('reviewbench runs' lists its runs)")  # fmt: skip
    if prepare is not None:
        prepare()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started and on_ready is not None:  # listening now: a printed link answers
                on_ready(sock.getsockname()[1])

    try:
        server = _Server(uvicorn.Config(app, log_level="warning", access_log=False, server_header=False))
        server.run(sockets=[sock])
    finally:
        sock.close()
