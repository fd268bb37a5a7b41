"""The calibration baselines: silent says nothing, flag_all flags every hunk once."""

from __future__ import annotations

import asyncio

from reviewbench.config.reviewers import FlagAllConfig, SilentConfig
from reviewbench.records import Severity
from reviewbench.reviewers import make_reviewer
from reviewbench.reviewers.baselines import FlagAllReviewer, SilentReviewer

DIFF = """\
diff --git a/src/a.py b/src/a.py
index 1111111..2222222 100644
--- a/src/a.py
+++ b/src/a.py
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
@@ -20,4 +20,2 @@ def f():
 keep
-drop1
-drop2
 keep
@@ -40,2 +38,3 @@
 ctx
+added
 ctx
diff --git a/src/new.py b/src/new.py
new file mode 100644
--- /dev/null
+++ b/src/new.py
@@ -0,0 +1,2 @@
+x = 1
+y = 2
"""


def review(config, packet):
    async def go():
        reviewer = make_reviewer(config)
        try:
            return await reviewer.review(packet, None)
        finally:
            await reviewer.aclose()

    return asyncio.run(go())


def test_silent_always_says_no_issues(make_packet):
    config = SilentConfig(kind="silent")
    assert isinstance(make_reviewer(config), SilentReviewer)
    reply = review(config, make_packet(diff=DIFF))
    assert (reply.text, reply.findings, reply.model) == ("NO_ISSUES", (), "silent")


def test_flag_all_flags_each_hunk_once_at_its_first_changed_line(make_packet):
    config = FlagAllConfig(kind="flag_all")
    assert isinstance(make_reviewer(config), FlagAllReviewer)
    reply = review(config, make_packet(diff=DIFF, paths=["src/a.py", "src/new.py"]))
    assert [(f.path, f.line) for f in reply.findings] == [
        ("src/a.py", 2),
        ("src/a.py", 21),
        ("src/a.py", 39),
        ("src/new.py", 1),
    ]
    assert all(f.severity is Severity.HIGH for f in reply.findings)
    assert reply.text.splitlines() == [f.raw for f in reply.findings]
    assert reply.model == "flag_all"


def test_flag_all_on_an_empty_diff_says_no_issues(make_packet):
    reply = review(FlagAllConfig(kind="flag_all"), make_packet(diff=""))
    assert (reply.text, reply.findings) == ("NO_ISSUES", ())
