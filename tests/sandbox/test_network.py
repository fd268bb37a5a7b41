"""Egress by allowlist: real loopback servers, real sandboxed commands, under each mechanism.

A command without a network list reaches no loopback port of the host; with
``network = ["127.0.0.1:A"]`` it reaches server A through the sandbox's proxy (plain HTTP
and a CONNECT tunnel, as HTTPS clients use) and neither server B nor A directly; the
refusals are in the run's notes, the policy in the run record and the registration.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pydantic import ValidationError

from reviewbench import MineConfig, mine_corpus
from reviewbench.config.reviewers import CommandConfig, network_policy
from reviewbench.errors import ReviewerError, UsageError
from reviewbench.review.experiment import load_experiment
from reviewbench.review.runner import run_experiment
from reviewbench.reviewers import make_reviewer
from reviewbench.sandbox import AgentBox
from reviewbench.sandbox._layout import _mechanism
from reviewbench.store.runs import RunStore

PYTHON_HOME = os.path.realpath(sys.base_prefix)

#: Inside the sandbox: every way out it can think of, each answered in one JSON object.
PROBE = """
import json, os, socket, sys, urllib.request
allowed, other = int(sys.argv[1]), int(sys.argv[2])
out = {"proxy": os.environ.get("HTTPS_PROXY")}

def fetch(port):
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/probe", timeout=5).read().decode().strip()
    except Exception as exc:
        return f"error: {exc}"

def direct(port):
    try:
        socket.create_connection(("127.0.0.1", port), 3).close()
        return "connected"
    except OSError as exc:
        return f"error: {exc.strerror}"

