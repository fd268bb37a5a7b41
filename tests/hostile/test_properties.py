"""Property tests over arbitrary text: the corpus reader and the review parser.

A corpus file and a reviewer's output are untrusted. Whatever they hold, the reader either
returns records whose path-like fields are safe or raises :class:`CorpusError` (one line at
the CLI); the parser returns findings and never raises.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path, PurePosixPath

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewbench.errors import CorpusError
from reviewbench.records import Finding, Severity
from reviewbench.review.parse import parse_review
from reviewbench.store.corpus import read_corpus

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

META = {
    "schema_version": "1",
    "repo": {"path": "/nonexistent", "remote": None, "head": "0" * 40, "shallow": False},
    "created_at": "2024-01-01T00:00:00Z", "tool_version": "test", "config": {},
    "counts": {"cases": 1, "by_stratum": {}, "matched_commits": 1, "dropped": {}},
}  # fmt: skip

# Strings that look like what an attacker would put in a path field.
PATHISH = st.one_of(
    st.text(max_size=40),
    st.lists(
        st.sampled_from(["..", ".", "", "patches", "a", "b.py", "/", "~", "\0", "..."]),
        min_size=1,
        max_size=6,
    ).map("/".join),
)


def _read(cases: bytes, gold: bytes) -> object:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "patches").mkdir()
        (root / "cases.jsonl").write_bytes(cases)
        (root / "gold.jsonl").write_bytes(gold)
        meta = {**META, "gold_sha256": hashlib.sha256(gold).hexdigest()}
        (root / "corpus.json").write_text(json.dumps(meta))
        try:
            return read_corpus(root)
        except CorpusError as exc:
            assert str(exc).startswith(str(root))  # names the file (the CLI makes it one line)
            return exc


def _safe(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(path) and not path.startswith("/") and ".." not in parts and "\0" not in path


@SETTINGS
@given(st.binary(max_size=300), st.binary(max_size=300))
def test_arbitrary_bytes_are_read_or_refused(cases, gold):
    _read(cases, gold)


@SETTINGS
@given(case_id=PATHISH, patch=PATHISH, paths=st.lists(PATHISH, max_size=3))
def test_path_fields_that_are_accepted_are_safe(case_id, patch, paths):
    line = json.dumps({"case_id": case_id, "base": "0" * 40, "title": "t", "patch": patch,
                       "paths": paths, "language": None}).encode() + b"\n"  # fmt: skip
    result = _read(line, b"")
    if isinstance(result, CorpusError):
        return
    (case,) = result.cases
    assert "/" not in case.case_id and not case.case_id.startswith(".")
    assert _safe(case.patch) and PurePosixPath(case.patch).parts[0] == "patches"
    assert all(_safe(p) for p in case.paths)


@SETTINGS
@given(st.text(max_size=2000))
def test_the_parser_never_raises_and_findings_validate(text):
    review = parse_review(text)
    for finding in review.findings:
        Finding.model_validate(finding.model_dump())
        assert finding.line is None or finding.line >= 0
    assert all(isinstance(line, str) and line.strip() for line in review.unparsed)


WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ,;", min_size=1, max_size=60).filter(str.strip)


@SETTINGS
@given(before=st.lists(WORDS, max_size=5), after=st.lists(WORDS, max_size=5),
       paths=st.sampled_from([None, ["src/app.py"], ["src/app.py", "lib/x.py"]]))  # fmt: skip
def test_a_plain_finding_is_found_among_arbitrary_prose(before, after, paths):
    text = "\n".join([*before, "src/app.py:12 high off-by-one in the loop bound", *after])
    review = parse_review(text, paths)
    assert ("src/app.py", 12, Severity.HIGH) in {
        (f.path, f.line, f.severity) for f in review.findings
    }
