"""The report's charts as Vega-Lite specs (built with altair) and the inlined Vega runtime.

Charts are declared with altair and embedded as JSON; the Vega, Vega-Lite and vega-embed
JavaScript comes from ``vl-convert-python``'s bundle, inlined in the page, so the report
renders offline and never asks a CDN for anything. Only aggregates, case ids and
condition names go into chart data; model text stays in the HTML, escaped.
"""

from __future__ import annotations

import functools
import re
import statistics

import altair as alt

from ._data import paired_recall
from ._model import ReportData

__all__ = ["PALETTE", "SCOREBOARD_METRICS", "chart_specs", "condition_colours", "vega_bundle"]

#: Rates drawn in the interval chart (every metric is in the table).
SCOREBOARD_METRICS = ("defect_recall", "recall_any", "recall_all", "precision", "silence_rate",
                      "false_alarm_rate", "flag_coverage", "completion")  # fmt: skip

_WIDTH = 520
#: Above this many runs per condition the latency chart shows the box only, not every run.
_MAX_POINTS = 1000


@functools.lru_cache(maxsize=1)
def vega_bundle() -> str:
    """vega + vega-lite + vega-embed as one classic script defining ``window.vegaEmbed``.

    Bundling takes a couple of seconds, so it is done once per process. ``</script`` and
    ``<!--`` are neutralised so the bundle cannot end its ``<script>`` element early.
    """
    import vl_convert
    from altair.vegalite import SCHEMA_VERSION  # e.g. "v6.1.0": bundle the Vega-Lite altair targets

    # The stub requires ``snippet``; at run time it defaults to None (the default snippet).
    bundle = vl_convert.javascript_bundle(vl_version="_".join(SCHEMA_VERSION.split(".")[:2]))  # type: ignore[call-arg]
    bundle = re.sub(r"</(script)", r"<\\/\1", bundle, flags=re.IGNORECASE)
    return bundle.replace("<!--", "<\\!--")


def _names(data: ReportData) -> list[str]:
    return [c.name for c in data.conditions]


#: Condition colours, in the experiment's order (Tableau 10; repeats past ten conditions).
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac")  # fmt: skip


def condition_colours(data: ReportData) -> dict[str, str]:
    """Each condition's one colour, the same in every chart (the paired charts included)."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(_names(data))}


def _color(data: ReportData, legend: bool = True) -> alt.Color:
    """One colour per condition, the same in every chart, in the experiment's order."""
    colours = condition_colours(data)
    return alt.Color("condition:N", scale=alt.Scale(domain=list(colours), range=list(colours.values())),
                     title="condition", legend=alt.Legend() if legend else None)  # fmt: skip


def _scoreboard(data: ReportData) -> dict | None:
    rows = []
    for c in data.conditions:
        for name in SCOREBOARD_METRICS:
            m = c.metrics[name]
            if m.value is None:
                continue
            rows.append({"condition": c.name, "metric": name, "value": m.value,
                         "lo": m.lo if m.lo is not None else m.value, "hi": m.hi if m.hi is not None else m.value,
                         "fraction": f"{m.num}/{m.den}"})  # fmt: skip
    if not rows:
        return None
    base = alt.Chart(alt.Data(values=rows)).encode(
        y=alt.Y("metric:N", sort=list(SCOREBOARD_METRICS), title=None),
        yOffset=alt.YOffset("condition:N", sort=_names(data)),
        color=_color(data),
        tooltip=[alt.Tooltip("condition:N"), alt.Tooltip("metric:N"), alt.Tooltip("value:Q", format=".3f"),
                 alt.Tooltip("fraction:N", title="num/den"), alt.Tooltip("lo:Q", format=".3f", title="95% low"),
                 alt.Tooltip("hi:Q", format=".3f", title="95% high")],
    )  # fmt: skip
    x = alt.X("lo:Q", scale=alt.Scale(domain=[0, 1]), title="value with 95% interval")
    chart = base.mark_rule(strokeWidth=2).encode(x=x, x2="hi:Q") + base.mark_point(filled=True, size=60).encode(
        x=alt.X("value:Q", scale=alt.Scale(domain=[0, 1]))
    )
    return chart.properties(width=_WIDTH, title="Rates with 95% case-bootstrap intervals").to_dict()


def _fp(data: ReportData) -> dict | None:
    rows = [{"condition": c.name, "false positives in a clean run": bucket, "runs": c.fp_distribution[bucket]}
            for c in data.conditions if c.fp_distribution.get("runs") for bucket in ("0", "1", "2", "3+")]  # fmt: skip
    if not rows:
        return None
    chart = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("false positives in a clean run:N", sort=["0", "1", "2", "3+"], axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("condition:N", sort=_names(data)),
        y=alt.Y("runs:Q", title="control runs"),
        color=_color(data),
        tooltip=["condition:N", "false positives in a clean run:N", "runs:Q"],
    )
    return chart.properties(width=_WIDTH, height=220, title="False positives per completed control run").to_dict()


