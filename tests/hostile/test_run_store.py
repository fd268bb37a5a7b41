"""Attack 15 on run stores: a damaged ``runs.sqlite`` is one line for every read command,
and a read command never changes (or repairs) the file; plus exports that go wrong."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from reviewbench import MineConfig, mine_corpus

READERS = (("runs",), ("export", "--format", "csv"), ("score",), ("report",))


@pytest.fixture(scope="module")
def rundir(tmp_path_factory) -> Path:
    from tests.conftest import GitRepo

    root = tmp_path_factory.mktemp("store")
    repo = GitRepo(root / "repo")
    repo.commit("init", {"app/a.py": "def a(x):\n    return x\n"})
    repo.commit(
        "fix a", {"app/a.py": "def a(x):\n    if x is None:\n        return 0\n    return x\n"}
    )
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0), root / "corpus")
    script = root / "review.py"
    script.write_text(
        "import sys\nsys.stdin.read()\nprint('app/a.py:2 high =HYPERLINK(\"http://x\") check None')\n"
    )
    experiment = root / "experiment.toml"
    experiment.write_text(f"corpus = {json.dumps(str(root / 'corpus'))}\nrepeats = 1\n"
                          f'[[condition]]\nname = "A"\nreviewer = {{ kind = "command", command = "python {script}", sandbox = false, network = true }}\n'
                          '[[condition]]\nname = "B"\nretries = 0\nreviewer = { kind = "openai", '
                          'base_url = "http://127.0.0.1:9/v1", model = "=1+1", api_key_env = "" }\n')  # fmt: skip
    from tests.hostile.conftest import run_inproc

    result = run_inproc("run", experiment, "--out", root / "runs", "--no-endpoint-check")
    # B is unreachable on purpose (its failed runs are part of the store under test): the
    # runs are recorded, and the exit status says no answer came from B.
    assert result.code == 1 and "every run of condition B failed" in result.err, result.err
    return root / "runs"


def _copy(rundir: Path, tmp_path: Path) -> Path:
    out = tmp_path / "copy"
    shutil.copytree(rundir, out)
    return out


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _damage_sql(statement: str):
    def damage(db_path: Path) -> None:
        db = sqlite3.connect(db_path)
        db.execute(statement)
        db.commit()
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()

    return damage


def _corrupt_pages(db_path: Path) -> None:
    _damage_sql("PRAGMA user_version = 1")(db_path)
    data = bytearray(db_path.read_bytes())
    page = 4096
    for offset in range(page, len(data), page):  # every page but the header's
        data[offset + 8 : offset + 64] = b"\xff" * 56
    db_path.write_bytes(bytes(data))


DAMAGE = {
    "unknown severity": _damage_sql("UPDATE findings SET severity = 'critical'"),
    "dropped table": _damage_sql("DROP TABLE findings"),
    "corrupt pages": _corrupt_pages,
    "not sqlite": lambda p: p.write_bytes(b"hello, this is not a database\n" * 200),
}


@pytest.mark.parametrize("name", sorted(DAMAGE))
def test_a_damaged_store_is_one_line_and_left_as_it_is(rundir, tmp_path, cli, name):
    copy = _copy(rundir, tmp_path)
    db = copy / "runs.sqlite"
    DAMAGE[name](db)
    before = _digest(db)
    for args in READERS:
        result = cli(args[0], copy, *args[1:])
        result.one_line_error()
        assert "runs.sqlite" in result.err, (args, result.err)
        assert _digest(db) == before, args  # never repaired, never re-created
    if name == "dropped table":
        tables = {r[0] for r in sqlite3.connect(db).execute("SELECT name FROM sqlite_master")}
        assert "findings" not in tables


def test_export_csv_defuses_formulas(rundir, cli):
    result = cli("export", rundir, "--format", "csv")
    assert result.code == 0, result.err
    assert ",'=1+1," in result.out and ",=1+1," not in result.out, result.out
    jsonl = cli("export", rundir)
    assert '"model_requested": "=1+1"' in jsonl.out  # JSON keeps the text as it came


def test_export_into_a_directory_or_a_missing_folder_is_one_line(rundir, tmp_path, cli):
    cli("export", rundir, "--out", tmp_path).one_line_error(str(tmp_path))
    cli("export", rundir, "--out", tmp_path / "no" / "such" / "file.jsonl").one_line_error(
        "No such file"
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_names_the_file(rundir, cli):
    cli("export", rundir, "--out", "/dev/full").one_line_error(
        "no space left on device at /dev/full"
    )
