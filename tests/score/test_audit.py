"""``reviewbench audit`` on a real mined and validated repository: the probes earn nothing,
the verdict reaches ``score``; bad input is one line."""

from __future__ import annotations

import json

from reviewbench import MineConfig, mine_corpus
from reviewbench.config import ValidateConfig
from reviewbench.validate import validate_corpus

LIB = "def clamp(value, low, high):\n    return max(low, min(value, high)){extra}\n\n\ndef scale(amount, factor):\n    return amount * factor{scale}\n"
TEST = ("from lib import clamp, scale\n\n\ndef test_clamp():\n    assert clamp(5, 0, 3) == 3\n    assert clamp(-1, 0, 3) == 0\n\n\n"
        "def test_scale():\n    assert scale(-2, 3) == 6\n")  # fmt: skip


def _corpus(git_repo, tmp_path):
    repo = git_repo()
    repo.commit("init", {"lib.py": LIB.format(extra="", scale=""), "tests/test_lib.py": "def test_ok():\n    pass\n"})
    repo.commit("fix scale of negative amounts", {"lib.py": LIB.format(extra="", scale=" if amount >= 0 else -amount * factor"),
                                                   "tests/test_lib.py": TEST})  # fmt: skip
    out = tmp_path / "corpus"
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=1.0), out)
    validate_corpus(out, ValidateConfig(jobs=1, timeout=60))
    return out


def test_the_probes_are_credited_with_nothing_and_score_prints_the_verdict(git_repo, tmp_path, cli):
    corpus = _corpus(git_repo, tmp_path)
    done = cli("audit", corpus, "--json")
    assert done.code == 0, done.stderr
    audit = json.loads(done.stdout)
    assert set(audit["probes"]) == {"namer", "quoter", "shape"}
    for name, probe in audit["probes"].items():
        assert probe["discriminating"]["num"] == 0, name  # naming that holds for the mirror is no credit
        assert probe["discriminating"]["den"] == probe["named"]["den"] == 1, name  # one fix, paired with its mirror
    assert audit["probes"]["namer"]["named"]["num"] == 0  # it names `scale`: where, never what
    assert (corpus / "audit.json").is_file()
    assert json.loads((corpus / "audit.json").read_text())["sound"] == audit["sound"]
    text = cli("audit", corpus)
    assert text.code == 0 and "matcher audit:" in text.stdout and "namer" in text.stdout


def test_bad_input_is_one_line(tmp_path, cli, git_repo):
    missing = cli("audit", tmp_path / "nowhere")
    assert missing.code != 0 and missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr
    repo = git_repo()
    repo.commit("init", {"lib.py": "x = 1\n"})
    repo.commit("fix x", {"lib.py": "x = 2\n"})
    mine_corpus(MineConfig(repo=repo.path, controls_ratio=0), tmp_path / "raw")
    unvalidated = cli("audit", tmp_path / "raw")
    assert unvalidated.code != 0 and unvalidated.stderr.count("\n") == 1
    assert "no validated case to audit" in unvalidated.stderr and "validate" in unvalidated.stderr
