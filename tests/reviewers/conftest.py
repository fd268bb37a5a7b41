"""Fixtures of the reviewer tests: a loopback LLM server and review packets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reviewbench.records import ReviewPacket

from .servers import FakeLLMServer

DIFF = """\
diff --git a/src/app.py b/src/app.py
index 1111111..2222222 100644
--- a/src/app.py
+++ b/src/app.py
@@ -1,3 +1,4 @@
 def total(items):
-    return sum(items)
+    values = [i for i in items if i]
+    return sum(values)
 
"""


def _make_packet(**overrides: object) -> ReviewPacket:
    fields: dict[str, object] = {
        "case_id": "c0001",
        "title": "Update app module",
        "diff": DIFF,
        "paths": ["src/app.py"],
        "prompt": "Review this change. Answer NO_ISSUES if there is nothing to report.",
    }
    fields.update(overrides)
    return ReviewPacket(**fields)  # type: ignore[arg-type]


@pytest.fixture
def make_packet():
    """A factory of small packets; any field can be overridden."""
    return _make_packet


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """A started loopback server, stopped after the test."""
    with FakeLLMServer() as server:
        yield server
