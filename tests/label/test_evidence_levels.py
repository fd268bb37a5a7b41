"""Every figure says which evidence it rests on: people, a calibrated judge, or automatic
matching; in ``score --json``, in ``score``'s text, on the report's scoreboard and tiles.

Planned on the fixture of ``conftest.py``: two raters agree on every claim except the long
comment of condbetasecret on case-1 (three claims), which nobody labels.

condalphasecret: every comment has people's label (five on defect cases, one on the
  control): its label-dependent figures rest on people. Tiles: case-1 d-1 found ("parse
  drops the last item", a true finding of d-1), case-2 d-2 found ("lookup uses the wrong
  key"), case-2 d-3 located but people call "None is not checked" a false positive here.
condbetasecret: one defect-case comment labelled ("maybe a problem here", unclear), the
  long one not: recall rests on automatic matching, 1 of 2 comments labelled. Tiles:
  case-1 d-1 located, automatic; case-2 d-2 located, people (unclear); d-3 missed.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser

from reviewbench.evidence.overrides import score_overrides
from reviewbench.label import import_labels
from reviewbench.report import ReportOptions, build_report, render_html

from ..conftest import run_cli
from .conftest import CONDITIONS
from .test_store import keys_by_text, plan, row, write

ALPHA, BETA = CONDITIONS


def _label(rundir, tmp_path):
    keys = keys_by_text(rundir)
    rows = [r for r in plan(keys, {"None is not checked": row(keys["None is not checked"], "false_positive")})
            if not any(keys[t] == (r["comment_id"], r["part"]) for t in keys
                       if t.startswith(("The slice now stops", "Callers", "Restore")))]  # fmt: skip
    assert len(rows) == 7
    for rater in ("ann", "bob"):
        import_labels(rundir, write(tmp_path / f"{rater}.jsonl", rows), rater=rater)


class _Cells(HTMLParser):
    """Tiles (by case, defect, condition) and scoreboard evidence cells, as a browser parses them."""

    def __init__(self) -> None:
        super().__init__()
        self.tiles: dict[tuple[str, str, str], tuple[str, str | None, str]] = {}
        self.evidence: list[tuple[str | None, str]] = []
        self._open: str | None = None
        self._level: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "td" and "tile" in classes:
            title = a["title"]
            head, _, where = title.splitlines()[:3]
            case, defect = head.split(" · ")[0].split()[1], head.split(" · ")[1].split()[1]
            condition = where.split(" · ")[0].split()[1]
            self.tiles[(case, defect, condition)] = (classes[1], a.get("data-evidence"), title)
        if tag == "td" and "evidence" in classes:
            self._open, self._level = "evidence", a.get("data-evidence")

    def handle_data(self, data):
        if self._open == "evidence":
            self.evidence.append((self._level, data.strip()))
            self._open = None


def test_score_says_which_evidence_each_figure_rests_on(rundir, tmp_path):
    _label(rundir, tmp_path)
    proc = run_cli("score", rundir, "--json", "--bootstrap", "100")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)["conditions"]
    alpha, beta = data[ALPHA]["metric_evidence"], data[BETA]["metric_evidence"]
    assert alpha["defect_recall"] == {"level": "human", "judged": True, "human": 5, "judge": 0, "automatic": 0}
    assert alpha["fp_per_clean_case"] == {"level": "human", "judged": True, "human": 1, "judge": 0, "automatic": 0}
    assert alpha["precision"]["human"] == 6
    assert alpha["located_recall"]["judged"] is False and alpha["located_recall"]["level"] == "automatic"
    assert beta["defect_recall"] == {"level": "automatic", "judged": True, "human": 1, "judge": 0, "automatic": 1}
    assert (data[ALPHA]["evidence"], data[BETA]["evidence"]) == ("human", "automatic")

    text = run_cli("score", rundir, "--bootstrap", "100", "--details").stdout.split("\ndetails: ", 1)[1]
    alpha_text, beta_text = text.split(f"\n{BETA}")[0], text.split(f"\n{BETA}")[1]
    assert "(labels, else a naming remark the mirror did not get); evidence: people" in alpha_text
    assert "(upper bound); evidence: automatic (matching)" in alpha_text
    assert "(labels, else a naming remark the mirror did not get); evidence: automatic (people 1 of 2)" in beta_text


def test_report_tiles_and_scoreboard_show_who_judged_them(rundir, tmp_path):
    _label(rundir, tmp_path)
    data = build_report(rundir, ReportOptions(bootstrap=100, overrides=score_overrides(rundir)))
    page = _Cells()
    page.feed(render_html(data))
    tiles = page.tiles
    assert len(tiles) == 6  # 3 defects x 2 conditions x 1 repetition
    assert tiles[("case-1", "d-1", ALPHA)][:2] == ("found", "human")
    assert "judged by people (final human labels)" in tiles[("case-1", "d-1", ALPHA)][2]
    assert tiles[("case-2", "d-2", ALPHA)][:2] == ("found", "human")
    # People called the only comment at d-3 a false positive: located (where it lands), not found.
    assert tiles[("case-2", "d-3", ALPHA)][:2] == ("located", "human")
    assert "LOCATED, not identified (labelled so)" in tiles[("case-2", "d-3", ALPHA)][2]
    assert tiles[("case-1", "d-1", BETA)][:2] == ("located", "automatic")
    assert "a label would settle it" in tiles[("case-1", "d-1", BETA)][2]
    assert "judged by automatic matching" in tiles[("case-1", "d-1", BETA)][2]
    assert tiles[("case-2", "d-2", BETA)][:2] == ("located", "human")
    assert tiles[("case-2", "d-3", BETA)][:2] == ("missed", "automatic")

    # The scoreboard: one evidence cell per rate metric and condition, in condition order.
    rates = [name for name in data.conditions[0].metrics if name not in ("latency_s", "tokens")]
    cells = page.evidence
    assert len(cells) == 2 * len(data.conditions[0].metrics)  # latency and tokens: "measured"
    by_metric = dict(zip(data.conditions[0].metrics, zip(cells[::2], cells[1::2], strict=True), strict=True))
    assert by_metric["defect_recall"] == (("human", "people"), ("automatic", "automatic (people 1 of 2)"))
    assert by_metric["located_recall"][0] == ("automatic", "automatic (matching)")
    assert by_metric["latency_s"] == ((None, "measured"), (None, "measured"))
    assert all(level in ("human", "judge", "automatic") for name in rates for level, _ in by_metric[name])
