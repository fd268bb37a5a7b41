"""A real HTTP server on loopback that speaks the OpenAI and Anthropic wire formats.

Tests of the HTTP reviewers, of the runner (retries, timeouts, concurrency limits) and the
runner benchmark all talk to it over real sockets, so what they exercise is what runs
against a real endpoint. It is an asyncio server in a daemon thread: thousands of
requests with dozens in flight cost little besides the configured latency.

Requests to ``…/chat/completions`` are answered in the OpenAI chat-completions format,
requests to ``…/v1/messages`` in the Anthropic messages format, anything else with 404.
``GET …/models`` (the endpoint check ``run`` makes before planning) is answered apart:
with an empty model list, or ``server.models_status`` (e.g. 401); it is not a request
(neither in ``requests`` nor ``count``, never consuming the script) but counted in ``probes``.
What each request gets is scripted::

    from tests.reviewers.servers import FakeLLMServer, Reply

    with FakeLLMServer() as server:
        server.script(Reply.rate_limited(retry_after="2"), Reply.answer("a.py:3 high boom"))
        config = OpenAIConfig(kind="openai", base_url=server.openai_base_url, model="m",
                              api_key_env=None)
        ...                                  # 1st request: 429, 2nd: the answer
        assert server.count == 2
        assert server.requests[1].json["model"] == "m"

Replies are consumed first in, first out; when the script is empty every request gets
``server.default`` (by default a normal answer with :data:`FROZEN_TEXT`). Fixed-latency
mode, for benchmarks: ``FakeLLMServer(latency=0.05)`` answers every request after 50 ms.
``python tests/reviewers/servers.py --latency 0.05 --port 8000`` runs one in the
foreground (another process, so it does not share the GIL with what it measures).

API:

``FakeLLMServer(*, latency=0.0, default=None, host="127.0.0.1", port=0)``
    ``start()`` / ``stop()`` or a ``with`` block; ``url`` (``http://127.0.0.1:PORT``),
    ``openai_base_url`` (``url + "/v1"``), ``anthropic_base_url`` (``url``);
    ``script(*replies)``; ``default`` (settable); ``requests`` (a copy, in arrival order);
    ``count``; ``probes`` (model-list checks answered); ``models_status`` (settable, default
    200); ``in_flight`` / ``max_in_flight`` (requests being answered now / at most
    at once: checks concurrency limits); ``connections`` (TCP connections accepted:
    checks keep-alive reuse); ``reset()`` (forget requests, script and counters).
``Reply``
    ``answer(text=FROZEN_TEXT, *, model=None, delay=0.0, tokens_in=None, tokens_out=None)``
    (``model=None`` echoes the requested model; ``text`` may be a callable of the
    :class:`RecordedRequest`), ``slow(seconds, text=…)``, ``rate_limited(retry_after="1")``,
    ``server_error(status=500)``, ``overloaded()`` (529), ``status(code, body=b"",
    headers=None)``, ``malformed(body=…)`` (200 with invalid JSON), ``raw(body, status=200)``
    (e.g. JSON that lacks fields), ``truncated(text=…)`` (Content-Length larger than what
    is sent, then the connection closes), ``drop()`` (close without answering).
``RecordedRequest``
    ``method``, ``path``, ``headers`` (lower-case names), ``body`` (bytes), ``json`` (the
    parsed body or None), ``api`` ("openai", "anthropic" or None), ``model``.
``closed_port()``
    A loopback port nothing listens on (bound, then closed): connecting to it is refused.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import signal
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Self

__all__ = ["FROZEN_TEXT", "FakeLLMServer", "RecordedRequest", "Reply", "closed_port", "with_delay"]

FROZEN_TEXT = "src/app.py:1 high possible defect in this change"
"""The default answer: one finding in the frozen output format."""

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @cached_property
    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    @property
    def api(self) -> str | None:
        if self.path.endswith("/chat/completions"):
            return "openai"
        if self.path.endswith("/v1/messages"):
            return "anthropic"
        return None

    @property
    def model(self) -> str | None:
        data = self.json
        return data.get("model") if isinstance(data, dict) else None


@dataclass(frozen=True)
class Reply:
    """What the server does with one request; build with the class methods."""

    action: str  # "answer" | "status" | "truncate" | "drop"
    text: str | Callable[[RecordedRequest], str] = FROZEN_TEXT
    model: str | None = None
    delay: float = 0.0
    status_code: int = 200
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    tokens_in: int | None = None
    tokens_out: int | None = None

    @classmethod
    def answer(
        cls,
        text: str | Callable[[RecordedRequest], str] = FROZEN_TEXT,
        *,
        model: str | None = None,
        delay: float = 0.0,
        tokens_in: int | None = None,
        tokens_out: int | None = None,
    ) -> Reply:
        """A normal answer carrying ``text``; ``model=None`` echoes the requested model."""
        return cls(
            "answer",
            text=text,
            model=model,
            delay=delay,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
        )

    @classmethod
    def slow(cls, seconds: float, text: str = FROZEN_TEXT) -> Reply:
        return cls.answer(text, delay=seconds)

    @classmethod
    def rate_limited(cls, retry_after: str | None = "1") -> Reply:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls("status", status_code=429, headers=headers)

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        return cls("status", status_code=status)

    @classmethod
    def overloaded(cls) -> Reply:
        return cls("status", status_code=529)

    @classmethod
    def status(cls, code: int, body: bytes = b"", headers: dict[str, str] | None = None) -> Reply:
        return cls("status", status_code=code, body=body, headers=headers or {})

    @classmethod
    def malformed(cls, body: bytes = b'{"choices": [{"message": ') -> Reply:
        return cls("status", status_code=200, body=body)

    @classmethod
    def raw(cls, body: bytes | str | dict[str, Any], status: int = 200) -> Reply:
        if isinstance(body, dict):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        return cls("status", status_code=status, body=body)

    @classmethod
    def truncated(cls, text: str = FROZEN_TEXT) -> Reply:
        return cls("truncate", text=text)

    @classmethod
    def drop(cls) -> Reply:
        return cls("drop")


def _usage_in(request: RecordedRequest) -> int:
    return max(1, len(request.body) // 4)


def answer_body(request: RecordedRequest, reply: Reply, serial: int) -> dict[str, Any]:
    """The JSON a real endpoint of ``request.api`` would send for ``reply``."""
    text = reply.text(request) if callable(reply.text) else reply.text
    model = reply.model or request.model or "unknown-model"
    tokens_in = reply.tokens_in if reply.tokens_in is not None else _usage_in(request)
    tokens_out = reply.tokens_out if reply.tokens_out is not None else max(1, len(text.split()))
    if request.api == "anthropic":
        return {
            "id": f"msg_{serial:06d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
        }
    return {
        "id": f"chatcmpl-{serial:06d}",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        },
    }


def error_body(api: str | None, status: int) -> dict[str, Any]:
    if api == "anthropic":
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": f"fake error {status}"}}
    return {"error": {"message": f"fake error {status}", "type": "server_error", "code": status}}


class FakeLLMServer:
    """See the module docstring."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        default: Reply | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.host = host
        self.port = port
        self.default = default or Reply.answer(delay=latency)
        self._lock = threading.Lock()
        self._script: collections.deque[Reply] = collections.deque()
        self._requests: list[RecordedRequest] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._connections = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._probes = 0
        self.models_status = 200

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._run, name="fake-llm-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise RuntimeError(f"fake LLM server did not start: {self._error}") from self._error
        return self

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(self._handle, self.host, self.port, backlog=2048)
            )
            self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as exc:  # noqa: BLE001 - reported by start()
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        loop.run_forever()
        loop.close()

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what tests use ------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in order."""
        with self._lock:
            self._script.extend(replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._requests)

    @property
    def probes(self) -> int:
        """``GET …/models`` requests answered (the endpoint check), apart from ``count``."""
        with self._lock:
            return self._probes

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        with self._lock:
            return self._max_in_flight

    @property
    def connections(self) -> int:
        """TCP connections accepted so far (keep-alive reuse keeps this low)."""
        with self._lock:
            return self._connections

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self._requests.clear()
            self._max_in_flight = self._in_flight
            self._connections = 0

    # -- serving -------------------------------------------------------------------------

    def _next(self, request: RecordedRequest) -> tuple[Reply, int]:
        with self._lock:
            self._requests.append(request)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            reply = self._script.popleft() if self._script else self.default
            return reply, len(self._requests)

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        with self._lock:
            self._connections += 1
        try:
            while await self._one(reader, writer):
                pass
        except (
            ConnectionError,
            asyncio.IncompleteReadError,
            ValueError,
            asyncio.LimitOverrunError,
            asyncio.CancelledError,  # stop(): ending quietly keeps asyncio from logging it
        ):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection must close."""
        line = await reader.readline()
        if not line.strip():
            return False
        method, target, *_ = line.decode("latin-1").split()
        headers: dict[str, str] = {}
        while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = header.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        body = await reader.readexactly(length) if length else b""
        request = RecordedRequest(method, target.split("?", 1)[0], headers, body)
        if method == "GET" and request.path.endswith("/models"):
            with self._lock:
                self._probes += 1
            status = self.models_status
            answer = json.dumps({"object": "list", "data": []} if status == 200 else error_body(None, status)).encode()
            writer.write(f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(answer)}\r\n\r\n".encode() + answer)
            await writer.drain()
            return True
        reply, serial = self._next(request)
        try:
            if reply.delay:
                await asyncio.sleep(reply.delay)
            keep = await self._respond(writer, request, reply, serial)
        finally:
            self._done()
        return keep and headers.get("connection", "").lower() != "close"

    async def _respond(
        self, writer: asyncio.StreamWriter, request: RecordedRequest, reply: Reply, serial: int
    ) -> bool:
        if reply.action == "drop":
            return False
        status, extra = reply.status_code, dict(reply.headers)
        if reply.action in ("answer", "truncate"):
            if request.api is None:
                status, body = 404, json.dumps({"error": {"message": "no such route"}}).encode()
            else:
                body = json.dumps(answer_body(request, reply, serial)).encode()
        elif reply.body is not None:
            body = reply.body
        else:
            body = json.dumps(error_body(request.api, status)).encode()
        length = len(body) + (100 if reply.action == "truncate" else 0)
        head = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            "Content-Type: application/json",
            f"Content-Length: {length}",
            *(f"{k}: {v}" for k, v in extra.items()),
        ]
        if reply.action == "truncate":
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body[: len(body) // 2])
            await writer.drain()
            return False
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await writer.drain()
        return True


def closed_port() -> int:
    """A loopback TCP port that nothing listens on: bound, then closed (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def with_delay(reply: Reply, seconds: float) -> Reply:
    """``reply`` answered after ``seconds``."""
    return replace(reply, delay=seconds)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve fake OpenAI/Anthropic answers on loopback.")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default=FROZEN_TEXT, help="the answer's text")
    args = parser.parse_args(argv)
    # Ctrl-C or kill PID stops it cleanly. The signals are blocked before the server's thread
    # starts (it inherits the mask) and taken synchronously here: no handler can fire at an
    # awkward moment of the main thread, whenever the signal arrives.
    stop_signals = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
    server = FakeLLMServer(default=Reply.answer(args.text, delay=args.latency), port=args.port)
    server.start()
    print(
        f"openai base_url: {server.openai_base_url}\nanthropic base_url: {server.anthropic_base_url}",
        flush=True,
    )
    try:
        signal.sigwait(stop_signals)
    finally:
        server.stop()
        print(f"served {server.count} requests, at most {server.max_in_flight} at once", flush=True)


if __name__ == "__main__":
    main()
