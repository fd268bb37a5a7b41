"""Helpers of the hostile-input suite: the CLI as a subprocess and corpora written by hand.

Each test here builds one attack from docs/HOSTILE.md (a repository, a corpus, a run
directory, a solver patch) and asserts the safe outcome: refused with one line, or contained.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


class Result:
    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def one_line_error(self, *needles: str) -> str:
        """Assert a non-zero exit with exactly one 'reviewbench: error:' line, no traceback."""
        assert self.code != 0, (self.out, self.err)
        lines = self.err.strip().splitlines()
        assert len(lines) == 1, self.err
        assert lines[0].startswith("reviewbench: error: "), self.err
        assert "Traceback" not in self.err and "internal error" not in self.err, self.err
        for needle in needles:
            assert needle in lines[0], lines[0]
        return lines[0]


def run_cli(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 120) -> Result:  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "reviewbench", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, **(env or {})}, timeout=timeout, check=False)  # fmt: skip
    return Result(proc)


@pytest.fixture
def cli_process():
    """The CLI as a separate process: where a hang must end at a timeout (special files),
    where output a child writes to the inherited stdout counts, or where an environment
    variable read once per process (``TMPDIR``) is the point."""
    return run_cli


def run_inproc(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
    """The CLI through the real ``main`` in this process (no interpreter start-up)."""
    from ..conftest import run_cli as run_main

    return Result(run_main(*args, cwd=cwd, env=env))


@pytest.fixture
def cli():
    """The CLI in this process: exit codes and one-line errors are what most tests here check."""
    return run_inproc


def write_corpus(path: Path, repo: Path, base: str, cases: list[dict], gold: list[dict],
                 patches: dict[str, bytes]) -> Path:  # fmt: skip
    """A corpus directory exactly as given (no validation: that is the reader's job)."""
    (path / "patches").mkdir(parents=True)
    for name, data in patches.items():
        (path / "patches" / name).write_bytes(data)
    (path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    gold_bytes = "".join(json.dumps(g) + "\n" for g in gold).encode()
    (path / "gold.jsonl").write_bytes(gold_bytes)
    meta = {
        "schema_version": "1",
        "repo": {"path": str(repo), "remote": None, "head": base, "shallow": False},
        "created_at": "2024-01-01T00:00:00Z",
        "tool_version": "test",
        "config": {},
        "counts": {
            "cases": len(cases),
            "by_stratum": {},
            "matched_commits": len(cases),
            "dropped": {},
        },
        "gold_sha256": hashlib.sha256(gold_bytes).hexdigest(),
    }
    (path / "corpus.json").write_text(json.dumps(meta, indent=2))
    return path


def case(case_id: str, base: str, patch: str | None = None, paths: list[str] | None = None) -> dict:
    return {"case_id": case_id, "base": base, "title": "Update module", "language": "python",
            "patch": patch or f"patches/{case_id}.diff", "paths": paths or ["app.py"]}  # fmt: skip


def gold(case_id: str, path: str = "app.py", test_paths: list[str] | None = None) -> dict:
    return {
        "case_id": case_id, "stratum": "fix_reversal", "expect_finding": True, "variant_of": None,
        "defects": [{"defect_id": f"{case_id}-d1", "class": "fix_reversal",
                     "locations": [{"path": path, "start_line": 1, "end_line": 1}]}],
        "provenance": {"test_paths": test_paths or []}, "validation": None,
    }  # fmt: skip
