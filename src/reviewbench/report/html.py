"""``report.html``: one self-contained file a team lead can read offline in a minute.

Escaping is done in one place each: jinja2 autoescapes every value put into the page
(model text, paths, case ids, errors), and data for the charts goes into a
``<script type="application/json">`` block through :func:`script_json`, which escapes
``<``, ``>`` and ``&`` so no string can close the element. A Content-Security-Policy with
a per-file nonce lets only the report's own scripts run, so even a mistake in escaping
would not execute injected markup, and forbids every network request.
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
from pathlib import Path

import jinja2
from markupsafe import Markup

from .._text import printable
from ..score.levels import EVIDENCE_WORDS
from ..score.registry import METRICS
from ..score.splits import SPLIT_METRICS
from ._data import build_report
from ._model import DefectRow, Metric, Outcome, ReportData, Summary, Tile
from .headline import LEGEND
from .protocol import protocol_lines

__all__ = ["JUDGED_BY", "METRIC_HELP", "render_html", "script_json", "write_html"]

#: One line per metric, shown beside it (definitions: docs/SCORING.md).
METRIC_HELP = {spec.name: spec.meaning for spec in METRICS}

#: Who a tile's or a figure's evidence level says judged it.
JUDGED_BY = {"human": "people (final human labels)", "judge": "a calibrated judge",
             "automatic": "automatic matching"}  # fmt: skip

_CLIP = 300
_SHOWN_FINDINGS = 3
_SUMMARY_SHORT = {Summary.EVERY: "all", Summary.SOME: "some", Summary.NEVER: "never", Summary.NO_RUN: "–"}


def script_json(value: object) -> Markup:
    """JSON safe to place inside ``<script>``: ``</script>`` and ``<!--`` cannot occur in it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):  # fmt: skip
        text = text.replace(char, escaped)
    return Markup(text)


def _clip(text: str | None, limit: int = _CLIP) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _finding(f) -> str:
    where = f.path or "(no path)"
    if f.line is not None:
        where += f":{f.line}"
    severity = f" [{f.severity.value}]" if f.severity else ""
    return f"{where}{severity} {_clip(f.claim)}"


def tile_tip(row: DefectRow, tile: Tile) -> str:
    """The hover text of a tile: case, gold location, run and the finding (plain text)."""
    severity = row.severity or "unrated"
    lines = [f"case {row.case_id} · defect {row.defect_id} ({row.defect_class}, {severity})",
             "gold: " + "; ".join(row.locations),
             f"condition {tile.condition} · repetition {tile.repetition} · {tile.state or 'no run recorded'}"]  # fmt: skip
    if tile.try_no > 1:
        earlier = tile.try_no - 1
        lines.append(f"attempt {tile.try_no}: {earlier} earlier attempt{'s' if earlier > 1 else ''} retired by a retry, "
                     "each still a missing review in completion")  # fmt: skip
    if tile.outcome is Outcome.FOUND and tile.finding is not None:
        lines.append("FOUND (identified) by: " + _finding(tile.finding))
    elif tile.outcome is Outcome.LOCATED and tile.finding is not None:
        why = "a label would settle it" if tile.evidence in (None, "automatic") else "labelled so"
        lines.append(f"LOCATED, not identified ({why}): " + _finding(tile.finding))
    elif tile.outcome is Outcome.MISSED:
        if tile.findings:
            lines.append(f"MISSED; the run's {len(tile.findings)} finding(s):")
            lines.extend("  " + _finding(f) for f in tile.findings[:_SHOWN_FINDINGS])
            if len(tile.findings) > _SHOWN_FINDINGS:
                lines.append(f"  … and {len(tile.findings) - _SHOWN_FINDINGS} more")
        else:
            lines.append("MISSED: the reviewer reported no issues")
    elif tile.outcome is Outcome.INCOMPLETE:
        lines.append(f"INCOMPLETE: no review ({tile.state})" + (f": {_clip(tile.error, 200)}" if tile.error else ""))
    else:
        lines.append("NOT RUN: no run of this repetition is recorded")
    if tile.evidence is not None:
        lines.append("judged by " + JUDGED_BY.get(tile.evidence, tile.evidence))
    return "\n".join(lines)


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}"


