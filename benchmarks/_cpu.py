"""CPU accounting for benchmarks whose commands run sandboxed work (test runs, coverage).

They read ``getrusage(RUSAGE_CHILDREN)``, which sees a process's CPU only once a waiting
parent has reaped it. bubblewrap's monitor exits as soon as the first process of its PID
namespace reports the command's status, without reaping that process: everything that ran
inside is invisible (measured here: a sandboxed 1-CPU-second loop reads 0.0 s, and
``mutate_speed.py`` showed validation at 3.9 CPU s for 28 s of two busy cores). The
``unshare`` path ends in reviewbench's own init (``sandbox/_init.py``), which is reaped, so
CPU benchmarks run with ``REVIEWBENCH_SANDBOX=unshare`` unless the caller chose a
mechanism. It starts each sandboxed process about 80 ms slower than bubblewrap
(docs/SANDBOX.md), so the rates it gives are, if anything, low.
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
from pathlib import Path

BURN_CPU_S = 0.3
"""CPU seconds the check spends inside the sandbox."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def sandboxed_cpu_seen(burn_s: float = BURN_CPU_S) -> tuple[str, float]:
    """Run a ``burn_s`` CPU-second loop in the test-run sandbox; return its mechanism and
    the CPU seconds ``getrusage`` saw of it."""
    from reviewbench.config.pipeline import Network
    from reviewbench.sandbox import Sandbox

    loop = f"import time\nt = time.process_time()\nwhile time.process_time() - t < {burn_s}: pass\n"
    with tempfile.TemporaryDirectory(prefix="reviewbench-cpu-check-") as tmp:
        sandbox = Sandbox(Network.DENY, None, Path(tmp) / "home")
        before = _children_cpu()
        outcome = sandbox.run([sys.executable, "-c", loop], Path(tmp), timeout=60)
        seen = _children_cpu() - before
    if outcome.exit_code != 0:
        raise RuntimeError(f"the CPU check could not run in the sandbox (exit {outcome.exit_code})")
    return sandbox.mechanism, seen


def accountable_sandbox() -> str:
    """Choose a sandbox whose CPU ``getrusage`` sees (for this process and the commands it
    starts), check it, and return the line to print above the figures."""
    os.environ.setdefault("REVIEWBENCH_SANDBOX", "unshare")
    mechanism, seen = sandboxed_cpu_seen()
    if seen < 0.8 * BURN_CPU_S:
        return (f"WARNING: CPU spent in the {mechanism} sandbox is not visible to getrusage here "
                f"({seen:.2f} of {BURN_CPU_S} CPU s seen): the CPU figures below undercount")  # fmt: skip
    return (f"CPU measured with the {mechanism} sandbox (REVIEWBENCH_SANDBOX); a {BURN_CPU_S} CPU-s loop "
            f"inside reads {seen:.2f} s")  # fmt: skip
