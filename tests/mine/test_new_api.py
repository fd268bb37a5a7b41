"""A candidate that adds an API its own tests call is a feature, not a fix (docs/MINING.md).

Reversing such a commit fails its tests exactly as reversing a fix does (the names they
call are gone), so the validity gate cannot tell the two apart; the diff can.
"""

from __future__ import annotations

import json

import pytest

from reviewbench import MineConfig, mine_corpus, read_corpus
from reviewbench.mine.signals import NewApi, introduced_api
from reviewbench.store.corpus import read_dropped

from ..conftest import run_cli

WORDS = '''\
def split_words(text):
    return text.split(" ")


def shout(text):
    return text.upper()
'''

TEST = '''\
from words import split_words, shout


def test_split():
    assert split_words("a b") == ["a", "b"]
'''


@pytest.fixture
def base(git_repo):
    repo = git_repo("project")
    repo.commit("Initial import", {"words.py": WORDS, "tests/test_words.py": TEST, "one.py": "def one():\n    return 1\n"})
    repo.commit("Fix one", {"one.py": "def one():\n    return int(1)\n"})  # so that every corpus has a case
    return repo


def _mine(repo, out, **options):
    mine_corpus(MineConfig(repo=repo.path, mirrors=False, controls_ratio=0, **options), out)
    corpus = read_corpus(out)
    return {g.provenance.commit for g in corpus.gold}, {d.commit: d for d in read_dropped(out)}, corpus


def test_a_new_public_function_its_tests_call_is_no_fix(base, tmp_path):
    # Rewrites an existing line and edits the existing test file (test_coedit), and the
    # squash body says "fix" (message): both signals take it, the new API drops it.
    sha = base.commit("Let shout whisper too\n\n* fix the punctuation of shout", {
        "words.py": WORDS.replace("return text.upper()", "return text.upper() + '!'")
        + "\n\ndef whisper(text):\n    return text.lower()\n",
        "tests/test_words.py": TEST.replace("shout", "shout, whisper")
        + "\n\ndef test_whisper():\n    assert whisper('A') == 'a'\n",
    })  # fmt: skip
    cases, dropped, corpus = _mine(base, tmp_path / "c")
    assert sha not in cases
    assert dropped[sha].reason == "new_api"
    assert dropped[sha].detail == "adds `whisper`, which its tests call"
    assert set(dropped[sha].selected_by) == {"message", "test_coedit"}
    assert corpus.meta.counts.dropped["new_api"] == 1


def test_a_new_keyword_or_option_its_tests_use_is_no_fix(base, tmp_path):
    kwarg = base.commit("Let split_words take a separator", {
        "words.py": WORDS.replace('def split_words(text):\n    return text.split(" ")',
                                  'def split_words(text, separator=" "):\n    return text.split(separator)'),
        "tests/test_words.py": TEST + '\n\ndef test_sep():\n    assert split_words("a,b", separator=",") == ["a", "b"]\n',
    })  # fmt: skip
    now = (base.path / "words.py").read_text()
    cli = now.replace(
        'def shout(text):\n    return text.upper()',
        'def shout(text):\n    return text.upper()\n\n\ndef parser(p):\n    p.add_argument("-l", "--lower")'
        "\n    return p",
    )
    test_now = (base.path / "tests/test_words.py").read_text()
    flag = base.commit("Make the parser take a lower option", {
        "words.py": cli.replace('return text.split(separator)', 'return text.split(separator or " ")'),
        "tests/test_words.py": test_now + '\n\ndef test_lower(run):\n    assert run("--lower")\n',
    })  # fmt: skip
    _, dropped, _ = _mine(base, tmp_path / "c")
    assert dropped[kwarg].detail == "adds `separator`, which its tests call"
    assert dropped[flag].detail == "adds `--lower`, which its tests call"


def test_what_a_fix_adds_beside_its_repair_keeps_it(base, tmp_path):
    kept = {}
    # The subject says "fix": a helper the regression test calls does not make it a feature.
    kept["says_fix"] = base.commit("Fix shout on very long text", {
        "words.py": WORDS.replace("return text.upper()", "return text[:max_length()].upper()")
        + "\n\ndef max_length():\n    return 255\n",
        "tests/test_words.py": TEST + "\n\ndef test_long():\n    from words import max_length\n"
        "    assert len(shout('a' * 300)) == max_length()\n",
    })  # fmt: skip
    now, test_now = (base.path / "words.py").read_text(), (base.path / "tests/test_words.py").read_text()
    # A clear error instead of a crash: the new exception its test expects is no new API.
    kept["error"] = base.commit("Refuse empty text in split_words", {
        "words.py": "class EmptyText(ValueError):\n    pass\n\n\n" + now.replace(
            '    return text.split(" ")', '    if not text:\n        raise EmptyText(text)\n    return text.split()'),
        "tests/test_words.py": test_now + "\n\ndef test_empty():\n    import pytest, words\n"
        "    with pytest.raises(words.EmptyText):\n        split_words('')\n",
    })  # fmt: skip
    now, test_now = (base.path / "words.py").read_text(), (base.path / "tests/test_words.py").read_text()
    # A private helper, and a name the old code already had (a class replacing a function).
    kept["private"] = base.commit("Strip before shouting", {
        "words.py": now.replace("return text[:max_length()].upper()", "return _clean(text)[:max_length()].upper()")
        + "\n\ndef _clean(text):\n    return text.strip()\n",
        "tests/test_words.py": test_now + "\n\ndef test_clean():\n    from words import _clean\n"
        "    assert _clean(' a ') == 'a'\n",
    })  # fmt: skip
    now, test_now = (base.path / "words.py").read_text(), (base.path / "tests/test_words.py").read_text()
    kept["moved"] = base.commit("Make max_length a class attribute", {
        "words.py": now.replace("def max_length():\n    return 255\n", "class max_length(int):\n    pass\n")
        .replace("text[:max_length()]", "text[:max_length(255)]"),
        "tests/test_words.py": test_now.replace("== max_length()", "== max_length(255)"),
    })  # fmt: skip
    cases, dropped, _ = _mine(base, tmp_path / "c")
    assert set(kept.values()) <= cases, {k: dropped.get(v) for k, v in kept.items()}