def _fraction(m: Metric) -> str:
    if m.num is None:
        return f"n={m.den}" if m.den else ""
    return f"{m.num:g}/{m.den:g}"


def _interval(m: Metric) -> str:
    return "" if m.lo is None or m.hi is None else f"[{m.lo:.3f}, {m.hi:.3f}]"


def _shown(value: object) -> object:
    # Paths, titles and claims are untrusted: U+202E must not reorder the page. Markup
    # (trusted fragments, tojson) is left as it is.
    if isinstance(value, str) and not isinstance(value, Markup):
        return printable(value, newlines=True)
    return value


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reviewbench.report", "templates"),
        autoescape=True,  # every {{ value }} is HTML-escaped, attributes included
        finalize=_shown,  # ... and its control and bidi characters shown as escapes
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(fmt=_fmt, fraction=_fraction, interval=_interval, clip=_clip)
    env.globals.update(tip=tile_tip, help=METRIC_HELP, summary_short=_SUMMARY_SHORT, finding=_finding,
                       judged_by=JUDGED_BY, words=EVIDENCE_WORDS, protocol_lines=protocol_lines)  # fmt: skip
    return env


_SECTION = re.compile(r'<section id="([A-Za-z0-9_-]+)">\s*<h2>([^<]+)</h2>')


def reproduce_command(data: ReportData, html_path: Path | None) -> str:
    """The command that writes this very file again, to the path it was written to."""
    words = ["reviewbench", "report", str(data.rundir)]
    if html_path is not None:
        words += ["--html", str(html_path)]
    return " ".join(shlex.quote(w) for w in words)


def render_html(data: ReportData, sections: str = "", html_path: Path | None = None) -> str:
    """The whole report as one HTML document (scripts, styles and chart runtime inlined).

    ``sections``: trusted HTML fragments of later stages (the human-labels section), placed
    before the corpus section; they must carry no script or style attribute. Each one's
    ``<section id=…><h2>…`` gets a link in the navigation. ``html_path``: where the file is
    written, for the footer's command that writes it again.
    """
    from .charts import chart_specs, vega_bundle  # altair is imported only to render

    env = _environment()
    nonce = secrets.token_urlsafe(18)
    specs = chart_specs(data)
    found = sum(1 for row in data.defects for t in row.tiles if t.outcome is Outcome.FOUND)
    return env.get_template("report.html.j2").render(
        data=data,
        nonce=nonce,
        specs=script_json(specs),
        chart_ids=list(specs),
        vega=Markup(vega_bundle()),
        styles=Markup(env.loader.get_source(env, "report.css")[0]),  # type: ignore[union-attr]
        script=Markup(env.loader.get_source(env, "report.js")[0]),  # type: ignore[union-attr]
        # Every condition's rows; time to first review (forge conditions only) has a section of its own.
        rate_metrics=[name for name in data.conditions[0].metrics if name != "time_to_first_review_s"]
        if data.conditions else [],
        split_metrics=SPLIT_METRICS,
        tiles_total=sum(len(row.tiles) for row in data.defects),
        tiles_found=found,
        sections=Markup(sections),
        later_sections=_SECTION.findall(sections),
        reproduce=reproduce_command(data, html_path),
        legend=LEGEND,
    )


def write_html(data: ReportData | Path, path: Path, sections: str = "") -> Path:
    """Render and write ``path`` (parents created); returns the path written.

    ``data`` may also be a run directory, reported with the default options (what
    ``reviewbench demo`` does).
    """
    if not isinstance(data, ReportData):
        data = build_report(Path(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(render_html(data, sections, html_path=path), encoding="utf-8", errors="replace")  # a stray surrogate is not fatal
    tmp.replace(path)
    return path
