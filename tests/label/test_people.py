"""Rater profiles, conflicted raters and triage time per person, on a real run directory and
label store, through the CLI as a user runs it (and the app over loopback HTTP)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from reviewbench.errors import LabelChainBroken
from reviewbench.evidence.people import people_time, profile_summary
from reviewbench.evidence.records import LabelRow, RaterProfile
from reviewbench.evidence.resolve import ClaimStatus, claim_status, final_labels
from reviewbench.evidence.store import LabelStore, Role
from reviewbench.label.app import AppOptions

from ..conftest import run_cli
from .conftest import Http
from .test_app import browser, page  # noqa: F401 (Chromium fixtures)


def one_error(proc, code, fragment):
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if line.strip()]
    assert line.startswith("reviewbench: error: ") and fragment in line, line


def _claims(rundir):
    with LabelStore(rundir) as store:
        return store.packets().claims


def _rows(claims, cls="false_positive", triage_s=None):
    return [{"comment_id": c.comment_id, "part": c.part, "class": cls, "triage_s": triage_s} for c in claims]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _status(rundir, key):
    with LabelStore(rundir) as store:
        return claim_status(store.latest(Role.RATER), {}, key)


def test_a_rater_who_authored_the_fixture_cannot_give_a_first_label(rundir, tmp_path):
    claims = _claims(rundir)
    first, rest = claims[:1], claims[1:]
    proc = run_cli("label", "invite", rundir, "cat", "--language", "python", "--authored-fixture")
    assert proc.returncode == 0 and "cat is conflicted" in proc.stderr
    # cat labels the first claim before anyone without a conflict: refused, nothing written
    one_error(run_cli("label", "import", rundir, _write(tmp_path / "cat.jsonl", _rows(first)), "--rater", "cat"),
              2, "cat.jsonl:1: rater cat declared a conflict")  # fmt: skip
    with LabelStore(rundir) as store:
        assert store.rows(role=Role.RATER) == []
    # once ann labelled it, cat's label is a second independent one and the claim is final
    assert run_cli("label", "import", rundir, _write(tmp_path / "ann.jsonl", _rows(first)), "--rater", "ann").returncode == 0
    assert run_cli("label", "import", rundir, tmp_path / "cat.jsonl", "--rater", "cat").returncode == 0
    key = (first[0].comment_id, first[0].part)
    with LabelStore(rundir) as store:
        assert key in final_labels(store)
        # the rest are still closed to cat
        assert store.first_label_problem(LabelRow.model_validate(_rows(rest)[0]), "CAT") is not None
        assert store.open_to_conflicted() == {key}


def test_a_conflict_declared_after_labelling_sets_aside_the_first_labels(rundir, tmp_path):
    claims = _claims(rundir)
    key = (claims[0].comment_id, claims[0].part)
    assert run_cli("label", "import", rundir, _write(tmp_path / "cat.jsonl", _rows(claims)), "--rater", "cat").returncode == 0
    assert run_cli("label", "import", rundir, _write(tmp_path / "ann.jsonl", _rows(claims[:1])),
                   "--rater", "ann").returncode == 0  # fmt: skip
    assert _status(rundir, key) is ClaimStatus.AGREED
    proc = run_cli("label", "profile", rundir, "cat", "--conflict", "I reviewed the fixes under test")
    assert proc.returncode == 0 and "(conflicted)" in proc.stderr
    # cat labelled every claim before ann: none of cat's labels counts now, every one waits
    assert _status(rundir, key) is ClaimStatus.SINGLE
    with LabelStore(rundir) as store:
        assert final_labels(store) == {}
        assert store.latest(Role.RATER).get("cat") is None
        assert len(store.latest(Role.RATER, counted=False)["cat"]) == len(claims)
        summary = profile_summary(store)
    assert (summary.raters, summary.profiled, summary.conflicted, summary.labels_set_aside) == (2, 1, 1, len(claims))
    status = json.loads(run_cli("label", "status", rundir, "--json").stdout)
    assert status["profiles"]["labels_set_aside"] == len(claims)
    assert status["chain"]["profiles"]["rows"] == 1


def test_profiles_are_shown_counted_over_people_and_chained(rundir, tmp_path):
    for name, options in (("ann", ["--language", "python", "--language", "Go", "--security-review", "regular",
                                   "--familiarity", "maintainer"]),
                          ("bob", ["--language", "python", "--security-review", "none", "--familiarity", "none"]),
                          ("cat", ["--authored-fixture"])):  # fmt: skip
        assert run_cli("label", "invite", rundir, name, *options).returncode == 0
    assert run_cli("label", "invite", rundir, "dan").returncode == 0  # no profile declared
    status = json.loads(run_cli("label", "status", rundir, "--json").stdout)
    assert status["profiles"] == {"raters": 4, "profiled": 3, "languages": {"go": 1, "python": 2},
                                  "security_review": {"none": 1, "regular": 1},
                                  "familiarity": {"none": 1, "maintainer": 1}, "authored_fixture": 1,
                                  "conflicted": 1, "labels_set_aside": 0}  # fmt: skip
    text = run_cli("label", "status", rundir).stdout
    assert "rater profiles: 3 of 4 raters declared one" in text
    assert "conflicted: 1 of 4 (authored the fixture: 1)" in text
    one_error(run_cli("label", "invite", rundir, "eve", "--security-review", "expert"), 2, "--security-review")
    # the profiles are append-only and chained like the labels
    with LabelStore(rundir) as store:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store.db.execute("UPDATE profiles SET profile = '{}'")
        store.db.execute("DROP TRIGGER profiles_no_update")
        store.db.execute("UPDATE profiles SET profile = ? WHERE name = 'cat'", (RaterProfile().model_dump_json(),))
        with pytest.raises(LabelChainBroken, match="profiles row 3"):
            store.verify_chain()
    one_error(run_cli("label", "status", rundir), 1, "profiles row 3")


def test_triage_minutes_per_rater_and_the_adjudicators_extra_time(rundir, tmp_path):
    """ann labels 10 claims at 30 s each (5 min), bob 10 at 60 s (10 min) and disagrees on one;
    ada adjudicates it in 90 s (1.5 min). Extra time: 1.5 / (5 + 10) = 0.1."""
    claims = _claims(rundir)
    ann = _rows(claims, triage_s=30)
    bob = _rows(claims, triage_s=60)
    bob[0]["class"] = "unclear"
    run_cli("label", "import", rundir, _write(tmp_path / "ann.jsonl", ann), "--rater", "ann")
    run_cli("label", "import", rundir, _write(tmp_path / "bob.jsonl", bob), "--rater", "bob")
    adjudication = {**ann[0], "triage_s": 90, "reason": "no defect there"}
    assert run_cli("label", "import", rundir, _write(tmp_path / "ada.jsonl", [adjudication]),
                   "--adjudicator", "ada").returncode == 0  # fmt: skip
    with LabelStore(rundir) as store:
        time = people_time(store)
    assert time.raters == {"ann": {"claims": 10, "minutes": 5.0}, "bob": {"claims": 10, "minutes": 10.0}}
    assert time.adjudicators == {"ada": {"claims": 1, "minutes": 1.5}}
    assert (time.rater_minutes, time.adjudication_minutes, time.extra_share) == (15.0, 1.5, 0.1)
    report = json.loads(run_cli("agreement", rundir, "--json", "--bootstrap", "0").stdout)
    assert report["time"]["extra_share"] == {"value": 0.1, "numerator": 1.5, "denominator": 15.0}
    text = run_cli("agreement", rundir, "--bootstrap", "0").stdout
    assert "triage minutes per rater: ann 5.00 (10 claims), bob 10.00 (10 claims)" in text
    assert "adjudicators' extra time: 1.50 min over the raters' 15.00 min = 10.0%" in text
    verdicts = json.loads(run_cli("label", "verdicts", rundir, "--json").stdout)
    assert verdicts["time"]["adjudicators"] == {"ada": {"claims": 1, "minutes": 1.5}}
    assert "adjudicators' extra time: 1.50 min" in run_cli("label", "verdicts", rundir).stdout


def test_score_json_counts_the_raters_without_naming_them(rundir, tmp_path):
    """ann (python, regular) and bob (no profile) label all 10 claims at 6 s: 1 min each, 2 in all."""
    claims = _claims(rundir)
    assert run_cli("label", "invite", rundir, "ann", "--language", "python", "--security-review",
                   "regular").returncode == 0  # fmt: skip
    for rater in ("ann", "bob"):
        run_cli("label", "import", rundir, _write(tmp_path / f"{rater}.jsonl", _rows(claims, triage_s=6)),
                "--rater", rater)  # fmt: skip
    proc = run_cli("score", rundir, "--json", "--bootstrap", "200", "--include-unvalidated")
    assert proc.returncode == 0, proc.stderr
    raters = json.loads(proc.stdout)["raters"]
    assert raters == {"raters": 2, "profiled": 1, "languages": {"python": 1}, "security_review": {"regular": 1},
                      "familiarity": {}, "authored_fixture": 0, "conflicted": 0, "labels_set_aside": 0,
                      "rater_minutes": 2.0, "adjudication_minutes": 0.0, "extra_share": 0.0}  # fmt: skip
    assert "ann" not in json.dumps(raters) and "bob" not in json.dumps(raters)


def test_the_app_offers_a_conflicted_rater_only_claims_labelled_first_by_another(rundir, serve):
    claims = _claims(rundir)
    with LabelStore(rundir) as store:
        cat = store.invite("cat", Role.RATER)
        store.set_profile("cat", Role.RATER, RaterProfile(conflict="wrote case-1's fix"))
    http = Http(serve(AppOptions(rundir)))
    cookie = {"cookie": f"reviewbench_token={cat}"}
    packet = claims[0].packet_id
    body = {"labels": [{"comment_id": claims[0].comment_id, "part": claims[0].part, "class": "false_positive"}]}
    status, _, text = http.post_json(f"/r/cat/p/{packet}", body, cookie)
    assert status == 409 and "declared a conflict" in text
    status, _, page = http.get("/r/cat", cookie)
    assert status == 200 and "Nothing is open to you now, cat" in page  # nothing is open to cat yet
    with LabelStore(rundir) as store:
        store.add([LabelRow.model_validate(body["labels"][0])], author="ann", role=Role.RATER, source="import")
    status, headers, _ = http.get("/r/cat", cookie)
    assert status == 303 and headers["location"] == f"/r/cat/p/{packet}"
    status, _, page = http.get(f"/r/cat/p/{packet}", cookie)
    assert status == 200 and page.count('<article class="claim') == 1
    assert http.post_json(f"/r/cat/p/{packet}", body, cookie)[0] == 200
    with LabelStore(rundir) as store:
        assert (claims[0].comment_id, claims[0].part) in final_labels(store)


# -- the rubric file ------------------------------------------------------------------------


@pytest.fixture
def registered(rundir, tmp_path):
    """The run directory registered (late: its runs exist) with an experiment naming a rubric."""
    (tmp_path / "rubric.md").write_text("A true finding names the broken behaviour and its line.\n")
    experiment = tmp_path / "experiment.toml"
    experiment.write_text('corpus = "corpus"\nrepeats = 1\nrubric = "rubric.md"\n'
                          '[[condition]]\nname = "condalphasecret"\nreviewer = { kind = "flag_all" }\n'
                          '[[condition]]\nname = "condbetasecret"\nreviewer = { kind = "flag_all" }\n')  # fmt: skip
    proc = run_cli("register", experiment, "--out", rundir, "--late")
    assert proc.returncode == 0, proc.stderr
    return rundir, experiment


def _frozen_rubric(rundir):
    return json.loads((rundir / "registration.json").read_text())["versions"][-1]["frozen"]["rubric"]


def test_labels_under_an_older_rubric_are_queued_again(registered, tmp_path, serve):
    import hashlib

    from reviewbench.errors import UsageError
    from reviewbench.review.experiment import load_experiment
    from reviewbench.score.registration import check_registration

    rundir, experiment = registered
    digest = hashlib.sha256((tmp_path / "rubric.md").read_bytes()).hexdigest()
    first = _frozen_rubric(rundir)
    assert first == {"version": f"user-{digest[:12]}", "path": str((tmp_path / "rubric.md").resolve()),
                     "sha256": digest}  # fmt: skip
    claims = _claims(rundir)
    for rater in ("ann", "bob"):
        assert run_cli("label", "import", rundir, _write(tmp_path / f"{rater}.jsonl", _rows(claims)),
                       "--rater", rater).returncode == 0  # fmt: skip
    with LabelStore(rundir) as store:
        assert {r.rubric_version for r in store.rows()} == {first["version"]}
        assert len(final_labels(store)) == len(claims)
    # the app shows the rubric's text, escaped
    with LabelStore(rundir) as store:
        token = store.invite("ann", Role.RATER)
    http = Http(serve(AppOptions(rundir)))
    status, _, page = http.get(f"/r/ann/p/{claims[0].packet_id}", {"cookie": f"reviewbench_token={token}"})
    assert status == 200 and "names the broken behaviour and its line" in page and first["version"] in page

    (tmp_path / "rubric.md").write_text("A true finding names the broken behaviour, its line and a <b>fix</b>.\n")
    # the registration holds the rubric: a changed file is a changed input, and the app refuses it
    with pytest.raises(UsageError, match="rubric changed since registration"):
        check_registration(load_experiment(experiment), rundir)
    one_error(run_cli("label", "serve", rundir, "--rater", "ann", "--port", "0"), 1,
              "changed since registration")  # fmt: skip
    assert run_cli("register", experiment, "--out", rundir, "--new-version", "--late").returncode == 0
    second = _frozen_rubric(rundir)
    assert second["version"] != first["version"]
    # every label was given under the older rubric: none counts, every claim waits for two again
    with LabelStore(rundir) as store:
        assert final_labels(store) == {}
        assert len(store.rows()) == 2 * len(claims)  # nothing was deleted
    queue = json.loads(run_cli("label", "queue", rundir, "--json").stdout)
    assert queue["remaining"]["claims"] == len(claims) and queue["remaining"]["labels_needed"] == 2 * len(claims)
    status = json.loads(run_cli("label", "status", rundir, "--json").stdout)
    assert status["rubric"] == {"version": second["version"], "older_labels": 2 * len(claims)}
    # a label given again is under the new rubric, and counts
    assert run_cli("label", "import", rundir, tmp_path / "ann.jsonl", "--rater", "ann").returncode == 0
    with LabelStore(rundir) as store:
        assert {r.rubric_version for r in store.rows()[-len(claims):]} == {second["version"]}
        assert _status(rundir, (claims[0].comment_id, claims[0].part)) is ClaimStatus.SINGLE


def test_in_the_browser_a_conflicted_rater_labels_only_what_another_labelled_first(rundir, serve, page):
    """Real Chromium: cat (authored the fixture) finds nothing open; once ann labelled one claim,
    cat's link opens that packet with that one claim, labelled with the keyboard and saved."""
    claims = _claims(rundir)
    with LabelStore(rundir) as store:
        cat = store.invite("cat", Role.RATER)
        store.set_profile("cat", Role.RATER, RaterProfile(authored_fixture=True))
    base = serve(AppOptions(rundir))
    page.goto(f"{base}/?token={cat}")
    page.wait_for_selector("#done")
    assert "you declared a conflict" in page.inner_text("#done")
    first = claims[0]
    with LabelStore(rundir) as store:
        store.add([LabelRow.model_validate({"comment_id": first.comment_id, "part": first.part,
                                            "class": "false_positive"})], author="ann", role=Role.RATER,
                  source="import")  # fmt: skip
    page.goto(f"{base}/r/cat")
    page.wait_for_selector("article.claim.current")
    assert page.locator("article.claim").count() == 1 and f"/p/{first.packet_id}" in page.url
    for key in ("f", "Enter"):
        page.keyboard.press(key)
    page.wait_for_selector("#done")
    assert page.log["errors"] == []
    with LabelStore(rundir) as store:
        assert [(r.author, r.key) for r in store.rows(role=Role.RATER)] == [("ann", (first.comment_id, first.part)),
                                                                            ("cat", (first.comment_id, first.part))]
        assert (first.comment_id, first.part) in final_labels(store)
