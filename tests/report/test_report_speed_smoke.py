"""The report speed benchmark runs (smoke sizes; no timing asserted) so it cannot rot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "report_speed.py"


def test_report_speed_benchmark_smoke():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--smoke"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "ratio" in proc.stdout and "200 findings" in proc.stdout
