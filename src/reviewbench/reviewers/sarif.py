"""A static analyser as a reviewer: its SARIF results on lines the change adds become findings.

The analyser runs in the exported post-patch tree (the condition must ask for
``context = "tree"``) and prints SARIF 2.1 on stdout. Many analysers exit 1 when they find
something, so the exit code only matters when stdout is not SARIF. A result counts when
its first location's ``startLine`` is a line the packet's diff adds to that file: an
analyser also reports what was already wrong before the change, and that is not a review
of the change. Levels map ``error`` → high, ``warning`` (the SARIF default) → med,
``note``/``none`` → low.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..config.reviewers import SarifConfig
from ..records import Finding, ReviewPacket, Severity
from ._diff import added_lines
from .base import KindExamples, ReviewerError, ReviewReply, register
from .preflight import command_preflight
from .proc import agent_box, capped_stdout, exit_label, failure_hint, network_notes, stderr_tail

__all__ = ["SarifReviewer", "examples", "sarif_findings"]

NO_ISSUES = "NO_ISSUES"
_LEVELS = {
    "error": Severity.HIGH,
    "warning": Severity.MED,
    "note": Severity.LOW,
    "none": Severity.LOW,
}


def sarif_preflight(config: SarifConfig, context: str | None, keys: bool) -> str | None:
    """The analyser reads the post-patch tree, and its command must say something."""
    if context is not None and context != "tree":
        return 'the sarif reviewer runs an analyser on the post-patch tree: set context = "tree"'
    return command_preflight(config, context, keys)


@register(SarifConfig, preflight=sarif_preflight)
class SarifReviewer:
    """Runs ``config.command`` in the post-patch tree and keeps results on added lines."""

    def __init__(self, config: SarifConfig) -> None:
        self.config = config
        self.box = agent_box(config, f"sarif reviewer {config.command!r}")

    async def review(self, packet: ReviewPacket, tree: Path | None) -> ReviewReply:
        if tree is None:
            raise ReviewerError(
                'the sarif reviewer runs an analyser on the post-patch tree: set context = "tree" '
                "in its condition"
            )
        try:
            result = await self.box.run(self.config.command, stdin=None, tree=tree)
        except OSError as exc:
            raise ReviewerError(
                f"sarif reviewer {self.config.command!r} could not start in {tree}: {exc.strerror or exc}"
            ) from None
        capped_stdout(result, self.box, f" on case {packet.case_id}")
        sarif = _load_sarif(result.stdout)
        if sarif is None:
            raise ReviewerError(
                f"sarif reviewer {self.config.command!r} {exit_label(result.returncode)}"
                f"{failure_hint(result.returncode, self.box, result.stderr, result.refused)} on case "
                f"{packet.case_id} without printing SARIF on stdout; stderr: {stderr_tail(result.stderr)}"
            )
        findings = sarif_findings(sarif, tree, packet.diff)
        text = "\n".join(f.raw for f in findings) or NO_ISSUES
        return ReviewReply(text=text, model=_tool_name(sarif), findings=tuple(findings), notes=network_notes(result))

    async def aclose(self) -> None:
        pass


def _load_sarif(stdout: bytes) -> dict[str, Any] | None:
    text = stdout.decode("utf-8", "replace")
    start = text.find("{")  # tolerate a banner some tools print before the document
    if start < 0:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        return None
    return data


def _tool_name(sarif: dict[str, Any]) -> str | None:
    runs = sarif["runs"]
    driver = _get(runs[0] if runs else None, "tool", "driver")
    if not isinstance(driver, dict) or not isinstance(driver.get("name"), str):
        return None
    version = driver.get("version") or driver.get("semanticVersion")
    return f"{driver['name']} {version}" if isinstance(version, str) and version else driver["name"]


def _get(value: Any, *keys: str | int) -> Any:
    for key in keys:
        if isinstance(key, int):
            value = (
                value[key] if isinstance(value, list) and -len(value) <= key < len(value) else None
            )
        else:
            value = value.get(key) if isinstance(value, dict) else None
    return value


def _relative(uri: str, base: str | None, tree: Path) -> str | None:
    """``uri`` as a path relative to ``tree``, or None when it points outside."""
    if base and not urlsplit(uri).scheme:
        uri = base.rstrip("/") + "/" + uri
    parts = urlsplit(uri)
    if parts.scheme == "file":
        target = Path(posixpath.normpath(unquote(parts.path)))
        try:
            roots = (tree.absolute(), tree.resolve())
            candidates = (target, target.resolve())
        except (OSError, RuntimeError):
            return None
        for candidate in candidates:
            for root in roots:
                if candidate.is_relative_to(root):
                    return candidate.relative_to(root).as_posix()
        return None
    if parts.scheme or parts.netloc:
        return None
    path = posixpath.normpath(unquote(parts.path))
    if path == ".." or path.startswith(("/", "../")):
        return None
    return path


def _level(result: dict[str, Any], run: dict[str, Any]) -> str:
    level = result.get("level")
    if not isinstance(level, str):
        index = result.get("ruleIndex")
        if isinstance(index, int):
            level = _get(run, "tool", "driver", "rules", index, "defaultConfiguration", "level")
        if not isinstance(level, str) and isinstance(result.get("ruleId"), str):
            for rule in _get(run, "tool", "driver", "rules") or []:
                if isinstance(rule, dict) and rule.get("id") == result["ruleId"]:
                    level = _get(rule, "defaultConfiguration", "level")
                    break
    return level if isinstance(level, str) else "warning"


def sarif_findings(sarif: dict[str, Any], tree: Path, diff: str) -> list[Finding]:
    """Findings for the results of ``sarif`` that start on a line ``diff`` adds.

    Args:
        sarif: a parsed SARIF 2.1 log.
        tree: the directory the analyser ran in; absolute ``file:`` URIs are made relative to it.
        diff: the packet's unified diff.
    """
    added = added_lines(diff)
    findings: list[Finding] = []
    seen: set[tuple[str, int, str]] = set()
    for run in sarif.get("runs") or []:
        if not isinstance(run, dict):
            continue
        bases = (
            run.get("originalUriBaseIds") if isinstance(run.get("originalUriBaseIds"), dict) else {}
        )
        for result in run.get("results") or []:
            if not isinstance(result, dict):
                continue
            location = _get(result, "locations", 0, "physicalLocation")
            uri = _get(location, "artifactLocation", "uri")
            line = _get(location, "region", "startLine")
            if not isinstance(uri, str) or isinstance(line, bool) or not isinstance(line, int):
                continue
            base_id = _get(location, "artifactLocation", "uriBaseId")
            base = _get(bases, base_id, "uri") if isinstance(base_id, str) else None
            path = _relative(uri, base if isinstance(base, str) else None, tree)
            if path is None or line not in added.get(path, ()):
                continue
            severity = _LEVELS.get(_level(result, run), Severity.MED)
            rule = result.get("ruleId") if isinstance(result.get("ruleId"), str) else None
            message = _get(result, "message", "text")
            claim = " ".join(x for x in (rule, message if isinstance(message, str) else None) if x)
            claim = " ".join(claim.split()) or "analyser result"
            if (path, line, claim) in seen:
                continue
            seen.add((path, line, claim))
            raw = f"{path}:{line} {severity.value} {claim}"
            findings.append(Finding(path=path, line=line, severity=severity, claim=claim, raw=raw))
    return findings


def examples() -> KindExamples:
    return KindExamples(
        tables=[({"kind": "sarif", "command": "ruff check --output-format sarif ."}, "tree")],
        refused=[({"kind": "sarif", "command": "ruff check --output-format sarif ."}, "diff", 'set context = "tree"'),
                 ({"kind": "sarif", "command": ""}, "tree", "command is empty")],
    )  # fmt: skip
