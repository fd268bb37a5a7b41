"""The lean network backend under httpx: every client of the pool uses it, a request goes
out in one send, idle connections are reused, and TLS (a self-signed loopback server whose
certificate the client is told to trust) works end to end."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
import threading

import httpcore
import httpx
import pytest

from reviewbench.reviewers._http import ClientPool
from reviewbench.reviewers._transport import LeanBackend, lean_transport


def test_client_pool_clients_use_the_lean_backend():
    async def main():
        pool = ClientPool()
        index = pool._pick()
        client = pool._clients[index]
        backend = client._transport._pool._network_backend
        await pool.aclose()
        return backend

    assert isinstance(asyncio.run(main()), LeanBackend)


class _EchoServer:
    """HTTP/1.1 keep-alive server on loopback counting connections and recv() calls."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.tls = tls
        self.connections = 0
        self.reads: list[bytes] = []
        self.ready = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self.ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self.tls))
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        buffer = b""
        try:
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    return
                self.reads.append(chunk)
                buffer += chunk
                while b"\r\n\r\n" in buffer:
                    head, rest = buffer.split(b"\r\n\r\n", 1)
                    length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                                       if line.lower().startswith(b"content-length")), b"0"))  # fmt: skip
                    if len(rest) < length:
                        break
                    body, buffer = rest[:length], rest[length:]
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                    await writer.drain()
        except (ConnectionError, ssl.SSLError):
            return

    def stop(self) -> None:
        async def shutdown() -> None:
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


async def _post_three(url: str, verify) -> list[bytes]:
    async with httpx.AsyncClient(transport=lean_transport(verify=verify)) as client:
        return [(await client.post(url, content=b"x" * n)).content for n in (10, 20000, 0)]


def test_requests_go_out_in_one_send_and_connections_are_reused():
    server = _EchoServer()
    try:
        bodies = asyncio.run(_post_three(f"http://127.0.0.1:{server.port}/v1", True))
    finally:
        server.stop()
    assert bodies == [b"x" * 10, b"x" * 20000, b""]
    assert server.connections == 1
    # Head and body arrive together: the first request is one recv, not a head then a body.
    assert server.reads[0].startswith(b"POST /v1 HTTP/1.1") and server.reads[0].endswith(b"x" * 10)


def test_connection_refused_and_read_errors_are_httpx_errors():
    async def refused():
        async with httpx.AsyncClient(transport=lean_transport()) as client:
            await client.post("http://127.0.0.1:9/", content=b"")

    with pytest.raises(httpx.ConnectError):
        asyncio.run(refused())
    assert issubclass(httpx.ConnectError, httpx.TransportError) and httpcore.ConnectError


@pytest.fixture
def self_signed(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)  # fmt: skip
    return key, cert


def test_tls_end_to_end_with_a_trusted_self_signed_certificate(self_signed):
    key, cert = self_signed
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    server = _EchoServer(tls=server_ctx)
    try:
        trusted = ssl.create_default_context(cafile=str(cert))
        bodies = asyncio.run(_post_three(f"https://127.0.0.1:{server.port}/", trusted))
        assert bodies == [b"x" * 10, b"x" * 20000, b""]
        with pytest.raises(httpx.ConnectError):  # not trusted: verification fails
            asyncio.run(_post_three(f"https://127.0.0.1:{server.port}/", ssl.create_default_context()))
    finally:
        server.stop()
