"""Attack 8: a command reviewer, solver, analyser or judge that prints without end.

The output is read up to ``max_output_bytes`` while it streams (default 1 MiB); past it the
command's group is killed at once, the run is ``invalid`` with a note, and the first bytes
are stored once (no cache entry, no unparsed copy). Memory and disk stay bounded whatever
the command prints; its stderr keeps only a bounded tail.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus
from reviewbench.config.reviewers import CommandConfig, SarifConfig
from reviewbench.errors import OutputTooLarge, ReviewerError
from reviewbench.label.judge import JudgeError, load_judge, make_asker
from reviewbench.records import ReviewPacket
from reviewbench.reviewers import make_reviewer
from reviewbench.sandbox import run_shell
from reviewbench.sandbox._shell import STDERR_KEEP
from reviewbench.tasks.solvers import CommandSolver, TaskPacket

MIB = 1 << 20
FLOOD = "cat /dev/zero"  # never ends on its own: only the cap (or the timeout) stops it


def _packet() -> ReviewPacket:
    return ReviewPacket(case_id="c0001", title="t", diff="", paths=["app.py"], prompt="Review.")


def _review(config: CommandConfig | SarifConfig, tree: Path | None = None):
    async def go():
        reviewer = make_reviewer(config)
        try:
            return await asyncio.wait_for(reviewer.review(_packet(), tree), 60)
        finally:
            await reviewer.aclose()

    return asyncio.run(go())


def test_the_default_cap_is_one_mib_and_it_is_configurable():
    assert CommandConfig(kind="command", command="true").max_output_bytes == MIB
    assert CommandConfig(kind="command", command="true", max_output_bytes=10).max_output_bytes == 10
    with pytest.raises(ValueError):
        CommandConfig(kind="command", command="true", max_output_bytes=0)


@pytest.mark.parametrize("sandbox", [True, False])
def test_an_endless_reviewer_is_cut_at_the_cap_and_killed(sandbox):
    started = time.monotonic()
    with pytest.raises(OutputTooLarge) as info:
        _review(CommandConfig(kind="command", command=FLOOD, max_output_bytes=64 * 1024, sandbox=sandbox, network=not sandbox))
    assert time.monotonic() - started < 30  # killed at the cap, not at a timeout
    assert isinstance(info.value, ReviewerError) and not info.value.transient
    assert len(info.value.head.encode()) == 64 * 1024  # the first bytes, exactly the cap
    assert "max_output_bytes" in str(info.value) and "65536" in str(info.value)


def test_exactly_the_cap_is_a_review_and_one_byte_more_is_not(tmp_path):
    script = tmp_path / "print.py"
    script.write_text("import sys\nsys.stdout.write('NO_ISSUES\\n' + 'x' * (int(sys.argv[1]) - 10))\n")
    base = f"{sys.executable} {script}"
    reply = _review(CommandConfig(kind="command", command=f"{base} 1000", max_output_bytes=1000, sandbox=False, network=True))
    assert len(reply.text) == 1000
    with pytest.raises(OutputTooLarge):
        _review(CommandConfig(kind="command", command=f"{base} 1001", max_output_bytes=1000, sandbox=False, network=True))


def test_the_default_cap_applies_without_configuration():
    command = f"head -c {MIB + 1} /dev/zero"
    with pytest.raises(OutputTooLarge):
        _review(CommandConfig(kind="command", command=command, sandbox=False, network=True))
    assert _review(CommandConfig(kind="command", command=f"head -c {MIB} /dev/zero", sandbox=False, network=True)).text


def test_a_sarif_analyser_that_floods_is_cut_too(tmp_path):
    with pytest.raises(OutputTooLarge):
        _review(SarifConfig(kind="sarif", command=FLOOD, max_output_bytes=4096, sandbox=False, network=True), tmp_path)


def test_stderr_keeps_a_bounded_tail():
    script = "head -c 20000000 /dev/zero | tr '\\0' e >&2; echo TAIL-MARK >&2; echo NO_ISSUES"
    result = asyncio.run(run_shell(script, stdin=None, cwd=None, env={"PATH": "/usr/bin:/bin"}))
    assert result.stdout == b"NO_ISSUES\n"
    assert len(result.stderr) <= STDERR_KEEP
    assert result.stderr.endswith(b"TAIL-MARK\n")


def test_a_command_solver_that_floods_is_cut(tmp_path):
    solver = CommandSolver(CommandConfig(kind="command", command=FLOOD, max_output_bytes=4096, sandbox=False, network=True))
    packet = TaskPacket(instance_id="t1", problem_statement="fix it", prompt="Fix.")
    with pytest.raises(OutputTooLarge):
        asyncio.run(asyncio.wait_for(solver.solve(packet, tmp_path), 60))


def test_a_command_judge_that_floods_is_one_judge_error(tmp_path):
    config = tmp_path / "judge.toml"
    config.write_text(f'judge = {{ kind = "command", command = "{FLOOD}", sandbox = false, network = true, '
                      "max_output_bytes = 4096 }\n")  # fmt: skip
    with pytest.raises(JudgeError, match="more than 4096 bytes"):
        asyncio.run(asyncio.wait_for(make_asker(load_judge(config)).ask({"claim": "x"}), 60))


@pytest.fixture
def corpus(git_repo, tmp_path) -> Path:
    repo = git_repo()
    repo.commit("init", {"app/a.py": "def a(x):\n    return x\n"})
    repo.commit("fix a", {"app/a.py": "def a(x):\n    if x is None:\n        return 0\n    return x\n"})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path), out)
    return out


def test_a_flooding_reviewer_makes_invalid_runs_stored_once(tmp_path, corpus, cli_process):
    experiment = tmp_path / "experiment.toml"
    experiment.write_text(
        f"corpus = {json.dumps(str(corpus))}\nrepeats = 1\nseed = 1\n"
        '[[condition]]\nname = "flood"\ntimeout_s = 120\n'
        'reviewer = { kind = "command", command = "yes src/app.py:1 high a finding", max_output_bytes = 8192 }\n'
    )
    rundir = tmp_path / "runs"
    result = cli_process("run", experiment, "--out", rundir, "--json")
    assert "Traceback" not in result.err
    db = sqlite3.connect(rundir / "runs.sqlite")
    rows = db.execute("SELECT state, error, raw_output, unparsed FROM runs").fetchall()
    assert rows and all(r[0] == "invalid" for r in rows)
    for _, error, raw, unparsed in rows:
        assert "more than 8192 bytes" in error and "max_output_bytes" in error
        assert len(raw) == 8192 and raw.startswith("src/app.py:1 high a finding\n")
        assert json.loads(unparsed) == []  # not parsed: the cut text is no review
    assert db.execute("SELECT count(*) FROM cache").fetchone()[0] == 0  # never replayed as an answer
    assert db.execute("SELECT count(*) FROM findings").fetchone()[0] == 0
    db.close()
    # A resume does not ask again: the run ended, invalid.
    again = cli_process("run", experiment, "--out", rundir, "--json")
    assert "Traceback" not in again.err
    assert json.loads(again.out)["requests"] == 0
