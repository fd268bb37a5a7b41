"""Issue 25 item 9: a reviewer inside the output cap that prints tens of thousands of findings.

40,329 findings for one case fit in 1 MiB: scoring coped, but the label page of that packet
was 132 MB and the raters' work exploded. A review run keeps at most its reviewer table's
``max_findings`` (default 200); past it the run is ``invalid`` with a note naming the cap,
like ``max_output_bytes``: the text is kept as the raw output, no finding is stored, nothing
is cached, and a resume does not ask again.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus
from reviewbench.cli.schema import json_schema
from reviewbench.config.reviewers import CommandConfig, OpenAIConfig, SarifConfig


@pytest.fixture
def corpus(git_repo, tmp_path) -> Path:
    repo = git_repo()
    repo.commit("init", {"app/a.py": "def a(x):\n    return x\n"})
    repo.commit("fix a", {"app/a.py": "def a(x):\n    if x is None:\n        return 0\n    return x\n"})
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path), out)
    return out


def _experiment(tmp_path: Path, corpus: Path, count: int, cap: str = "") -> Path:
    script = tmp_path / "many.py"
    script.write_text("import sys\nsys.stdin.read()\n"
                      f"sys.stdout.write(''.join(f'app/a.py:1 high f{{i}}\\n' for i in range({count})))\n")  # fmt: skip
    command = json.dumps(f"{sys.executable} {script}")
    path = tmp_path / "experiment.toml"
    path.write_text(f"corpus = {json.dumps(str(corpus))}\nrepeats = 1\nseed = 1\n"
                    f'[[condition]]\nname = "many"\ntimeout_s = 120\n'
                    f'reviewer = {{ kind = "command", command = {command}, sandbox = false, network = true{cap} }}\n')  # fmt: skip
    return path


def _rows(rundir: Path) -> tuple[list[tuple], int, int]:
    db = sqlite3.connect(rundir / "runs.sqlite")
    try:
        rows = db.execute("SELECT state, error, raw_output FROM runs").fetchall()
        findings = db.execute("SELECT count(*) FROM findings").fetchone()[0]
        cache = db.execute("SELECT count(*) FROM cache").fetchone()[0]
    finally:
        db.close()
    return rows, findings, cache


def test_the_default_cap_is_200_findings_and_it_is_configurable():
    assert CommandConfig(kind="command", command="true").max_findings == 200
    assert OpenAIConfig(kind="openai", model="m").max_findings == 200
    assert SarifConfig(kind="sarif", command="x", max_findings=5).max_findings == 5
    with pytest.raises(ValueError):
        CommandConfig(kind="command", command="true", max_findings=0)
    experiment = json_schema("experiment")
    field = experiment["$defs"]["CommandConfig"]["properties"]["max_findings"]
    assert field["default"] == 200 and field["minimum"] == 1


def test_forty_thousand_findings_inside_the_byte_cap_make_an_invalid_run(tmp_path, corpus, cli):
    experiment = _experiment(tmp_path, corpus, 40_329)  # 927 KB: inside max_output_bytes
    rundir = tmp_path / "runs"
    result = cli("run", experiment, "--out", rundir, "--json")
    assert "Traceback" not in result.err
    rows, findings, cache = _rows(rundir)
    assert rows and all(state == "invalid" for state, _, _ in rows)
    for _, error, raw in rows:
        assert "40329 findings" in error and "max_findings" in error and "200" in error
        assert raw.startswith("app/a.py:1 high f0\n")  # the answer is kept, as the byte cap keeps its head
    assert findings == 0 and cache == 0  # nothing for raters, nothing replayed
    again = cli("run", experiment, "--out", rundir, "--json")
    assert json.loads(again.out)["requests"] == 0  # ended: a resume does not ask again


def test_exactly_the_cap_is_a_review_and_one_finding_more_is_not(tmp_path, corpus, cli):
    at_cap = _experiment(tmp_path, corpus, 7, ", max_findings = 7")
    assert cli("run", at_cap, "--out", tmp_path / "r1").code == 0
    rows, findings, _ = _rows(tmp_path / "r1")
    assert {state for state, _, _ in rows} == {"completed_findings"} and findings == 7 * len(rows)
    past = _experiment(tmp_path, corpus, 8, ", max_findings = 7")
    cli("run", past, "--out", tmp_path / "r2")
    rows, findings, _ = _rows(tmp_path / "r2")
    assert {state for state, _, _ in rows} == {"invalid"} and findings == 0
    assert all("8 findings" in error and "max_findings" in error for _, error, _ in rows)
