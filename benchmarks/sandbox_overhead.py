"""Per-command cost of the sandbox, against a bare start and the network-only prefix of before.

    python benchmarks/sandbox_overhead.py [--runs 50]
    python benchmarks/sandbox_overhead.py --smoke      # 3 runs each: checks that it runs

Prints the median wall time of starting ``true`` (a) bare, (b) under the old network-only
prefix ``unshare -n -p -f --kill-child`` (when it works here), (c) under the shared sandbox
as test runs use it (read-only host, scratch kept, no network) and (d) as command reviewers
use it (hidden homes and /tmp, a kept tree, no network) and (e) the same with a network
list (the egress relay started before the command), with each mechanism that works here
(bubblewrap; unshare + ``_init.py``), and the ratios to (a) and (b).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reviewbench.sandbox import Layout, hidden_paths
from reviewbench.sandbox._layout import _UNSHARE, _Mechanism, _works
from reviewbench.sandbox._net import relay_argv


def _median(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--smoke", action="store_true", help="3 runs each, seconds: checks that it runs")
    args = parser.parse_args()
    runs = 3 if args.smoke else args.runs
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "tree").mkdir()
        (root / "home").mkdir()
        rows = {"bare": ["true"]}
        old = ["unshare", "-n", "-p", "-f", "--kill-child", "true"]
        if subprocess.run(old, capture_output=True).returncode == 0:
            rows["network-only (before)"] = old
        tests = Layout(cwd=root / "tree", keep=((root / "tree", True), (root / "home", True)), network=False)
        python = tuple((Path(os.path.realpath(p)), False) for p in {sys.prefix, sys.base_prefix})  # as AgentBox keeps
        agents = Layout(cwd=root / "tree", keep=((root / "tree", False), (root / "home", True), *python),
                        hide=hidden_paths(), network=False)  # fmt: skip
        relay = relay_argv(root / "home" / "proxy.sock")  # started, never asked: its start is the cost
        for mech in (_Mechanism("bwrap", ("bwrap",)), _Mechanism("unshare", _UNSHARE[0])):
            if _works(mech, False):
                rows[f"test run sandbox, {mech.name}"] = [*mech.argv(tests), "true"]
                rows[f"agent sandbox, {mech.name}"] = [*mech.argv(agents), "true"]
                rows[f"agent + network list, {mech.name}"] = [*mech.argv(agents), *relay, "true"]
        medians = {name: _median(argv, runs) for name, argv in rows.items()}
    base = medians["bare"]
    before = medians.get("network-only (before)")
    for name, value in medians.items():
        extra = f", {value / before:.1f}x network-only" if before else ""
        print(f"{name:30s} {value * 1000:7.1f} ms  ({value / base:.1f}x bare{extra})")


if __name__ == "__main__":
    main()