def _paired(data: ReportData) -> list[dict]:
    """One chart per pair of conditions, each its own spec: the page lays them out side by
    side and wraps them on a narrow screen (a Vega concat would keep its width)."""
    charts: list[dict] = []
    for a, b, cases in paired_recall(data):
        if not cases:
            continue
        groups: dict[tuple[float, float], list[str]] = {}
        for case, ra, rb in cases:
            groups.setdefault((round(ra, 4), round(rb, 4)), []).append(case)
        rows = []
        for i, ((ra, rb), ids) in enumerate(sorted(groups.items())):
            listed = ", ".join(ids[:8]) + (f" … (+{len(ids) - 8})" if len(ids) > 8 else "")
            trend = "same" if ra == rb else (f"{a} higher" if ra > rb else f"{b} higher")
            for side, value in ((a, ra), (b, rb)):
                rows.append({"pair": i, "condition": side, "recall": value, "cases": len(ids),
                             "case ids": listed, "trend": trend})  # fmt: skip
        # A line is drawn in the colour of the condition that does better on it: the same
        # colour that condition has in every other chart.
        colours = condition_colours(data)
        trends = alt.Scale(domain=["same", f"{a} higher", f"{b} higher"], range=["#9e9e9e", colours[a], colours[b]])
        base = alt.Chart(alt.Data(values=rows)).encode(
            x=alt.X("condition:N", sort=[a, b], title=None, axis=alt.Axis(labelAngle=0)),
            y=alt.Y("recall:Q", scale=alt.Scale(domain=[0, 1]), title="per-case defect recall"),
            detail="pair:N",
            # The legend goes under the chart: a phone's width holds one chart, not chart and legend.
            color=alt.Color("trend:N", scale=trends, legend=alt.Legend(orient="bottom", direction="vertical")),
            tooltip=["cases:Q", "case ids:N", "condition:N", alt.Tooltip("recall:Q", format=".2f")],
        )
        lines = base.mark_line(opacity=0.7).encode(
            strokeWidth=alt.StrokeWidth("cases:Q", title="cases", legend=alt.Legend(orient="bottom")))
        points = base.mark_circle().encode(size=alt.Size("cases:Q", legend=None))
        charts.append((lines + points).properties(width=_PAIRED_WIDTH, height=220, title=f"{a} vs {b}").to_dict())
    return charts


#: One paired chart's plotting width: with its axis it fits a 390 px phone screen.
_PAIRED_WIDTH = 180


def _latency(data: ReportData) -> dict | None:
    boxes: list[dict[str, object]] = []
    points: list[dict[str, object]] = []
    for c in data.conditions:
        values = sorted(c.latencies)
        if not values:
            continue
        q = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3
        boxes.append({"condition": c.name, "min": values[0], "q1": q[0], "median": q[1], "q3": q[2],
                      "max": values[-1], "runs": len(values)})  # fmt: skip
        if len(values) <= _MAX_POINTS:
            points.extend({"condition": c.name, "latency_s": v} for v in values)
    if not boxes:
        return None
    y = alt.Y("condition:N", title=None, sort=_names(data))
    box = alt.Chart(alt.Data(values=boxes)).encode(
        y=y, tooltip=["condition:N", "runs:Q", alt.Tooltip("min:Q", format=".3f"), alt.Tooltip("q1:Q", format=".3f"),
                      alt.Tooltip("median:Q", format=".3f"), alt.Tooltip("q3:Q", format=".3f"),
                      alt.Tooltip("max:Q", format=".3f")],
    )  # fmt: skip
    layers = [
        box.mark_rule().encode(x=alt.X("min:Q", title="latency (s)"), x2="max:Q"),
        box.mark_bar(size=16, opacity=0.35).encode(x="q1:Q", x2="q3:Q", color=_color(data, legend=False)),
        box.mark_tick(size=22, thickness=3, color="black").encode(x="median:Q"),
    ]
    if points:
        layers.append(alt.Chart(alt.Data(values=points)).mark_circle(size=14, opacity=0.35, color="#333").encode(
            x="latency_s:Q", y=y, yOffset=alt.YOffset("jitter:Q", scale=alt.Scale(domain=[-1, 1])),
            tooltip=[alt.Tooltip("latency_s:Q", format=".3f")],
        ).transform_calculate(jitter="sampleNormal() / 3"))  # fmt: skip
    return alt.layer(*layers).properties(width=_WIDTH, height=max(80, 36 * len(boxes)),
                                         title="Latency per run (box: IQR; tick: median)").to_dict()  # fmt: skip


def chart_specs(data: ReportData) -> dict[str, dict]:
    """The Vega-Lite spec of every chart that has data, by the id of its place in the page."""
    specs = {"chart-scoreboard": _scoreboard(data), "chart-fp": _fp(data), "chart-latency": _latency(data)}
    specs.update({f"chart-paired-{i}": spec for i, spec in enumerate(_paired(data))})
    return {key: spec for key, spec in specs.items() if spec is not None}
