"""Attacks 6, 7 and 16: every command's human output, on names that look like rich markup.

A repository file ``lib[/x].py``, a corpus directory ``cc[/x]`` and a condition named
``c[red]red`` must print as themselves; ``runs`` prints its table; ``mine`` counts commits
and rename variants apart.
"""

from __future__ import annotations

import json

import pytest

SOURCE = (
    "def clamp(v, lo, hi):\n    return max(lo, min(v, hi))\n\n\ndef scale(v):\n    return v * 2\n"
)
FIXED = "def clamp(v, lo, hi):\n    if lo > hi:\n        lo, hi = hi, lo\n    return max(lo, min(v, hi))\n\n\ndef scale(v):\n    return v * 2\n"
TESTS = "from importlib import import_module\n\n\ndef test_clamp():\n    m = import_module('lib[/x]')\n    assert m.clamp(5, 0, 3) == 3\n"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A repository with markup-like names, mined, validated, run, scored (module-wide)."""
    from tests.conftest import GitRepo

    root = tmp_path_factory.mktemp("markup")
    repo = GitRepo(root / "repo")
    repo.commit("init", {"lib[/x].py": SOURCE, "test_lib.py": TESTS})
    repo.commit("fix c[red]red clamp order", {"lib[/x].py": FIXED})
    return root, repo


def test_every_command_prints_markup_like_names_as_themselves(world, cli):
    root, repo = world
    corpus = root / "cc[/x]"
    mined = cli("mine", repo.path, "--out", corpus, "--controls-ratio", "0")
    assert mined.code == 0, mined.err
    assert "cc[/x]" in mined.out and mined.err == ""
    shown = cli("show", corpus, "--cases")
    assert shown.code == 0, shown.err
    assert "lib[/x].py" in shown.out and "cc[/x]" in shown.out
    validated = cli(
        "validate", corpus, "--test-cmd", "python -m pytest -q -p no:cacheprovider", "--jobs", "1"
    )
    assert validated.code == 0, validated.err
    assert "Validated " in validated.out and "lib[/x].py" not in validated.err
    experiment = root / "experiment.toml"
    script = root / "review.py"
    script.write_text("print('lib[/x].py:2 high c[red]red [bold]order[/bold] of bounds')\n")
    reviewer = f"python {script}"
    assert cli("experiment", "init", root / "template[x].toml").code == 0
    experiment.write_text(
        f"corpus = {json.dumps(str(corpus))}\nrepeats = 1\nseed = 1\n"
        '[[condition]]\nname = "flag"\nreviewer = { kind = "flag_all" }\n'
        # Not a sandbox test: the script and the interpreter live where the sandbox hides.
        f'[[condition]]\nname = "told"\nreviewer = {{ kind = "command", command = {json.dumps(reviewer)}, sandbox = false, network = true }}\n'
    )
    rundir = root / "runs[/x]"
    registered = cli("register", experiment, "--out", rundir)
    assert registered.code == 0, registered.err
    ran = cli("run", experiment, "--out", rundir)
    assert ran.code == 0, ran.err
    assert "runs[/x]" in ran.out
    runs = cli("runs", rundir)  # attack 6: the table crashed on every run directory
    assert runs.code == 0, runs.err
    assert "told" in runs.out and "completed_findings" in runs.out
    scored = cli("score", rundir)
    assert scored.code == 0, scored.err
    assert "told" in scored.out and "runs[/x]" in scored.out
    reported = cli("report", rundir)
    assert reported.code == 0, reported.err
    exported = cli("export", rundir, "--format", "csv")
    assert exported.code == 0 and "told" in exported.out, exported.err
    jsonl = cli("export", rundir)
    assert "c[red]red [bold]order[/bold]" in jsonl.out


def test_mine_counts_commits_and_rename_variants_apart(git_repo, tmp_path, cli):
    repo = git_repo()
    body = "".join(
        f"def f{i}(value):\n    total = value + {i}\n    return total\n\n\n" for i in range(6)
    )
    repo.commit("init", {"pkg/a.py": body, "pkg/b.py": body})
    repo.commit("fix a", {"pkg/a.py": body.replace("value + 1", "value - 1")})
    repo.commit("fix b", {"pkg/b.py": body.replace("value + 2", "value * 2")})
    repo.commit("fix the intro", {"README.md": "x\n"})
    out = tmp_path / "corpus"
    mined = cli("mine", repo.path, "--out", out, "--rename", "--json")
    assert mined.code == 0, mined.err
    data = json.loads(mined.out)
    human = cli("show", out)
    assert human.code == 0
    table = cli("mine", repo.path, "--out", tmp_path / "again", "--rename")
    assert table.code == 0, table.err
    lines = [[p for p in line.split() if p != "│"] for line in table.out.splitlines()]
    total = next(int(parts[1]) for parts in lines if parts and parts[0] == "total")
    case_row = next(int(parts[1]) for parts in lines if parts and parts[0] == "case")
    variants = data["by_stratum"]["fix_reversal"] - case_row
    assert total == data["matched_commits"] == 3, table.out
    assert variants >= 1 and f"plus {variants} rename variants" in table.out, table.out
