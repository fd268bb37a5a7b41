"""The tolerant review parser: one test per output style, NO_ISSUES variants, garbage."""

from __future__ import annotations

import json
import random

import pytest

from reviewbench.records import Severity
from reviewbench.review.parse import ParsedReview, parse_review, severity_from_word

LOW, MED, HIGH = Severity.LOW, Severity.MED, Severity.HIGH


def located(review: ParsedReview) -> list[tuple]:
    return [(f.path, f.line, f.severity, f.claim) for f in review.findings]


def test_frozen_format():
    text = "src/app.py:12 high off-by-one in the loop bound\nsrc/util.py:3 low unused variable"
    review = parse_review(text)
    assert located(review) == [
        ("src/app.py", 12, HIGH, "off-by-one in the loop bound"),
        ("src/util.py", 3, LOW, "unused variable"),
    ]
    assert review.findings[0].raw == "src/app.py:12 high off-by-one in the loop bound"
    assert (review.no_issues, review.unparsed) == (False, ())


def test_markdown_bullets_bold_and_backticks():
    text = """\
- `src/app.py:12` **high** off-by-one
* **src/app.py**:13 — med — missing None check
1. src/app.py:14 `low` naming
2) **HIGH** `src/app.py:15`: crash on empty input
> - [ ] src/app.py:16 Medium: slow path
"""
    assert located(parse_review(text)) == [
        ("src/app.py", 12, HIGH, "off-by-one"),
        ("src/app.py", 13, MED, "missing None check"),
        ("src/app.py", 14, LOW, "naming"),
        ("src/app.py", 15, HIGH, "crash on empty input"),
        ("src/app.py", 16, MED, "slow path"),
    ]


def test_code_fence_lines_are_ignored_and_their_content_parsed():
    text = "Here is my review:\n```text\nsrc/a.py:3 high boom\n```\n~~~\nsrc/a.py:4 med bang\n~~~\nThanks!"
    review = parse_review(text)
    assert located(review) == [("src/a.py", 3, HIGH, "boom"), ("src/a.py", 4, MED, "bang")]
    assert review.unparsed == ("Here is my review:", "Thanks!")


def test_seed_001_at_line_style_uses_the_only_changed_path():
    text = "@12 [severity:high] off-by-one in total\n@L30-32 [severity:low] style"
    assert located(parse_review(text, paths=["src/cart.js"])) == [
        ("src/cart.js", 12, HIGH, "off-by-one in total"),
        ("src/cart.js", 30, LOW, "style"),
    ]
    assert located(parse_review(text, paths=["a.js", "b.js"]))[0] == (
        None,
        12,
        HIGH,
        "off-by-one in total",
    )
    assert located(parse_review(text))[0][0] is None


def test_line_only_findings_under_a_file_header_take_its_path():
    text = (
        "### src/b.py\n- Line 3: low: thing\n- line 9 (high): other\n**src/c.py**\n- L4: med: third"
    )
    review = parse_review(text, paths=["src/b.py", "src/c.py"])
    assert located(review) == [
        ("src/b.py", 3, LOW, "thing"),
        ("src/b.py", 9, HIGH, "other"),
        ("src/c.py", 4, MED, "third"),
    ]
    assert review.unparsed == ()


