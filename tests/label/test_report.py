"""The report's human-labels section: shown only with labels, escaped, no script."""

from __future__ import annotations

import re

from reviewbench.evidence.overrides import score_overrides
from reviewbench.label import import_labels
from reviewbench.label.report import labels_section, labels_view, render_labels_section
from reviewbench.report import ReportOptions, build_report, render_html
from reviewbench.score import ScoreOptions, score_run

from ..conftest import run_cli
from .conftest import CONDITIONS
from .test_store import YES, keys_by_text, plan, row, write


def test_no_labels_no_section(rundir):
    assert labels_view(rundir) is None and labels_section(rundir) == ""
    html = render_html(build_report(rundir, ReportOptions(bootstrap=100, include_unvalidated=True)),
                       labels_section(rundir))
    assert 'id="labels"' not in html


def test_the_section_shows_agreement_evidence_actionability_and_triage(rundir, tmp_path):
    keys = keys_by_text(rundir)
    nit = keys["style nit"]
    import_labels(rundir, write(tmp_path / "ann.jsonl", plan(keys)), rater="<i>ann")
    bob = plan(keys, {"style nit": row(nit, "true_finding", "d-1", YES)})
    import_labels(rundir, write(tmp_path / "bob.jsonl", bob), rater="bob")
    view = labels_view(rundir, resamples=100)
    by_name = {c.name: c for c in view.conditions}
    first, second = by_name[CONDITIONS[0]], by_name[CONDITIONS[1]]
    # first condition: 6 comments, the nit disputed; second: 2 comments, both settled
    assert (first.comments, first.human, first.judge, first.automatic) == (6, 5, 0, 1)
    assert (second.comments, second.human, second.automatic) == (2, 2, 0)
    assert first.by_class["true_finding"] == 4 and second.by_class["unclear"] == 1
    assert view.disputed == 1 and view.pairs[0].classes.n == 10
    assert set(view.triage_by_case) == {"case-1", "case-2", "case-3"}
    fragment = str(render_labels_section(view))
    assert "&lt;i&gt;ann" in fragment and "<i>ann" not in fragment
    assert "<script" not in fragment and "style=" not in fragment
    assert fragment.count("<circle") >= 5  # one dot per case and condition, plus the legend
    html = render_html(build_report(rundir, ReportOptions(bootstrap=100, include_unvalidated=True)),
                       labels_section(rundir, resamples=100))
    assert 'id="labels"' in html and "Cohen's kappa" in html
    assert re.search(r"No judge has been calibrated", html)


def test_the_report_command_includes_the_section(rundir, tmp_path):
    keys = keys_by_text(rundir)
    import_labels(rundir, write(tmp_path / "ann.jsonl", plan(keys)), rater="ann")
    out = tmp_path / "r.html"
    proc = run_cli("report", rundir, "--html", out, "--bootstrap", "100", "--include-unvalidated")
    assert proc.returncode == 0, proc.stderr
    html = out.read_text()
    assert 'id="labels"' in html and "No two raters have labelled the same claims yet." in html


def test_labelled_precision_with_the_unclear_sensitivity_and_its_flag(rundir, tmp_path):
    # Both raters label as planned (test_store.plan): condalphasecret has 3 gold-linked true
    # findings, 1 valid incidental, 2 false positives; condbetasecret's long comment is a true
    # finding of d-1 (its other parts duplicates) and "maybe a problem here" is unclear.
    keys = keys_by_text(rundir)
    for rater in ("ann", "bob"):
        import_labels(rundir, write(tmp_path / f"{rater}.jsonl", plan(keys)), rater=rater)
    gates = tmp_path / "gates.toml"
    gates.write_text('min_defect_cases = 1\nmin_controls = 1\nmax_interval_width = 1.0\n'
                     '[[tier]]\nname = "t"\nwhen = [{ metric = "precision", op = ">=", value = 0.7 }]\n'
                     '[fallback]\nname = "none"\n')  # fmt: skip
    # The flag is the score's own: condbetasecret's scoreboard precision is 1/1 with the
    # unclear comment (at d-2) left out, 1/2 counted false (fails 0.7), 2/2 counted true.
    scored = score_run(rundir, ScoreOptions(bootstrap=100, gates=gates, include_unvalidated=True,
                                            overrides=score_overrides(rundir)))  # fmt: skip
    unclear = {name: c.unclear for name, c in scored.conditions.items()}
    view = labels_view(rundir, resamples=50, unclear=unclear)
    first, second = (next(c for c in view.conditions if c.name == name) for name in CONDITIONS)
    p = first.precision
    assert (p.gold.numerator, p.gold.denominator, p.expanded.numerator, p.unclear) == (3, 6, 4, 0)
    assert first.scored_unclear is None  # nothing unclear: no sensitivity, no flag
    q = second.precision
    assert (q.gold.value, q.unclear, q.unclear_as_false.value, q.unclear_as_true.value) == (1.0, 1, 0.5, 1.0)
    assert second.scored_unclear.decision_changes is True  # 1/2 fails, 2/2 passes: the unclear claim decides
    fragment = str(render_labels_section(view))
    assert 'id="labelled-precision"' in fragment
    assert fragment.count("<strong>changes</strong>") == 1
    assert "none (not earned) if all unclear are false, t (granted) if all are true" in fragment
    assert "no unclear comment scored" in fragment
    assert labels_view(rundir, resamples=50).conditions[1].scored_unclear is None  # no score given: no flag


def test_the_section_shows_minutes_per_person_and_the_rater_profiles_in_aggregate(rundir, tmp_path):
    """ann and bob label all 10 claims at 12 s each (2 min per rater); the profiles of ann
    (python, regular security review) and cat (authored the fixture, labelled nothing) show as
    counts: 3 raters, 2 profiled, 1 conflicted; no profile names its person."""
    from reviewbench.evidence.records import RaterProfile, SecurityReview
    from reviewbench.label import LabelStore, Role

    keys = keys_by_text(rundir)
    rows = [{**r, "triage_s": 12} for r in plan(keys)]
    for rater in ("ann", "bob"):
        import_labels(rundir, write(tmp_path / f"{rater}.jsonl", rows), rater=rater)
    with LabelStore(rundir) as store:
        store.set_profile("ann", Role.RATER, RaterProfile(languages=["python"],
                                                          security_review=SecurityReview.REGULAR))  # fmt: skip
        store.set_profile("cat", Role.RATER, RaterProfile(authored_fixture=True))
    view = labels_view(rundir, resamples=0)
    assert view.people.raters == {"ann": {"claims": 10, "minutes": 2.0}, "bob": {"claims": 10, "minutes": 2.0}}
    fragment = str(render_labels_section(view))
    assert "Adjudicators' extra time: 0.00 min over the raters' 4.00 min (0.0%)" in fragment
    assert "2 of 3 raters declared a profile" in fragment
    assert "Languages: python 1." in fragment and "Security review: regular 1." in fragment
    assert "Conflicted (authored the fixture or declared a conflict): 1 of 3" in fragment
    profiles = fragment[fragment.index('id="rater-profiles"'):]
    assert "ann" not in profiles and "cat" not in profiles.split("</p>")[0]
