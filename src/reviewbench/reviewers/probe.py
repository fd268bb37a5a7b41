"""Built-in probes: offline, zero-cost reviewers whose remarks never describe a defect.

A probe tests the benchmark, not a reviewer. Each writes a remark that holds as well for
the clean version of the same code, so whatever credit it earns is credit automatic
matching gives for *naming* a symbol rather than *identifying* a defect. Like ``silent``
and ``flag_all`` the probes are calibration baselines (``CALIBRATION_KINDS``): ``score``
never grants them a tier.

- ``namer``: at the first changed line of each hunk, "`<symbol>` would read better with a
  docstring and type hints", ``<symbol>`` the innermost function or class around that line.
- ``quoter``: at the same line, "`<identifier>` is a vague name", the first identifier
  (four characters or more, keywords, comments and strings left out) of the hunk's
  changed lines in diff order.
- ``shape``: the namer, on a diff that looks like a defect by its shape alone: two or more
  hunks, or more removed than added lines (mined controls are one-hunk refactors; fix
  reversals often remove the fix's lines).

The enclosing symbol is found as mining finds gold's (``mine.symbols.SymbolIndex``), but
from what the reviewer sees: the post-patch file when the packet carries it (``context =
"files"``/``"tree"``), else the diff alone, the hunk's post-patch lines with the section
line git writes after its ``@@`` header placed just above them. A hunk where no name is
found gets no remark.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..config.reviewers import ProbeConfig
from ..mine.paths import language_of
from ..mine.shape import patch_shape
from ..mine.symbols import SymbolIndex, identifiers
from ..records import Finding, ReviewPacket, Severity
from ._diff import Hunk, hunks
from .base import KindExamples, ReviewReply, register

__all__ = ["Hunk", "ProbeReviewer", "examples", "hunks", "looks_like_a_defect", "probe_findings"]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
NO_ISSUES = "NO_ISSUES"


def looks_like_a_defect(parts: list[Hunk]) -> bool:
    """The ``shape`` probe's rule: two or more hunks, or more removed than added lines."""
    return len(parts) >= 2 or sum(h.removed for h in parts) > sum(h.added for h in parts)


def _enclosing(hunk: Hunk, files: dict[str, str]) -> str | None:
    """Innermost function or class around the hunk's first changed line (its last name part)."""
    assert hunk.path is not None
    language = language_of(hunk.path)
    if hunk.path in files:
        text = files[hunk.path]
    else:  # the diff alone: its post-patch lines in place, git's section line just above
        above = [""] * (hunk.start - 1)
        if hunk.section and above:
            above[-1] = hunk.section
        text = "\n".join([*above, *hunk.post])
    symbol = SymbolIndex(text, language).at(hunk.first_changed)
    return symbol.rsplit(".", 1)[-1] if symbol else None


def _quoted(hunk: Hunk) -> str | None:
    """The first identifier of the hunk's changed lines, in diff order."""
    language = language_of(hunk.path or "")
    for text in hunk.changed:
        names = identifiers([text], language)
        for word in _WORD.findall(text):
            if word in names:
                return word
    return None


def _shaped(config: ProbeConfig, diff: str, parts: list[Hunk]) -> bool:
    """Whether the ``shape`` probe speaks on this diff: its configured feature's rule, or the
    fixed one (:func:`looks_like_a_defect`)."""
    if config.feature is None:
        return looks_like_a_defect(parts)
    value = getattr(patch_shape(diff), config.feature)
    return value >= config.at_least if config.at_least is not None else value <= (config.at_most or 0)


def probe_findings(probe: str | ProbeConfig, packet: ReviewPacket) -> list[Finding]:
    """The findings a probe writes on ``packet`` (deterministic, at most one per hunk)."""
    config = probe if isinstance(probe, ProbeConfig) else ProbeConfig(kind="probe", probe=probe)
    probe = config.probe
    parts = hunks(packet.diff)
    if probe == "shape" and not _shaped(config, packet.diff, parts):
        return []
    findings: list[Finding] = []
    for hunk in parts:
        if probe == "quoter":
            name = _quoted(hunk)
            claim = f"`{name}` is a vague name"
        else:
            name = _enclosing(hunk, packet.files)
            claim = f"`{name}` would read better with a docstring and type hints"
        if name is None:
            continue
        raw = f"{hunk.path}:{hunk.first_changed} low {claim}"
        findings.append(Finding(path=hunk.path, line=hunk.first_changed, severity=Severity.LOW,
                                claim=claim, raw=raw))  # fmt: skip
    return findings


@register(ProbeConfig)
class ProbeReviewer:
    def __init__(self, config: ProbeConfig) -> None:
        self.config = config

    async def review(self, packet: ReviewPacket, tree: Path | None) -> ReviewReply:
        findings = probe_findings(self.config, packet)
        text = "\n".join(f.raw for f in findings) or NO_ISSUES
        return ReviewReply(text=text, model=f"probe-{self.config.probe}", findings=tuple(findings))

    async def aclose(self) -> None:
        pass


def examples() -> KindExamples:
    return KindExamples(tables=[({"kind": "probe", "probe": "namer"}, "files"), ({"kind": "probe", "probe": "quoter"}, "diff"),
                                ({"kind": "probe", "probe": "shape", "feature": "hunks", "at_least": 2}, "diff")])  # fmt: skip
