"""Egress by allowlist: a command that lists ``host:port`` pairs reaches those and nothing else.

The command runs in a network namespace of its own (``--unshare-net``: only a loopback
interface, so no route anywhere). Two pieces carry its allowed traffic out:

- inside, :data:`RELAY` (standard library only, run as ``python -I -S -c``) brings the
  loopback up where the mechanism left it down, listens on a free loopback port, sets
  ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY`` (both cases) to it, forks a relay that copies
  each connection to a unix socket, and ``exec``\\ s the command (which stays the process
  whose exit ends the sandbox: the relay dies with it);
- outside, :class:`EgressProxy` listens on that unix socket (in the run's scratch
  directory, bound into the sandbox) and reads one HTTP request head per connection:
  ``CONNECT host:port`` (HTTPS, any TLS client) or a plain-HTTP request in absolute form
  (``GET http://host:port/…``). A pair on the list is connected and the bytes copied both
  ways; any other is answered ``403`` and recorded (:attr:`EgressProxy.refused`, one line
  each in the run's notes).

A program that ignores the proxy variables gets no network at all: the safe failure.
Matching is by name as the client sends it (``localhost`` is not ``127.0.0.1``); the proxy
resolves listed names itself. ``docs/SANDBOX.md`` says more, limits included.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from pathlib import Path
from urllib.parse import urlsplit

from ..config.reviewers import parse_host_port

__all__ = ["RELAY", "EgressProxy", "relay_argv"]

_log = logging.getLogger("reviewbench.sandbox")

#: Bytes of a request head read at most before the proxy gives up on a client.
HEAD_LIMIT = 64 * 1024
#: Seconds a client has to send its request head, and the proxy to reach a listed host.
HEAD_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 30.0

RELAY = r"""
import os, socket, struct, sys, threading

def lo_up():
    # unshare --net leaves the loopback down (bubblewrap brings it up): SIOCGIFFLAGS, SIOCSIFFLAGS.
    try:
        import fcntl
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            flags = struct.unpack("16sH14x", fcntl.ioctl(s, 0x8913, struct.pack("16sH14x", b"lo", 0)))[1]
            if not flags & 1:
                fcntl.ioctl(s, 0x8914, struct.pack("16sH14x", b"lo", flags | 1))
        finally:
            s.close()
    except OSError:
        pass  # the bind below says whether the loopback works

def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass

def bridge(conn, up):
    there = threading.Thread(target=pipe, args=(conn, up), daemon=True)
    there.start()
    pipe(up, conn)
    there.join()
    conn.close()
    up.close()

def serve(listener, path):
    while True:
        conn, _ = listener.accept()
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            up.connect(path)
        except OSError:
            conn.close()
            up.close()
            continue
        threading.Thread(target=bridge, args=(conn, up), daemon=True).start()

def main():
    path, argv = sys.argv[1], sys.argv[2:]
    lo_up()
    try:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
    except OSError as exc:
        sys.stderr.write(f"reviewbench sandbox: no loopback for the network proxy: {exc.strerror}\n")
        sys.exit(125)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        try:
            serve(listener, path)
        finally:
            os._exit(0)
    listener.close()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        os.environ[name] = os.environ[name.lower()] = url
    os.environ.pop("NO_PROXY", None)
    os.environ.pop("no_proxy", None)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"reviewbench sandbox: cannot run {argv[0]}: {exc.strerror}\n")
        sys.exit(127)

main()
"""


def relay_argv(socket_path: Path) -> list[str]:
    """What runs inside the sandbox before the command (the command's argv follows)."""
    return [sys.executable, "-I", "-S", "-c", RELAY, str(socket_path)]


def _target(head: bytes) -> tuple[str, int, bytes | None] | str:
    """(host, port, bytes to send upstream first — None for CONNECT) of a request head, or why not."""
    line, _, rest = head.partition(b"\r\n")
    parts = line.decode("latin-1").split(" ")
    if len(parts) != 3:
        return "not an HTTP request"
    method, target, version = parts
    if method.upper() == "CONNECT":
        try:
            host, port = parse_host_port(target)
        except ValueError:
            return f"CONNECT to {target!r}: not host:port"
        return host, port, None
    url = urlsplit(target)
    if url.scheme.lower() != "http" or not url.hostname:
        return f"{method} {target[:80]!r}: a proxy request names an http:// address (HTTPS goes by CONNECT)"
    try:
        port = url.port or 80
    except ValueError:
        return f"{method} {target[:80]!r}: a bad port"
    origin = (url.path or "/") + (f"?{url.query}" if url.query else "")
    return url.hostname.lower().rstrip("."), port, f"{method} {origin} {version}\r\n".encode("latin-1") + rest


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (OSError, RuntimeError):
        pass


class EgressProxy:
    """The filtering proxy of one sandboxed run, on a unix socket: listed ``host:port`` pairs only."""

    def __init__(self, hosts: tuple[str, ...], label: str) -> None:
        self.allowed = frozenset(parse_host_port(h) for h in hosts)
        self.label = label
        self.refused: list[str] = []
        """``host:port`` (or the reason a request was unreadable) of every refused request, in order."""
        self.connected: list[str] = []
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self, path: Path) -> None:
        """Listen on ``path`` (a unix socket the sandbox binds in)."""
        self._server = await asyncio.start_unix_server(self._client, path=str(path), limit=HEAD_LIMIT)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)

    def _refuse(self, what: str) -> None:
        self.refused.append(what)
        _log.info("%s: network proxy refused %s (not in its network list)", self.label, what)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        upstream: asyncio.StreamWriter | None = None
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
                return
            target = _target(head)
            if isinstance(target, str):
                self._refuse(target)
                await self._answer(writer, 400, target)
                return
            host, port, first = target
            shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            if (host, port) not in self.allowed:
                self._refuse(shown)
                await self._answer(writer, 403, f"{shown} is not in this command's network list")
                return
            try:
                up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError) as exc:
                await self._answer(writer, 502, f"{shown} could not be reached: {exc}")
                return
            upstream = up_writer
            self.connected.append(shown)
            if first is None:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                up_writer.write(first)
            await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
        finally:
            self._writers.discard(writer)
            for w in (upstream, writer):
                if w is not None:
                    w.close()

    @staticmethod
    async def _answer(writer: asyncio.StreamWriter, status: int, why: str) -> None:
        reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
        body = f"reviewbench sandbox: {why}\n".encode("utf-8", "replace")
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
                     "Connection: close\r\n\r\n".encode() + body)  # fmt: skip
        with contextlib.suppress(OSError, RuntimeError):
            await writer.drain()