def test_unused_file_header_is_kept_as_unparsed():
    assert parse_review("src/b.py\nLooks fine to me.").unparsed == ("src/b.py", "Looks fine to me.")
    review = parse_review("### src/a.py\nHmm.\n### src/b.py\n@3 high x\nsrc/c.py:1 low y")
    assert review.unparsed == ("### src/a.py", "Hmm.")
    assert [(f.path, f.line) for f in review.findings] == [("src/b.py", 3), ("src/c.py", 1)]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("src/a.py:12:5 medium col given", ("src/a.py", 12, MED, "col given")),
        ("src/a.py:12-14 high range", ("src/a.py", 12, HIGH, "range")),
        ("src/a.py:L12 high L prefix", ("src/a.py", 12, HIGH, "L prefix")),
        ("src/a.py#L12-L14 minor github anchor", ("src/a.py", 12, LOW, "github anchor")),
        ("src/a.py line 12 critical words", ("src/a.py", 12, HIGH, "words")),
        ("src/a.py, line 12: warning: comma", ("src/a.py", 12, MED, "comma")),
        ("src/a.py (line 12): [error] parens", ("src/a.py", 12, HIGH, "parens")),
        ("src/a.py at lines 3-4 - moderate - at lines", ("src/a.py", 3, MED, "at lines")),
        ("Makefile:3 high no extension", ("Makefile", 3, HIGH, "no extension")),
        ("./src/a.py:2 high dot slash", ("src/a.py", 2, HIGH, "dot slash")),
    ],
)
def test_location_variants(line, expected):
    assert located(parse_review(line)) == [expected]


@pytest.mark.parametrize(
    ("word", "severity"),
    [
        ("low", LOW),
        ("LOW", LOW),
        ("minor", LOW),
        ("info", LOW),
        ("nit", LOW),
        ("note", LOW),
        ("med", MED),
        ("Medium", MED),
        ("moderate", MED),
        ("warning", MED),
        ("major", MED),
        ("high", HIGH),
        ("critical", HIGH),
        ("ERROR", HIGH),
        ("blocker", HIGH),
        ("severe", HIGH),
        ("[severity:high]", HIGH),
        ("`high`", HIGH),
        ("bogus", None),
    ],
)
def test_severity_words(word, severity):
    assert severity_from_word(word) is severity


@pytest.mark.parametrize(
    ("line", "severity", "claim"),
    [
        ("src/a.py:1 Error handling is missing", None, "Error handling is missing"),
        ("src/a.py:1 error: x may be None", HIGH, "x may be None"),
        ("src/a.py:1 Warning signs ignored", None, "Warning signs ignored"),
        ("src/a.py:1 [warning] retry loop", MED, "retry loop"),
        ("src/a.py:1 high-level API misuse", HIGH, "-level API misuse"),
        ("src/a.py:1 highly unusual loop", None, "highly unusual loop"),
        ("src/a.py:1 loop never ends (severity: high)", HIGH, "loop never ends"),
        ("src/a.py:1 loop never ends", None, "loop never ends"),
        ("src/a.py:1 severe bug", HIGH, "bug"),  # not the label "sev" + "ere"
        ("src/a.py:1 Severity: medium bug", MED, "bug"),
    ],
)
def test_sentence_words_are_not_mistaken_for_severities(line, severity, claim):
    [finding] = parse_review(line).findings
    assert (finding.severity, finding.claim) == (severity, claim)


def test_file_level_finding_without_a_line():
    review = parse_review("src/a.py: the retry loop never gives up\nREADME.md - typo in heading")
    assert located(review) == [
        ("src/a.py", None, None, "the retry loop never gives up"),
        ("README.md", None, None, "typo in heading"),
    ]


def test_prose_with_colons_is_not_a_finding():
    text = "Summary: the change looks risky\nNote: see below\nhttp://example.com:8080/x is down\nL2 cache misses"
    review = parse_review(text)
    assert review.findings == ()
    assert review.unparsed == tuple(text.splitlines())


def test_markdown_table():
    text = (
        "| File | Line | Severity | Issue |\n|------|-----:|:--------:|-------|\n"
        "| `src/a.py` | 12 | High | off-by-one |\n| src/b.py:7 | | low | naming |"
    )
    review = parse_review(text)
    assert located(review) == [("src/a.py", 12, HIGH, "off-by-one"), ("src/b.py", 7, LOW, "naming")]
    assert review.unparsed == ("| File | Line | Severity | Issue |",)


