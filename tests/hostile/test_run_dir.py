"""Attacks 9 and 11 on a run directory: a second writer, and inputs edited between runs."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus

from ..conftest import default_sigint


@pytest.fixture
def corpus(git_repo, tmp_path) -> Path:
    repo = git_repo()
    repo.commit("init", {"app/a.py": "def a(x):\n    return x\n"})
    repo.commit(
        "fix a", {"app/a.py": "def a(x):\n    if x is None:\n        return 0\n    return x\n"}
    )
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path), out)
    return out


def _experiment(tmp_path: Path, corpus: Path, reviewer: str, extra: str = "") -> Path:
    path = tmp_path / "experiment.toml"
    path.write_text(f"corpus = {json.dumps(str(corpus))}\nrepeats = 2\nseed = 1\n"
                    f'[[condition]]\nname = "A"\nreviewer = {reviewer}\n{extra}')  # fmt: skip
    return path


def test_a_second_run_on_the_same_directory_is_refused(tmp_path, corpus, cli):
    started = tmp_path / "started"
    script = tmp_path / "slow.py"
    script.write_text(f"import pathlib, sys, time\nsys.stdin.read()\npathlib.Path({str(started)!r}).touch()\n"
                      "time.sleep(30)\nprint('NO_ISSUES')\n")  # fmt: skip
    reviewer = f'{{ kind = "command", command = {json.dumps(f"{sys.executable} {script}")}, sandbox = false, network = true }}'
    experiment = _experiment(tmp_path, corpus, reviewer, "timeout_s = 60\n")
    rundir = tmp_path / "runs"
    first = subprocess.Popen([sys.executable, "-m", "reviewbench", "run", str(experiment), "--out", str(rundir)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_sigint)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.1)
        second = cli("run", experiment, "--out", rundir)
        second.one_line_error("in use by pid", str(rundir))
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    # The lock went with its holder: the directory resumes.
    script.write_text("import sys\nsys.stdin.read()\nprint('NO_ISSUES')\n")
    resumed = cli("run", experiment, "--out", rundir, "--json")
    assert resumed.code == 0, resumed.err


def test_an_edited_prompt_or_guidance_file_is_not_mixed_into_earlier_runs(tmp_path, corpus, cli):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Review this {language} change. Answer NO_ISSUES if it is fine.\n")
    guidance = tmp_path / "rules.md"
    guidance.write_text("Be brief.\n")
    experiment = _experiment(tmp_path, corpus, '{ kind = "silent" }',
                             f'prompt = "{prompt.name}"\nguidance = "{guidance.name}"\n')  # fmt: skip
    rundir = tmp_path / "runs"
    assert cli("run", experiment, "--out", rundir).code == 0
    assert cli("run", experiment, "--out", rundir).code == 0  # unchanged: resumes
    prompt.write_text("Review this {language} change harshly.\n")
    cli("run", experiment, "--out", rundir).one_line_error("prompt or guidance")
    prompt.write_text("Review this {language} change. Answer NO_ISSUES if it is fine.\n")
    guidance.write_text("Be thorough.\n")
    cli("run", experiment, "--out", rundir).one_line_error("prompt or guidance")


def test_oversized_or_special_prompt_files_are_refused(tmp_path, corpus, cli_process):
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * ((1 << 20) + 1))
    experiment = _experiment(tmp_path, corpus, '{ kind = "silent" }', f'prompt = "{big.name}"\n')
    cli_process("run", experiment, "--out", tmp_path / "r1").one_line_error("larger than 1 MiB")
    experiment = _experiment(tmp_path, corpus, '{ kind = "silent" }', 'guidance = "/dev/zero"\n')
    cli_process("run", experiment, "--out", tmp_path / "r2").one_line_error("not a regular file")


def test_a_hand_edited_registration_is_one_line(tmp_path, corpus, cli):
    experiment = _experiment(tmp_path, corpus, '{ kind = "silent" }')
    rundir = tmp_path / "runs"
    assert cli("register", experiment, "--out", rundir).code == 0
    registration = rundir / "registration.json"
    data = json.loads(registration.read_text())
    for damage in (lambda d: d["versions"][-1]["frozen"].pop("gates"),
                   lambda d: d["versions"][-1]["frozen"]["seeds"].update(bootstrap="zero"),
                   lambda d: d.update(versions=[])):  # fmt: skip
        edited = json.loads(json.dumps(data))
        damage(edited)
        registration.write_text(json.dumps(edited))
        cli("run", experiment, "--out", rundir).one_line_error("not a readable registration")
        cli("score", rundir).one_line_error()
    registration.write_text("{")
    cli("run", experiment, "--out", rundir).one_line_error("not a readable registration")


def test_a_negative_bootstrap_seed_is_refused(tmp_path, corpus, cli):
    experiment = _experiment(tmp_path, corpus, '{ kind = "silent" }')
    result = cli("register", experiment, "--out", tmp_path / "runs", "--bootstrap-seed", "-1")
    assert result.code == 2
    result.one_line_error("bootstrap-seed")
    assert not (tmp_path / "runs" / "registration.json").exists()


@pytest.mark.parametrize("line,field", [('repeats = "3"', "repeats"), ("seed = 1.5", "seed"),
                                        ("rename = 1", "rename")])  # fmt: skip
def test_experiment_fields_are_strictly_typed(tmp_path, corpus, cli, line, field):
    path = tmp_path / "experiment.toml"
    path.write_text(f'corpus = {json.dumps(str(corpus))}\n{line}\n[[condition]]\nname = "A"\n'
                    'concurrency = 2\nreviewer = { kind = "silent" }\n')  # fmt: skip
    result = cli("run", path, "--out", tmp_path / "runs")
    assert result.code == 2
    result.one_line_error(field)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_gates_with_non_finite_values_are_refused(tmp_path, corpus, cli, value):
    gates = tmp_path / "gates.toml"
    gates.write_text(f'[fallback]\nname = "none"\n[[tier]]\nname = "t"\n'
                     f'when = [{{ metric = "recall", op = ">=", value = {value} }}]\n')  # fmt: skip
    experiment = _experiment(tmp_path, corpus, '{ kind = "silent" }')
    result = cli("register", experiment, "--out", tmp_path / "runs", "--gates", gates)
    result.one_line_error("finite")
