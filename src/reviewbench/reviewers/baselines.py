"""Calibration baselines: a reviewer that never speaks and one that flags everything.

Together they bracket every metric: ``silent`` scores zero recall and perfect restraint,
``flag_all`` the reverse, so a real reviewer's numbers can be read between them.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..config.reviewers import FlagAllConfig, SilentConfig
from ..records import Finding, ReviewPacket, Severity
from .base import KindExamples, ReviewReply, register

__all__ = ["FlagAllReviewer", "SilentReviewer", "examples"]

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
NO_ISSUES = "NO_ISSUES"


@register(SilentConfig)
class SilentReviewer:
    def __init__(self, config: SilentConfig) -> None:
        self.config = config

    async def review(self, packet: ReviewPacket, tree: Path | None) -> ReviewReply:
        return ReviewReply(text=NO_ISSUES, model="silent", findings=())

    async def aclose(self) -> None:
        pass


def hunk_findings(diff: str) -> list[Finding]:
    """One high finding at the first changed line of every hunk of ``diff``."""
    findings: list[Finding] = []
    path: str | None = None
    line = 0
    pending = False
    for raw in diff.splitlines():
        if raw.startswith("+++ "):
            target = raw[4:].rstrip("\t")
            path = None if target == "/dev/null" else target.split("/", 1)[-1]
            continue
        if raw.startswith("diff --git"):
            path, pending = None, False
            continue
        if m := _HUNK.match(raw):
            line, pending = int(m.group(1)), True
            continue
        if not pending or not raw or raw.startswith("\\"):
            continue
        if raw[0] in "+-":
            text = f"{path}:{line} high possible defect in this change"
            findings.append(Finding(path=path, line=max(line, 1), severity=Severity.HIGH,
                                    claim="possible defect in this change", raw=text))  # fmt: skip
            pending = False
        if raw[0] in " +":
            line += 1
    return findings


@register(FlagAllConfig)
class FlagAllReviewer:
    def __init__(self, config: FlagAllConfig) -> None:
        self.config = config

    async def review(self, packet: ReviewPacket, tree: Path | None) -> ReviewReply:
        findings = hunk_findings(packet.diff)
        text = "\n".join(f.raw for f in findings) or NO_ISSUES
        return ReviewReply(text=text, model="flag_all", findings=tuple(findings))

    async def aclose(self) -> None:
        pass


def examples() -> KindExamples:
    return KindExamples(tables=[({"kind": "silent"}, "diff"), ({"kind": "flag_all"}, "diff"),
                                ({"kind": "flag_all", "max_findings": 5}, "tree")])  # fmt: skip
