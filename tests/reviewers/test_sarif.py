"""The sarif reviewer with ruff as a real analyser, and the pieces it is made of."""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from reviewbench.config.reviewers import SarifConfig
from reviewbench.records import Finding, Severity
from reviewbench.reviewers import ReviewerError, make_reviewer
from reviewbench.reviewers._diff import added_lines
from reviewbench.reviewers.sarif import SarifReviewer, sarif_findings

RUFF = f"{shlex.quote(sys.executable)} -m ruff check --isolated --output-format sarif --no-cache --select F,E9 ."

BEFORE = {
    "src/app.py": "import os\n\n\ndef total(items):\n    return sum(items)\n",
    "lib/other.py": "def f():\n    return undefined_elsewhere\n",  # broken, but not changed
}
AFTER = {
    "src/app.py": "import os\n\n\ndef total(items):\n    values = [i for i in items if i]\n    return sum(valuez)\n",
    "lib/other.py": BEFORE["lib/other.py"],
    "src/new.py": "def g():\n    return missing_name\n",
}


def unified(before: dict[str, str], after: dict[str, str]) -> str:
    chunks = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        chunks.append(f"diff --git a/{path} b/{path}\n")
        chunks += difflib.unified_diff(
            (old or "").splitlines(True),
            (new or "").splitlines(True),
            "/dev/null" if old is None else f"a/{path}",
            "/dev/null" if new is None else f"b/{path}",
        )
    return "".join(chunks)


def export_tree(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    return root


def run(command: str, packet, tree: Path | None):
    async def go():
        # The interpreter lives under the caller's home here, which the sandbox hides.
        reviewer = make_reviewer(SarifConfig(kind="sarif", command=command, expose=[os.path.realpath(sys.base_prefix)]))
        try:
            return await reviewer.review(packet, tree)
        finally:
            await reviewer.aclose()

    return asyncio.run(go())


def test_registered_kind_builds_the_sarif_reviewer():
    assert isinstance(make_reviewer(SarifConfig(kind="sarif", command="true")), SarifReviewer)


def test_ruff_results_on_added_lines_become_findings(tmp_path, make_packet):
    tree = export_tree(tmp_path / "tree", AFTER)
    packet = make_packet(diff=unified(BEFORE, AFTER), paths=["src/app.py", "src/new.py"])
    reply = run(RUFF, packet, tree)  # ruff exits 1 when it finds something: still a review
    got = {(f.path, f.line, f.claim.split()[0]) for f in reply.findings}
    assert got == {("src/app.py", 5, "F841"), ("src/app.py", 6, "F821"), ("src/new.py", 2, "F821")}
    # The unused import on an unchanged line and the unchanged broken file are not the change's.
    assert all(f.severity is Severity.HIGH for f in reply.findings)  # ruff reports level "error"
    undefined = next(f for f in reply.findings if f.line == 6)
    assert undefined.claim == "F821 Undefined name `valuez`"
    assert undefined.raw == "src/app.py:6 high F821 Undefined name `valuez`"
    assert reply.text.splitlines() == [f.raw for f in reply.findings]
    assert reply.model == "ruff 0.17.6"


def test_syntax_error_on_an_added_line(tmp_path, make_packet):
    after = {"src/app.py": BEFORE["src/app.py"] + "\ndef broken(:\n    pass\n"}
    tree = export_tree(tmp_path / "tree", after)
    packet = make_packet(diff=unified({"src/app.py": BEFORE["src/app.py"]}, after))
    reply = run(RUFF, packet, tree)
    assert [(f.path, f.line) for f in reply.findings][:1] == [("src/app.py", 7)]
    assert reply.findings[0].severity is Severity.HIGH


def test_no_results_on_added_lines_is_no_issues(tmp_path, make_packet):
    after = {"src/app.py": BEFORE["src/app.py"] + "\n\ndef fine():\n    return 1\n"}
    tree = export_tree(tmp_path / "tree", after)
    packet = make_packet(diff=unified({"src/app.py": BEFORE["src/app.py"]}, after))
    reply = run(RUFF, packet, tree)  # the old unused import is still reported by ruff
    assert (reply.text, reply.findings) == ("NO_ISSUES", ())


def test_a_tree_is_required(make_packet):
    with pytest.raises(ReviewerError, match='context = "tree"'):
        run(RUFF, make_packet(), None)


def test_output_that_is_not_sarif_is_an_error_with_stderr(tmp_path, make_packet):
    command = "echo 'Traceback: analyser crashed' >&2; echo 'not json'; exit 2"
    with pytest.raises(ReviewerError) as info:
        run(command, make_packet(), tmp_path)
    assert "exited with code 2" in str(info.value) and "analyser crashed" in str(info.value)
    assert not info.value.transient


def test_an_analyser_writing_its_cache_into_the_read_only_tree_is_told_how_to_stop(tmp_path, make_packet):
    # ruff's default: a .ruff_cache folder in the tree, which reviewers may not change.
    with pytest.raises(ReviewerError) as info:
        run("mkdir .lint_cache || exit 2", make_packet(), export_tree(tmp_path, AFTER))
    assert "Read-only file system" in str(info.value)
    assert "read-only" in str(info.value).split("on case")[0] and "--no-cache" in str(info.value)


def test_exit_zero_without_sarif_is_an_error_too(tmp_path, make_packet):
    with pytest.raises(ReviewerError, match="without printing SARIF"):
        run('echo \'{"no": "runs"}\'', make_packet(), tmp_path)


def test_any_exit_code_is_accepted_when_stdout_is_sarif(tmp_path, make_packet):
    sarif = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "fake"}}, "results": []}]}
    (tmp_path / "out.sarif").write_text("banner line\n" + json.dumps(sarif))
    reply = run("cat out.sarif; exit 5", make_packet(), tmp_path)
    assert (reply.text, reply.model, reply.findings) == ("NO_ISSUES", "fake", ())