def test_json_list_as_the_whole_text():
    items = [
        {"path": "src/a.py", "line": 3, "severity": "High", "claim": "boom"},
        {"file": "src/b.py", "start_line": "7", "level": "warning", "message": "bang"},
        {"filename": "src/c.py", "line_number": 2.0, "description": "no severity"},
        {"location": {"path": "src/d.py", "line": 9}, "issue": "nested", "priority": "critical"},
        {"path": "src/e.py:44", "comment": "line in the path"},
        {"unrelated": True},
    ]
    review = parse_review(json.dumps(items, indent=2))
    assert located(review) == [
        ("src/a.py", 3, HIGH, "boom"),
        ("src/b.py", 7, MED, "bang"),
        ("src/c.py", 2, None, "no severity"),
        ("src/d.py", 9, HIGH, "nested"),
        ("src/e.py", 44, None, "line in the path"),
    ]
    assert review.findings[0].raw == json.dumps(items[0])
    assert review.unparsed == ('{"unrelated": true}',)


def test_json_inside_a_fence_with_prose_around():
    text = (
        'I found these:\n```json\n{"findings": [{"file": "a.py", "line": 1, "severity": "low",'
        ' "message": "m"}]}\n```\nDone.'
    )
    review = parse_review(text)
    assert located(review) == [("a.py", 1, LOW, "m")]
    assert review.unparsed == ("I found these:", "Done.")


def test_json_lines_objects():
    text = '{"path": "a.py", "line": 1, "claim": "x"}\n{"path": "b.py", "line": 2, "claim": "y"}'
    assert [f.path for f in parse_review(text).findings] == ["a.py", "b.py"]


def test_empty_json_list_means_no_issues():
    for text in ("[]", "```json\n[]\n```", '{"findings": []}'):
        review = parse_review(text)
        assert (review.findings, review.no_issues, review.unparsed) == ((), True, ())


@pytest.mark.parametrize(
    "text",
    [
        "NO_ISSUES",
        "NO_ISSUES\n",
        "`NO_ISSUES`",
        "**NO_ISSUES**",
        "NO_ISSUES.",
        '"NO_ISSUES"',
        "- NO_ISSUES",
        "```\nNO_ISSUES\n```",
        "  NO_ISSUES  \n\n",
    ],
)
def test_no_issues_variants(text):
    assert parse_review(text) == ParsedReview(findings=(), no_issues=True, unparsed=())


def test_no_issues_token_inside_a_sentence_is_noted_and_the_line_kept():
    review = parse_review("Verdict: NO_ISSUES")
    assert review.no_issues and review.unparsed == ("Verdict: NO_ISSUES",)


@pytest.mark.parametrize("text", ["no_issues", "No issues found.", "NO_ISSUES_FOUND", "XNO_ISSUES"])
def test_no_issues_is_a_case_sensitive_token(text):
    review = parse_review(text)
    assert not review.no_issues and review.unparsed == (text,)


def test_no_issues_and_findings_keeps_the_findings():
    review = parse_review("NO_ISSUES\nsrc/a.py:3 high actually, this breaks")
    assert review.no_issues
    assert located(review) == [("src/a.py", 3, HIGH, "actually, this breaks")]


@pytest.mark.parametrize(
    "text",
    [
        "CLEAN",  # a prompt may ask: "If the code is correct, reply with exactly: CLEAN"
        "clean",
        "Clean.",
        "**CLEAN**",
        "`LGTM`",
        "LGTM",
        "lgtm!",
        "LGTM \N{THUMBS UP SIGN}",
        "- Lgtm.",
        "> CLEAN",
        '"CLEAN"',
        "Looks good to me!",
        "```\nCLEAN\n```",
        "\n  CLEAN  \n\n",
    ],
)
def test_explicit_clean_replies_are_silence(text):
    assert parse_review(text) == ParsedReview(findings=(), no_issues=True, unparsed=())


@pytest.mark.parametrize(
    "text",
    [
        "The code is clean.",
        "Clean up the file handle in read_file before returning",
        "LGTM overall, but the loop in total() skips the last element",
        "LGTM except for the boundary in clamp",
        "CLEANUP",
        "unclean",
        "Verdict: CLEAN",
        "Not LGTM",
        "looks good to me, apart from the missing close()",
    ],
)
def test_clean_words_inside_prose_are_not_silence(text):
    review = parse_review(text)
    assert not review.no_issues and review.findings == () and review.unparsed == (text,)


