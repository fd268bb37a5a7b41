"""How much does the review runner add on top of the endpoint's own latency?

Starts a loopback OpenAI-compatible server (in another process, so it does not share this
one's GIL) that answers every request after a fixed latency, builds a corpus of synthetic
fix reversals, and runs ``cases x repeats`` reviews at a given concurrency through
``reviewbench``'s real runner, store and cache. It prints:

- wall time / ideal, where ideal = runs x latency / concurrency (target: <= 1.2);
- a baseline: the same requests from one plain httpx client at the same concurrency (what
  a simple script would do), and reviewbench's wall time over it;
- the harness's CPU milliseconds per run (this process: runner, parser, SQLite);
- then runs the same experiment again and prints how many requests reached the server
  (target: 0: every response comes from the run store).

    .venv/bin/python benchmarks/runner_overhead.py                 # 2,000 runs, 100 ms, 64
    .venv/bin/python benchmarks/runner_overhead.py --cases 50 --repeats 10 --concurrency 32
    .venv/bin/python benchmarks/runner_overhead.py --smoke   # toy sizes, seconds (the test suite runs it)

No assertion on time: it reports.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from reviewbench import MineConfig, mine_corpus
from reviewbench.review.experiment import load_experiment
from reviewbench.review.runner import run_experiment

ROOT = Path(__file__).resolve().parent.parent


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _synthetic_repo(path: Path, cases: int) -> None:
    """A repository with ``cases`` small fix commits, written in one git fast-import."""
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    stream = []
    mark = 0

    def commit(message: str, files: dict[str, str], when: int) -> None:
        nonlocal mark
        mark += 1
        stream.append(f"commit refs/heads/main\nmark :{mark}\n"
                      f"author B <b@example.com> {when} +0000\ncommitter B <b@example.com> {when} +0000\n"
                      f"data {len(message.encode())}\n{message}\n")  # fmt: skip
        if mark > 1:
            stream.append(f"from :{mark - 1}\n")
        for name, text in files.items():
            stream.append(f"M 100644 inline {name}\ndata {len(text.encode())}\n{text}\n")

    commit("init", {f"pkg/m{i}.py": f"def f{i}(x):\n    return x\n" for i in range(cases)}, 1_700_000_000)
    for i in range(cases):
        commit(f"fix f{i}", {f"pkg/m{i}.py": f"def f{i}(x):\n    return x + {i + 1}\n"}, 1_700_000_000 + i + 1)
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input="".join(stream).encode(), check=True)
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "main"], check=True)


class _Server:
    """The loopback server of tests/reviewers/servers.py, in its own process."""

    def __init__(self, port: int, latency: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "tests/reviewers/servers.py"), "--latency", str(latency), "--port", str(port)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        assert self.proc.stdout is not None
        self.proc.stdout.readline()  # "openai base_url: ..." once it listens
        self.proc.stdout.readline()

    def stop(self) -> int:
        """Stop it and return how many requests it served."""
        self.proc.send_signal(signal.SIGINT)
        try:
            out, _ = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise SystemExit("the loopback server did not stop within 60 s of SIGINT") from None
        match = re.search(r"served (\d+) requests", out)
        if not match:
            raise SystemExit(f"the server did not report its count: {out!r}")
        return int(match.group(1))


async def _bare(url: str, runs: int, concurrency: int) -> float:
    """Wall seconds for ``runs`` chat requests from one plain httpx client, ``concurrency`` at once."""
    body = {"model": "bench", "messages": [{"role": "user", "content": "review this"}]}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:

        async def one() -> None:
            async with gate:
                (await client.post(url, json=body)).raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(runs)))
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.1, help="server latency in seconds")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--smoke", action="store_true",
                        help="toy sizes (4 cases x 3 repeats, 20 ms, concurrency 4), seconds: checks that it runs")
    args = parser.parse_args()
    if args.smoke:
        args.cases, args.repeats, args.latency, args.concurrency = 4, 3, 0.02, 4

    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="rb-runner-bench-") as tmp:
        work = Path(tmp)
        _synthetic_repo(work / "repo", args.cases)
        # Fix reversals only, no mirrors: the plan must hold cases x repeats runs, as `ideal` counts.
        mine_corpus(MineConfig(repo=work / "repo", controls_ratio=0, mirrors=False), work / "corpus")
        experiment_path = work / "experiment.toml"
        experiment_path.write_text(
            f'corpus = "corpus"\nrepeats = {args.repeats}\nseed = 1\n[[condition]]\nname = "A"\n'
            f'reviewer = {{ kind = "openai", base_url = "http://127.0.0.1:{port}/v1", model = "bench", '
            f'api_key_env = "" }}\nconcurrency = {args.concurrency}\ntimeout_s = 30\n'
        )
        experiment = load_experiment(experiment_path)
        runs = args.cases * args.repeats
        ideal = runs * args.latency / args.concurrency

        server = _Server(port, args.latency)
        cpu0, wall0 = _cpu(), time.perf_counter()
        first = run_experiment(experiment, work / "runs")
        wall, cpu = time.perf_counter() - wall0, _cpu() - cpu0
        seen_first = server.stop()

        # A baseline in the same run: the same requests as a plain script would send them, one
        # httpx client at the same concurrency (no plan, store, parser or limits), same server.
        server = _Server(port, args.latency)
        bare_wall = asyncio.run(_bare(f"http://127.0.0.1:{port}/v1/chat/completions", runs, args.concurrency))
        server.stop()

        server = _Server(port, args.latency)
        cpu1, wall1 = _cpu(), time.perf_counter()
        second = run_experiment(experiment, work / "runs")
        rerun_wall, rerun_cpu = time.perf_counter() - wall1, _cpu() - cpu1
        seen_second = server.stop()

    print(f"runs: {runs} ({args.cases} cases x {args.repeats} repeats), server latency "
          f"{args.latency * 1000:.0f} ms, concurrency {args.concurrency}, {os.cpu_count()} CPUs")  # fmt: skip
    print(f"states: {first.by_state}")
    print(f"first run : wall {wall:.2f} s, ideal {ideal:.2f} s, ratio {wall / ideal:.3f} (target <= 1.2)")
    print(f"plain httpx: wall {bare_wall:.2f} s, ratio {bare_wall / ideal:.3f} to ideal; "
          f"reviewbench / bare = {wall / bare_wall:.3f}")
    print(f"            harness CPU {cpu * 1000 / runs:.2f} ms per run ({cpu:.2f} s / {runs} runs); "
          f"requests reaching the server: {seen_first}")  # fmt: skip
    print(f"re-run    : wall {rerun_wall:.2f} s, CPU {rerun_cpu:.2f} s; requests reaching the server: "
          f"{seen_second} (target 0); runner says already done {second.already_done}/{second.planned}, "
          f"sent {second.requests}")  # fmt: skip


if __name__ == "__main__":
    main()
