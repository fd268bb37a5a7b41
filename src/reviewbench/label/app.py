"""The labelling web app: Starlette pages rendered on the server, served by uvicorn on loopback.

Raters pick a name and get packets in their own random order (claims that can change a
decision first); they see only the packet, the gold defects and their own earlier labels,
never another rater's labels or any aggregate. ``--adjudicate`` serves only the claims where
raters disagree, with both initial labels, and records final labels with a reason. Nothing
is fetched from elsewhere: the script and style sheet ship in the package, and the Content
Security Policy allows nothing but this origin.

Labels arrive as JSON (a cross-origin page cannot send that without a preflight the app
never answers), are validated as :class:`LabelRow` and appended to ``labels.sqlite``.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jinja2
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from ..errors import ReviewbenchError, UsageError
from .packets import PacketSet
from .queue import label_queue
from .records import ACTIONABILITY_FIELDS, LabelPacket, LabelRow
from .resolve import ClaimStatus, _adjudications, claim_status
from .settle import gate_priority
from .store import LabelStore, Role, check_name

__all__ = ["AppOptions", "build_app", "serve"]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'none'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")  # fmt: skip
FIELD_KEYS = {"location": "l", "consequence": "c", "evidence": "e", "safe_fix": "s", "severity_fit": "v"}
FIELD_NAMES = {"location": "location", "consequence": "consequence", "evidence": "evidence",
               "safe_fix": "safe fix", "severity_fit": "severity fit"}  # fmt: skip
CLASS_KEYS = (("true_finding", "t", "true finding"), ("false_positive", "f", "false positive"),
              ("duplicate", "d", "duplicate"), ("unclear", "u", "unclear"))  # fmt: skip


@dataclass(frozen=True)
class AppOptions:
    rundir: Path
    rater: str | None = None
    """Serve this rater only (other names are refused)."""
    adjudicate: bool = False


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


def build_app(options: AppOptions) -> Starlette:
    """The ASGI app for ``options`` (builds the packets once, at start)."""
    state = _State(options)
    env = _env()
    mode = "a" if options.adjudicate else "r"

    def name_of(request: Request) -> str:
        name = check_name(request.path_params["name"], "adjudicator" if options.adjudicate else "rater")
        if options.rater is not None and name != options.rater:
            raise UsageError(f"this app serves {options.rater!r} only")
        return name

    def render(template: str, **values: object) -> HTMLResponse:
        return _html(env.get_template(template).render(mode=mode, **values))

    async def error_page(request: Request, exc: Exception) -> Response:
        if "application/json" in request.headers.get("content-type", ""):
            return JSONResponse({"error": str(exc)}, status_code=400)
        return _html(env.get_template("error.html").render(mode=mode, message=str(exc)), status=400)

    async def home(request: Request) -> Response:
        name = request.query_params.get("name")
        if options.rater is not None:
            name = options.rater
        if name:
            return RedirectResponse(f"/{mode}/{check_name(name)}", status_code=303)
        return render("home.html", adjudicate=options.adjudicate)

    def rater_next(name: str, store: LabelStore) -> str | None:
        mine = store.latest(Role.RATER).get(name, {})
        for packet in state.order(name):
            if any((c.comment_id, c.part) not in mine for c in packet.claims):
                return packet.packet_id
        return None

    def disputed(store: LabelStore) -> set[tuple[str, int]]:
        raters = store.latest(Role.RATER)
        adjudicated = _adjudications(store)
        keys = {key for labels in raters.values() for key in labels}
        return {k for k in keys if claim_status(raters, adjudicated, k) is ClaimStatus.DISPUTED}

    async def start(request: Request) -> Response:
        name = name_of(request)
        with LabelStore(options.rundir) as store:
            if options.adjudicate:
                waiting = disputed(store)
                target = next((p.packet_id for p in state.packet_set.packets
                               if any((c.comment_id, c.part) in waiting for c in p.claims)), None)  # fmt: skip
            else:
                target = rater_next(name, store)
        if target is None:
            return render("done.html", name=name, packets=len(state.packets))
        return RedirectResponse(f"/{mode}/{name}/p/{target}", status_code=303)

    def packet_or_404(request: Request) -> LabelPacket:
        packet = state.packets.get(request.path_params["packet_id"])
        if packet is None:
            raise UsageError("no such packet")
        return packet

    async def packet_page(request: Request) -> Response:
        name = name_of(request)
        packet = packet_or_404(request)
        with LabelStore(options.rundir) as store:
            if options.adjudicate:
                waiting = disputed(store)
                claims = [c for c in packet.claims if (c.comment_id, c.part) in waiting]
                raters = store.latest(Role.RATER)
                initial = {(c.comment_id, c.part): [(rater, labels[(c.comment_id, c.part)].row)
                                                    for rater, labels in sorted(raters.items())
                                                    if (c.comment_id, c.part) in labels] for c in claims}  # fmt: skip
                own = {}
            else:
                claims = list(packet.claims)
                initial = {}
                own = {k: v.row for k, v in store.latest(Role.RATER).get(name, {}).items()}
        order = [p.packet_id for p in state.order(name)]
        position = order.index(packet.packet_id) + 1 if packet.packet_id in order else 0
        return render("packet.html", name=name, packet=packet, claims=claims, own=own, initial=initial,
                      position=position, total=len(order), fields=ACTIONABILITY_FIELDS, field_keys=FIELD_KEYS,
                      field_names=FIELD_NAMES, class_keys=CLASS_KEYS,
                      diff_lines=packet.diff.splitlines())  # fmt: skip

    async def submit(request: Request) -> Response:
        name = name_of(request)
        packet = packet_or_404(request)
        if "application/json" not in request.headers.get("content-type", ""):
            return JSONResponse({"error": "labels are sent as JSON"}, status_code=415)
        try:
            data = await request.json()
        except ValueError:
            return JSONResponse({"error": "not a valid submission: not JSON"}, status_code=400)
        items = data.get("labels") if isinstance(data, dict) else None
        if not isinstance(items, list) or not items:
            return JSONResponse({"error": "not a valid submission: no labels"}, status_code=400)
        try:
            rows = [LabelRow.model_validate(item) for item in items]
        except ValidationError as exc:
            return JSONResponse({"error": f"not a valid submission: {exc.errors()[0]['msg']}"}, status_code=400)
        allowed = {(c.comment_id, c.part) for c in packet.claims}
        if any((r.comment_id, r.part) not in allowed for r in rows):
            return JSONResponse({"error": "a label names a claim of another packet"}, status_code=400)
        if options.adjudicate and any(not (r.reason or "").strip() for r in rows):
            return JSONResponse({"error": "every adjudication needs a reason"}, status_code=400)
        if not options.adjudicate and any(r.reason is not None for r in rows):
            return JSONResponse({"error": "reasons belong to adjudications"}, status_code=400)
        with state.lock, LabelStore(options.rundir) as store:
            store.add(rows, author=name, role=Role.ADJUDICATOR if options.adjudicate else Role.RATER, source="app")
        return JSONResponse({"saved": len(rows), "next": f"/{mode}/{name}"})

    async def static(request: Request) -> Response:
        name = request.path_params["file"]
        types = {"label.js": "text/javascript", "label.css": "text/css"}
        if name not in types:
            return Response("not found", status_code=404)
        return Response(_static(name), media_type=types[name], headers={"x-content-type-options": "nosniff"})

    routes = [
        Route("/", home),
        Route("/static/{file}", static),
        Route(f"/{mode}/{{name}}", start),
        Route(f"/{mode}/{{name}}/p/{{packet_id}}", packet_page, methods=["GET"]),
        Route(f"/{mode}/{{name}}/p/{{packet_id}}", submit, methods=["POST"]),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost", "[::1]"])]
    return Starlette(routes=routes, middleware=middleware, exception_handlers={UsageError: error_page})


def serve(options: AppOptions, port: int) -> None:
    """Run the app on ``127.0.0.1:port`` until interrupted."""
    import uvicorn

    app = build_app(options)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, server_header=False)