@pytest.mark.parametrize(
    "text",
    [
        "LGTM, but one thing:\nsrc/a.py:3 high off-by-one in the loop",
        "Clean overall, except:\n- src/a.py:3 high off-by-one in the loop",
        "src/a.py:3 high off-by-one in the loop -- otherwise LGTM",
    ],
)
def test_a_clean_word_beside_a_finding_is_not_silence(text):
    review = parse_review(text)
    assert not review.no_issues
    assert [(f.path, f.line, f.severity) for f in review.findings] == [("src/a.py", 3, HIGH)]


def test_a_clean_line_and_a_finding_keeps_the_finding():
    review = parse_review("CLEAN\nsrc/a.py:3 high actually, this breaks")
    assert located(review) == [("src/a.py", 3, HIGH, "actually, this breaks")]  # findings decide


def test_unparsed_lines_are_kept_in_order_and_blank_lines_dropped():
    text = "Great change!\n\n   \nsrc/a.py:1 low nit\nI also wonder about performance.\n---"
    review = parse_review(text)
    assert review.unparsed == ("Great change!", "I also wonder about performance.")
    assert len(review.findings) == 1


def test_diff_prefixes_are_dropped_for_known_paths():
    review = parse_review(
        "b/src/a.py:4 low x\na/src/a.py:5 low y\nb/other.py:1 low z", paths=["src/a.py"]
    )
    assert [f.path for f in review.findings] == ["src/a.py", "src/a.py", "b/other.py"]


def test_empty_text():
    assert parse_review("") == ParsedReview((), False, ())


def test_control_characters_and_undecodable_bytes():
    text = "\x00\x01src/a.py:3\x07 high bell\x1b[0m\nsrc/a.py:4 high caf" + b"\xe9".decode(
        "utf-8", "surrogateescape"
    )
    review = parse_review(text)
    assert located(review) == [
        ("src/a.py", 3, HIGH, "bell [0m"),
        ("src/a.py", 4, HIGH, "caf\ufffd"),
    ]
    json.dumps([f.model_dump() for f in review.findings]).encode("utf-8")  # storable as UTF-8


@pytest.mark.parametrize(
    "text",
    [
        "[" * 200_000 + "]" * 200_000,  # deeper than the JSON decoder can go
        "{" * 100_000,
        "a" * 2_000_000,  # one huge line
        "src/a.py:1 high " + "(" * 100_000,
        "x/" * 50_000 + ":1 y",
        "`" * 100_000,
        "\n".join("|" * i for i in range(500)),
        "\u202e\u200b\ufeff src/a.py:1 high rtl",
        "\x00" * 10_000,
    ],
)
def test_garbage_never_raises_and_is_kept(text):
    review = parse_review(text)
    assert isinstance(review, ParsedReview)
    assert review.findings or review.unparsed or not text.strip("\x00\n|")


def test_random_garbage_never_raises():
    rnd = random.Random(1234)
    alphabet = "ab:/.-*`[]()@ 0123456789\n|#L{}\"'\\\t_NO_ISSUES"
    for _ in range(300):
        text = "".join(
            chr(rnd.randint(0, 0x10FFFF)) if rnd.random() < 0.2 else rnd.choice(alphabet)
            for _ in range(rnd.randint(0, 400))
        )
        review = parse_review(text, paths=["a.py"] if rnd.random() < 0.5 else None)
        nonblank = [line for line in text.splitlines() if line.strip()]
        # Nothing vanishes: each non-blank line became a finding, NO_ISSUES, layout or unparsed.
        assert len(review.findings) + len(review.unparsed) <= len(nonblank) + text.count("{") + 1


def test_many_findings_are_parsed_quickly():
    text = "\n".join(f"src/a.py:{i} high claim {i}" for i in range(1, 20_001))
    assert len(parse_review(text).findings) == 20_000