def test_the_limit_counts_cases_not_vetoed_candidates(base, tmp_path):
    fixes, expr = [], "text.upper()"

    def rewrite(source: str) -> str:
        nonlocal expr
        old, expr = expr, f"({expr})"
        return source.replace(f"return {old}", f"return {expr}")

    for i in range(3):
        now, test_now = (base.path / "words.py").read_text(), (base.path / "tests/test_words.py").read_text()
        fixes.append(base.commit(f"Fix shout {i}", {
            "words.py": rewrite(now),
            "tests/test_words.py": test_now + f"\n# regression {i}\n",
        }))  # fmt: skip
        now, test_now = (base.path / "words.py").read_text(), (base.path / "tests/test_words.py").read_text()
        base.commit(f"Let shout whisper {i}", {
            "words.py": rewrite(now) + f"\n\ndef whisper{i}(text):\n    return text.lower()\n",
            "tests/test_words.py": test_now + f"\n\ndef test_w{i}():\n    from words import whisper{i}\n"
            f"    assert whisper{i}('A') == 'a'\n",
        })  # fmt: skip
    cases, dropped, corpus = _mine(base, tmp_path / "c", limit=2)
    assert cases == set(fixes[1:])
    assert corpus.meta.counts.dropped["new_api"] == 2  # the two newer than the second case
    assert corpus.meta.counts.matched_commits == 4  # the walk stopped at the second case


def test_why_says_which_name(base, tmp_path):
    sha = base.commit("Let shout whisper too", {
        "words.py": WORDS.replace("return text.upper()", "return text.upper() + '!'")
        + "\n\ndef whisper(text):\n    return text.lower()\n",
        "tests/test_words.py": TEST + "\n\ndef test_whisper():\n    from words import whisper\n"
        "    assert whisper('A') == 'a'\n",
    })  # fmt: skip
    out = tmp_path / "c"
    assert run_cli("mine", base.path, "--out", out, "--controls-ratio", "0", "--no-mirrors").returncode == 0
    proc = run_cli("show", out, "--why", sha[:10], "--json")
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["outcome"] == "dropped"
    assert answer["reasons"] == ["taken by test_coedit, dropped: new_api (adds `whisper`, which its tests call)"]
    listing = run_cli("show", out, "--dropped")
    assert "new_api" in listing.stdout and "whisper" in listing.stdout


@pytest.mark.parametrize(("fix_added", "parent_source", "tests_added", "expected"), [
    (["def whisper(text):"], "def shout(text): pass", ["whisper('a')"], NewApi("whisper")),
    (["    def whisper(self):"], "", ["x.whisper()"], NewApi("whisper")),
    (["class Whisper:"], "", ["Whisper()"], NewApi("Whisper")),
    (["def whisper(text):"], "", ["shout('a')"], None),  # its tests never call it
    (["def _whisper(text):"], "", ["_whisper('a')"], None),  # private
    (["class Quiet(ValueError):"], "", ["raises(Quiet)"], None),  # an exception
    (["class QuietError:"], "", ["raises(QuietError)"], None),
    (["def whisper(text):"], "whisper = None", ["whisper('a')"], None),  # the old code had the name
    (["    cmd = ['fish', '--version']"], "", ["'--version'"], None),  # an argument, not an option
    (['    parser.add_argument("-q", "--quiet")'], "", ["main(['--quiet'])"], NewApi("--quiet")),
    (["    network.add_argument(", "        '--max-headers',"], "", ["http('--max-headers=1')"], NewApi("--max-headers")),
    (["def f(a, *, quiet=False):"], "def f(a):", ["f(1, quiet=True)"], None),  # f's old line not removed
])  # fmt: skip
def test_introduced_api_by_hand(fix_added, parent_source, tests_added, expected):
    assert introduced_api(fix_added, [], parent_source, tests_added, "python") == expected


def test_a_new_keyword_needs_the_old_signature_removed():
    assert introduced_api(["def f(a, *, quiet=False):"], ["def f(a):"], "def f(a):", ["f(1, quiet=True)"],
                          "python") == NewApi("quiet")  # fmt: skip
    # A renamed parameter the old code already used elsewhere is not new.
    assert introduced_api(["def f(a, quiet=False):"], ["def f(a):"], "def f(a):\nquiet = 1", ["f(1, quiet=1)"],
                          "python") is None  # fmt: skip


def test_javascript_exports():
    assert introduced_api(["export function whisper(text) {"], [], "", ["expect(whisper('A'))"],
                          "javascript") == NewApi("whisper")  # fmt: skip
    assert introduced_api(["const whisper = (text) => text.toLowerCase()"], [], "", ["whisper('A')"],
                          "typescript") == NewApi("whisper")  # fmt: skip
