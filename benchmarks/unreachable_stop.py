"""How long does ``reviewbench run`` take to stop when its endpoint is not there?

Issue 27: an experiment pointed at a local server that was not running retried every run
for ~32 s and failed runs after 100 s. This builds a corpus of synthetic fix reversals and
times ``reviewbench run`` (a separate process, as a user starts it) against a closed
loopback port, twice:

- with the check before planning (the default): the run should stop at once, one line;
- with ``--no-endpoint-check`` (what happens when the server dies mid-run): the condition
  stops after ``stop_after_connection_failures`` (5) consecutive connection failures.

It prints the wall time of each, its exit code and the one stderr line. Target: < 10 s.

    .venv/bin/python benchmarks/unreachable_stop.py              # 20 cases x 3 repeats
    .venv/bin/python benchmarks/unreachable_stop.py --smoke      # toy sizes (the test suite runs it)

No assertion on time: it reports.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runner_overhead import _synthetic_repo

from reviewbench import MineConfig, mine_corpus


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _timed(args: list[str]) -> tuple[float, int, str]:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "reviewbench", *args], capture_output=True, text=True, check=False)
    return time.monotonic() - started, proc.returncode, proc.stderr.strip()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=1, help="runs in flight (1: the slowest stop)")
    parser.add_argument("--smoke", action="store_true", help="toy sizes")
    args = parser.parse_args(argv)
    if args.smoke:
        args.cases, args.repeats = 3, 2
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _synthetic_repo(root / "repo", args.cases)
        mine_corpus(MineConfig(repo=root / "repo", mirrors=False, controls_ratio=0), root / "corpus")
        port = _closed_port()
        experiment = root / "experiment.toml"
        experiment.write_text(
            f'corpus = "corpus"\nrepeats = {args.repeats}\n[[condition]]\nname = "A"\n'
            f"concurrency = {args.concurrency}\n"
            f'reviewer = {{ kind = "openai", base_url = "http://127.0.0.1:{port}/v1", model = "m", api_key_env = "" }}\n'
        )  # default retries (4) and stop_after_connection_failures (5)
        runs = args.cases * args.repeats
        print(f"{runs} planned runs against closed port 127.0.0.1:{port}, concurrency {args.concurrency}")
        for label, extra, out in (("check before planning", [], "a"),
                                  ("--no-endpoint-check", ["--no-endpoint-check"], "b")):  # fmt: skip
            seconds, code, line = _timed(["run", str(experiment), "--out", str(root / out), *extra])
            print(f"{label}: stopped in {seconds:.2f} s, exit {code}, {len(line.splitlines())} stderr line(s)")
            print(f"  {line}")


if __name__ == "__main__":
    main()