def tunnel(port):
    # What an HTTPS client does: CONNECT, then its own bytes through the tunnel.
    proxy = os.environ.get("HTTPS_PROXY")
    if not proxy:
        return "error: no proxy"
    host, _, proxy_port = proxy.removeprefix("http://").partition(":")
    s = socket.create_connection((host, int(proxy_port)), 5)
    s.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\n\\r\\n".encode())
    status = s.recv(4096).split(b"\\r\\n")[0].decode()
    if " 200 " not in status + " ":
        return f"error: {status}"
    s.sendall(b"GET /tunnel HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
    data = b""
    while chunk := s.recv(4096):
        data += chunk
    return data.split(b"\\r\\n\\r\\n", 1)[1].decode().strip()

out.update(fetch_allowed=fetch(allowed), fetch_other=fetch(other), direct_allowed=direct(allowed),
           direct_other=direct(other), tunnel_allowed=tunnel(allowed), tunnel_other=tunnel(other))
print(json.dumps(out))
"""


class _Server:
    """A loopback HTTP server that counts the connections it accepted and answers its name."""

    def __init__(self, name: str) -> None:
        counter = self
        self.name = name
        self.connections = 0

        class Handler(BaseHTTPRequestHandler):
            def setup(self) -> None:
                counter.connections += 1
                super().setup()

            def do_GET(self) -> None:  # noqa: N802
                body = f"{counter.name} {self.path}".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def servers():
    pair = _Server("A"), _Server("B")
    yield pair
    for server in pair:
        server.close()


@pytest.fixture(params=["bwrap", "unshare"])
def mechanism(request, monkeypatch):
    """Each sandbox mechanism in turn (one this machine cannot run is skipped, not failed)."""
    monkeypatch.setenv("REVIEWBENCH_SANDBOX", request.param)
    if shutil.which(request.param) is None or _mechanism(False, request.param) is None:
        pytest.skip(f"{request.param} cannot isolate here")
    return request.param


def _probe_command(a: int, b: int) -> str:
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(PROBE)} {a} {b}"


def _review(config: CommandConfig, make_packet):
    async def go():
        reviewer = make_reviewer(config)
        try:
            return await reviewer.review(make_packet(), None)
        finally:
            await reviewer.aclose()

    return asyncio.run(go())


def test_a_command_reviewer_without_a_network_list_reaches_no_loopback_port(servers, mechanism, make_packet):
    a, b = servers
    reply = _review(CommandConfig(kind="command", command=_probe_command(a.port, b.port), expose=[PYTHON_HOME]),
                    make_packet)  # fmt: skip
    seen = json.loads(reply.text)
    assert seen["proxy"] is None
    assert all(seen[k].startswith("error") for k in ("fetch_allowed", "fetch_other", "direct_allowed", "direct_other"))
    assert (a.connections, b.connections) == (0, 0)
    assert reply.notes == ()  # nothing was asked of a proxy: there is none


def test_a_network_list_reaches_the_listed_server_and_not_another(servers, mechanism, make_packet):
    a, b = servers
    config = CommandConfig(kind="command", command=_probe_command(a.port, b.port), expose=[PYTHON_HOME],
                           network=[f"127.0.0.1:{a.port}"])  # fmt: skip
    reply = _review(config, make_packet)
    seen = json.loads(reply.text)
    assert seen["fetch_allowed"] == "A /probe"  # plain HTTP through the proxy
    assert seen["tunnel_allowed"] == "A /tunnel"  # a CONNECT tunnel, as HTTPS clients make
    assert "403" in seen["fetch_other"] and "403" in seen["tunnel_other"]
    # Straight to a port, past the proxy: the namespace has no route to the host at all.
    assert seen["direct_allowed"].startswith("error") and seen["direct_other"].startswith("error")
    assert a.connections == 2 and b.connections == 0
    assert reply.notes == (f"the sandbox refused network access to 127.0.0.1:{b.port} (not in the network list)",)


def test_a_failing_command_names_the_refused_host_in_its_error(servers, make_packet):
    a, b = servers
    code = f"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{b.port}/', timeout=5)"
    config = CommandConfig(kind="command", command=f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}",
                           expose=[PYTHON_HOME], network=[f"127.0.0.1:{a.port}"])  # fmt: skip
    with pytest.raises(ReviewerError, match=rf"refused network access to 127\.0\.0\.1:{b.port}: list the hosts"):
        _review(config, make_packet)
    assert b.connections == 0


def test_network_true_is_unrestricted(servers, make_packet):
    a, b = servers
    config = CommandConfig(kind="command", command=_probe_command(a.port, b.port), expose=[PYTHON_HOME],
                           network=True)  # fmt: skip
    seen = json.loads(_review(config, make_packet).text)
    assert (seen["direct_allowed"], seen["direct_other"], seen["fetch_other"]) == ("connected", "connected", "B /probe")


@pytest.mark.parametrize(("network", "message"), [
    (["https://api.example.com:443"], "not 'host:port'"),
    (["api.example.com"], "not 'host:port'"),
    (["api.example.com:0"], "not 'host:port'"),
    (["*.example.com:443"], "not 'host:port'"),
    (1, "network"),
])  # fmt: skip
def test_a_bad_network_entry_is_refused_on_load(network, message):
    with pytest.raises(ValidationError, match=message):
        CommandConfig(kind="command", command="true", network=network)


def test_without_the_sandbox_the_network_cannot_be_restricted():
    for network in (False, ["api.example.com:443"]):
        with pytest.raises(ValidationError, match="sandbox = false cannot restrict the network: add network = true"):
            CommandConfig(kind="command", command="true", sandbox=False, network=network)
    with pytest.raises(UsageError, match="sandbox = false cannot restrict the network"):
        AgentBox(label="x", sandbox=False, network=["api.example.com:443"])


def test_the_policy_as_recorded():
    def policy(**fields):
        return network_policy(CommandConfig(kind="command", command="true", **fields))

    assert policy() == {"policy": "none"} == policy(network=[])
    assert policy(network=["API.example.com:443", "[::1]:8080", "api.example.com:443"]) == {
        "policy": "allowlist", "hosts": ["[::1]:8080", "api.example.com:443"]}
    assert policy(network=True) == {"policy": "unrestricted"}


# -- a whole experiment: the policy in the registration and in every run record -----------------


@pytest.fixture
def corpus(git_repo, tmp_path) -> Path:
    repo = git_repo()
    repo.commit("init", {"app/a.py": "def alpha(x):\n    return x\n"})
    repo.commit("fix a", {"app/a.py": "def alpha(x):\n    if x is None:\n        return 0\n    return x\n"})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0, mirrors=False), out)
    return out


def test_an_experiment_records_each_condition_s_network_policy(tmp_path, corpus, servers):
    from ..conftest import run_cli

    a, b = servers
    script = tmp_path / "agents" / "probe.py"
    script.parent.mkdir()
    script.write_text(PROBE.replace('print(json.dumps(out))', 'print("NO_ISSUES")'))
    command = json.dumps(f"{sys.executable} {script} {a.port} {b.port}")
    expose = json.dumps([PYTHON_HOME, str(script.parent)])
    tables = {"none": "", "listed": f', network = ["127.0.0.1:{a.port}"]', "open": ", network = true"}
    text = f'corpus = "{corpus}"\nrepeats = 1\nseed = 1\nrename = false\n'
    for name, extra in tables.items():
        text += (f'[[condition]]\nname = "{name}"\nreviewer = {{ kind = "command", command = {command}, '
                 f'expose = {expose}{extra} }}\ntimeout_s = 60\n')  # fmt: skip
    experiment = tmp_path / "experiment.toml"
    experiment.write_text(text)
    out = tmp_path / "runs"
    registered = run_cli("register", experiment, "--out", out)
    assert registered.returncode == 0, registered.stderr
    frozen = json.loads((out / "registration.json").read_text())["versions"][0]["frozen"]
    assert frozen["network"] == {"none": {"policy": "none"},
                                 "listed": {"policy": "allowlist", "hosts": [f"127.0.0.1:{a.port}"]},
                                 "open": {"policy": "unrestricted"}}  # fmt: skip
    summary = run_experiment(load_experiment(experiment), out)
    assert summary.by_state == {"completed_no_findings": 3}
    store = RunStore(out / "runs.sqlite")
    try:
        runs = {r.condition: r for r in store.runs()}
    finally:
        store.close()
    assert {name: run.network for name, run in runs.items()} == frozen["network"]
    assert runs["listed"].error == f"the sandbox refused network access to 127.0.0.1:{b.port} (not in the network list)"
    assert runs["none"].error is None and runs["open"].error is None
    exported = run_cli("export", out)
    rows = {r["condition"]: r for r in map(json.loads, exported.stdout.splitlines())}
    assert rows["listed"]["network"] == {"policy": "allowlist", "hosts": [f"127.0.0.1:{a.port}"]}
    # Server B was reached by the unrestricted condition only (its fetch and direct connect).
    assert b.connections == 2