def _result(
    uri: str,
    line: int,
    level: str | None = "warning",
    rule: str | None = "R1",
    text: str = "msg",
    base: str | None = None,
) -> dict:
    location = {"artifactLocation": {"uri": uri}, "region": {"startLine": line}}
    if base:
        location["artifactLocation"]["uriBaseId"] = base
    result = {"message": {"text": text}, "locations": [{"physicalLocation": location}]}
    if level is not None:
        result["level"] = level
    if rule is not None:
        result["ruleId"] = rule
    return result


def test_sarif_findings_locations_levels_and_rules(tmp_path):
    diff = unified({"a.py": "x = 1\n"}, {"a.py": "x = 1\ny = 2\nz = 3\nw = 4\nv = 5\nu = 6\n"})
    run_ = {
        "tool": {
            "driver": {
                "name": "t",
                "rules": [
                    {"id": "R9", "defaultConfiguration": {"level": "note"}},
                ],
            }
        },
        "originalUriBaseIds": {"SRC": {"uri": tmp_path.as_uri() + "/"}},
        "results": [
            _result("a.py", 2, "error"),
            _result("./a.py", 3, "warning", rule=None, text="no rule id"),
            _result((tmp_path / "a.py").as_uri(), 4, "note"),
            _result("a.py", 5, None, rule="R9", base="SRC"),  # level from the rule's default
            _result(
                "a.py", 6, None, rule="R0", text="multi\nline   message"
            ),  # SARIF default: warning
            _result("a.py", 1, "error"),  # unchanged line
            _result("../a.py", 2, "error"),  # outside the tree
            _result("file:///elsewhere/a.py", 2, "error"),
            _result("b.py", 2, "error"),  # file not in the diff
            {"message": {"text": "no location"}},
            "not an object",
        ],
    }
    findings = sarif_findings({"runs": [run_, "junk"]}, tmp_path, diff)
    assert findings == [
        Finding(
            path="a.py", line=2, severity=Severity.HIGH, claim="R1 msg", raw="a.py:2 high R1 msg"
        ),
        Finding(
            path="a.py",
            line=3,
            severity=Severity.MED,
            claim="no rule id",
            raw="a.py:3 med no rule id",
        ),
        Finding(
            path="a.py", line=4, severity=Severity.LOW, claim="R1 msg", raw="a.py:4 low R1 msg"
        ),
        Finding(
            path="a.py", line=5, severity=Severity.LOW, claim="R9 msg", raw="a.py:5 low R9 msg"
        ),
        Finding(
            path="a.py",
            line=6,
            severity=Severity.MED,
            claim="R0 multi line message",
            raw="a.py:6 med R0 multi line message",
        ),
    ]


def test_added_lines_per_file():
    diff = (
        "diff --git a/x.py b/x.py\n"
        "--- a/x.py\n+++ b/x.py\n"
        "@@ -1,4 +1,5 @@\n a\n-b\n+B\n++++ looks like a header\n c\n"
        "\\ No newline at end of file\n"
        " d\n"
        "@@ -10,2 +11,0 @@\n-gone\n-gone too\n"
        "diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-x\n"
        'diff --git "a/caf\\303\\251 x.py" "b/caf\\303\\251 x.py"\n'
        'new file mode 100644\n--- /dev/null\n+++ "b/caf\\303\\251 x.py"\n'
        "@@ -0,0 +1,2 @@\n+one\n+two\n"
        "diff --git a/sp ace.py b/sp ace.py\n--- a/sp ace.py\t\n+++ b/sp ace.py\t\n"
        "@@ -3 +3 @@\n-q\n+Q\n"
    )
    assert added_lines(diff) == {
        "x.py": frozenset({2, 3}),
        "café x.py": frozenset({1, 2}),
        "sp ace.py": frozenset({3}),
    }
