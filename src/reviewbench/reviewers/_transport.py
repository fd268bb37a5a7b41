"""A lean asyncio network backend for httpx's connection pool.

httpcore's default backend goes through anyio: every read and write opens a cancel scope,
and every reuse check of an idle connection (``is_readable``, asked for each connection of
the pool on every request) rebuilds anyio's table of socket attributes and calls
``getpeername``. With dozens of requests in flight that was the largest share of the
harness's CPU (``benchmarks/runner_overhead.py``; docs/REVIEW.md). This backend speaks to
asyncio's streams directly and caches the socket, and it sends each HTTP/1.1 request in
one ``send``: writes are buffered until the first read (httpcore writes the head and the
body separately, then reads the response), so a request costs one system call, not two.

Everything else — HTTP/1.1 parsing (h11), pooling, keep-alive, TLS verification — stays
httpx's and httpcore's. Errors map to httpcore's own exceptions, so httpx raises exactly
what it raises with its default backend.
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
from typing import Any

import httpcore
import httpx

__all__ = ["LeanBackend", "lean_transport"]

_READ_ERRORS = (OSError, EOFError, asyncio.IncompleteReadError)


def _readable(sock: socket.socket | None) -> bool:
    """Whether an idle connection has bytes (or EOF) waiting: then it must not be reused."""
    if sock is None or sock.fileno() < 0:
        return True
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


class _Stream(httpcore.AsyncNetworkStream):
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._pending: list[bytes] = []
        self._socket: socket.socket | None = writer.get_extra_info("socket")

    async def _flush(self, timeout: float | None) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        try:
            self._writer.write(data)
            if timeout is None:
                await self._writer.drain()
            else:
                await asyncio.wait_for(self._writer.drain(), timeout)
        except TimeoutError:
            raise httpcore.WriteTimeout("timed out sending the request") from None
        except _READ_ERRORS as exc:
            raise httpcore.WriteError(str(exc) or type(exc).__name__) from None

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await self._flush(timeout)
        try:
            if timeout is None:
                return await self._reader.read(max_bytes)
            return await asyncio.wait_for(self._reader.read(max_bytes), timeout)
        except TimeoutError:
            raise httpcore.ReadTimeout("timed out reading the response") from None
        except _READ_ERRORS as exc:
            raise httpcore.ReadError(str(exc) or type(exc).__name__) from None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._pending.append(buffer)  # sent with the next read (or flush)

    async def aclose(self) -> None:
        self._pending.clear()
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (OSError, ssl.SSLError):
            pass  # the peer went first: closed either way

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:  # fmt: skip
        await self._flush(timeout)
        try:
            await asyncio.wait_for(self._writer.start_tls(ssl_context, server_hostname=server_hostname), timeout)
        except TimeoutError:
            await self.aclose()
            raise httpcore.ConnectTimeout("timed out in the TLS handshake") from None
        except (OSError, ssl.SSLError, EOFError) as exc:
            await self.aclose()
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from None
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return _readable(self._socket)
        if info == "socket":
            return self._socket
        if info == "ssl_object":
            return self._writer.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._writer.get_extra_info("sockname")
        if info == "server_addr":
            return self._writer.get_extra_info("peername")
        return None


class LeanBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, on asyncio streams (see the module docstring)."""

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None, socket_options: Any = None) -> _Stream:  # fmt: skip
        local = (local_address, 0) if local_address else None
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, local_addr=local, limit=1 << 20), timeout
            )
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"timed out connecting to {host}:{port}") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from None
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for option in socket_options or ():
                sock.setsockopt(*option)
        return _Stream(reader, writer)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Any = None) -> _Stream:  # fmt: skip
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(path), timeout)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"timed out connecting to {path}") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc) or type(exc).__name__) from None
        return _Stream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def lean_transport(**kwargs: Any) -> httpx.AsyncHTTPTransport:
    """An ``httpx.AsyncHTTPTransport`` (same arguments) whose direct connections use
    :class:`LeanBackend`. Proxied transports (``HTTPS_PROXY``…) keep httpcore's backend."""
    transport = httpx.AsyncHTTPTransport(**kwargs)
    pool = getattr(transport, "_pool", None)
    if type(pool) is httpcore.AsyncConnectionPool and hasattr(pool, "_network_backend"):
        pool._network_backend = LeanBackend()
    return transport
