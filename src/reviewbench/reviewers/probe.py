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
from dataclasses import dataclass, field
from pathlib import Path

from ..config.reviewers import ProbeConfig
from ..mine.paths import language_of
from ..mine.shape import patch_shape
from ..mine.symbols import SymbolIndex, identifiers
from ..records import Finding, ReviewPacket, Severity
from ._diff import _target
from .base import ReviewReply, register

__all__ = ["Hunk", "ProbeReviewer", "hunks", "looks_like_a_defect", "probe_findings"]

_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
NO_ISSUES = "NO_ISSUES"


@dataclass
class Hunk:
    """One hunk of a unified diff, as a reviewer reads it."""

    path: str | None
    """Post-patch path (None for a deleted file)."""
    start: int
    """Post-patch line the hunk's header starts at."""
    section: str
    """What git wrote after the ``@@`` header (the nearest definition above), if anything."""
    first_changed: int = 0
    """Post-patch line of the first added or removed line (a removal: the line after it)."""
    post: list[str] = field(default_factory=list)
    """The hunk's post-patch lines (context and added), from ``start``."""
    changed: list[str] = field(default_factory=list)
    """Added and removed lines without their ``+``/``-``, in diff order."""
    added: int = 0
    removed: int = 0


def hunks(diff: str) -> list[Hunk]:
    """The hunks of ``diff``, read by their line counts (as ``_diff.added_lines`` does)."""
    out: list[Hunk] = []
    path: str | None = None
    old_left = new_left = 0
    line = 0
    for raw in diff.splitlines():
        if old_left > 0 or new_left > 0:
            tag, text = raw[:1], raw[1:]
            hunk = out[-1]
            if tag in ("+", "-") and not hunk.changed:
                hunk.first_changed = max(line, 1)
            if tag == "+":
                hunk.post.append(text)
                hunk.changed.append(text)
                hunk.added += 1
                line += 1
                new_left -= 1
                continue
            if tag == "-":
                hunk.changed.append(text)
                hunk.removed += 1
                old_left -= 1
                continue
            if tag in (" ", ""):
                hunk.post.append(text)
                line += 1
                old_left -= 1
                new_left -= 1
                continue
            if tag == "\\":
                continue
            old_left = new_left = 0  # counts were wrong: read it as a header line
        if raw.startswith("diff --git "):
            path = None
        elif raw.startswith("+++ "):
            path = _target(raw[4:])
        elif m := _HUNK.match(raw):
            old_left = int(m.group(1)) if m.group(1) is not None else 1
            line = int(m.group(2))
            new_left = int(m.group(3)) if m.group(3) is not None else 1
            out.append(Hunk(path=path, start=line, section=m.group(4).strip()))
    return [h for h in out if h.changed and h.path is not None]


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
    config = probe if isinstance(probe, ProbeConfig) else ProbeConfig(kind="probe", probe=probe)  # type: ignore[arg-type]
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


@register("probe")
class ProbeReviewer:
    def __init__(self, config: ProbeConfig) -> None:
        self.config = config

    async def review(self, packet: ReviewPacket, tree: Path | None) -> ReviewReply:
        findings = probe_findings(self.config, packet)
        text = "\n".join(f.raw for f in findings) or NO_ISSUES
        return ReviewReply(text=text, model=f"probe-{self.config.probe}", findings=tuple(findings))

    async def aclose(self) -> None:
        pass
