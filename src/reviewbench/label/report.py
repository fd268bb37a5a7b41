"""The "Human labels" section of the HTML report (issue 14, item 9).

Built from the run store (which condition each run belongs to) and ``labels.sqlite``; the
report shows it only when the run directory has labels. Rendered here, autoescaped, as an
HTML fragment with no script and no style attribute (the report's Content Security Policy
allows neither): the per-case triage dot plot is inline SVG with presentation attributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ..evidence.summary import ConditionLabels, LabelsView, label_figures, labels_view

__all__ = ["ConditionLabels", "LabelsView", "label_figures", "labels_section", "labels_view", "render_labels_section"]

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def _dot_plot(view: LabelsView) -> Markup:
    """One row per case, one dot per condition at its triage minutes (inline SVG)."""
    cases = list(view.triage_by_case.items())
    if not cases:
        return Markup("")
    names = [c.name for c in view.conditions]
    colour = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}
    top = max((m for per in view.triage_by_case.values() for m in per.values()), default=1.0) or 1.0
    left, width, row = 150, 420, 16
    height = row * len(cases) + 40
    esc = Markup.escape
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 20}" height="{height}" '
              f'role="img" aria-label="rater minutes per case and condition">')]  # fmt: skip
    for i, (case_id, per) in enumerate(cases):
        y = 20 + i * row
        parts.append(f'<text x="{left - 6}" y="{y + 4}" text-anchor="end" font-size="10">{esc(case_id)}</text>')
        parts.append(f'<line x1="{left}" x2="{left + width}" y1="{y}" y2="{y}" stroke="#eee"/>')
        xs = [(left + width * m / top, name) for name, m in per.items() if name in colour]
        if len(xs) > 1:
            lo, hi = min(x for x, _ in xs), max(x for x, _ in xs)
            parts.append(f'<line x1="{lo:.1f}" x2="{hi:.1f}" y1="{y}" y2="{y}" stroke="#999"/>')
        for x, name in xs:
            parts.append(f'<circle cx="{x:.1f}" cy="{y}" r="4" fill="{colour[name]}">'
                         f'<title>{esc(case_id)} · {esc(name)}: {per[name]:.2f} min</title></circle>')  # fmt: skip
    axis = 20 + len(cases) * row
    parts.append(f'<text x="{left}" y="{axis + 12}" font-size="10">0</text>')
    parts.append(f'<text x="{left + width}" y="{axis + 12}" font-size="10" text-anchor="end">{top:.1f} min</text>')
    parts.append("</svg>")
    legend = " ".join(f'<svg width="10" height="10"><circle cx="5" cy="5" r="4" fill="{colour[n]}"/></svg> {esc(n)}'
                      for n in names)  # fmt: skip
    return Markup("".join(parts)) + Markup(f'<p class="small">{legend}</p>')


def render_labels_section(view: LabelsView | None) -> Markup:
    """The section as an HTML fragment ("" when there are no labels)."""
    if view is None:
        return Markup("")
    env = jinja2.Environment(loader=jinja2.PackageLoader("reviewbench.label", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)  # fmt: skip
    return Markup(env.get_template("report_section.html").render(view=view, dots=_dot_plot(view)))


def labels_section(rundir: Path, conditions: list[str] | None = None, *, resamples: int = 1000,
                   unclear: Mapping[str, Any] | None = None) -> Markup:  # fmt: skip
    """The report's labels section for ``rundir`` ("" without labels): what the report
    command and the demo pass to ``write_html(..., sections=...)``."""
    return render_labels_section(labels_view(rundir, conditions, resamples=resamples, unclear=unclear))
