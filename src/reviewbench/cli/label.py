"""``reviewbench label``, ``agreement`` and ``judge``: human labels and a calibrated judge."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.table import Table

from ._group import HelpGroup
from ._output import console, err_console, escape, print_json, printable

if TYPE_CHECKING:
    from ..evidence.people import PeopleTime
    from ..evidence.records import RaterProfile

__all__ = ["agreement_command", "judge_group", "label_group"]

_RUNDIR = click.argument("rundir", type=click.Path(path_type=Path, file_okay=False))


@click.group("label", cls=HelpGroup, order=("serve", "invite", "profile", "practice", "export", "import", "carry", "queue",
                                             "status", "verdicts"))  # fmt: skip
def label_group() -> None:
    """Human labels: packets for blinded raters, a labelling app, adjudication.

    \b
    Examples:
      reviewbench label export runs/first --out packets.jsonl
      reviewbench label serve runs/first --rater ann --rater bob   # one secret link each
      reviewbench label import runs/first ann.jsonl --rater ann
      reviewbench label serve runs/first --adjudicator ada         # she sees the disagreements
      reviewbench label invite runs/first cat                      # one more rater's link
      reviewbench label invite runs/first dan --language python --security-review regular --authored-fixture
      reviewbench label practice runs/first practice.jsonl         # a practice set before scoring opens
      reviewbench label queue runs/first                           # what to label first
      reviewbench label status runs/first                          # who, how many, chain head
      reviewbench label carry runs/first runs/second               # the labels of identical claims
      reviewbench label sample runs/first                          # five scored runs to read by hand
      reviewbench label read runs/first --run RUN_ID --by ann      # one of them read
      reviewbench agreement runs/first --json
    """


@label_group.command("export")
@_RUNDIR
@click.option("--out", required=True, type=click.Path(path_type=Path, dir_okay=False), help="JSONL file to write.")
@click.option("--rater", help="Write this rater's current labels (import format) instead of packets.")
@click.option("--adjudicator", help="Write this adjudicator's final labels instead of packets.")
def export_command(rundir: Path, out: Path, rater: str | None, adjudicator: str | None) -> None:
    """Write de-identified packets (one per review with findings), or one person's labels.

    A packet holds an opaque packet_id, the diff, the validation's test output, the case's
    gold defects and the review's atomic claims in a fixed random order, each with an
    opaque comment_id. Nothing in it names the condition, model, prompt, guidance,
    repetition or run.
    """
    from ..label import export_labels, export_packets

    if rater or adjudicator:
        n = export_labels(rundir, out, rater=rater, adjudicator=adjudicator)
        err_console.print(f"wrote {n} labels of {rater or adjudicator or ''} to {out!s}")
    else:
        n = export_packets(rundir, out)
        err_console.print(f"wrote {n} packets to {out!s}")


@label_group.command("import")
@_RUNDIR
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--rater", help="The labels are this rater's initial labels.")
@click.option("--adjudicator", help="The labels are this adjudicator's final labels (rows need a 'reason').")
def import_command(rundir: Path, file: Path, rater: str | None, adjudicator: str | None) -> None:
    """Append labels from a JSONL file to RUNDIR/labels.sqlite (nothing is overwritten).

    Rows: {"comment_id", "part", "class", "defect_id", "fields": {"location", "consequence",
    "evidence", "safe_fix", "severity_fit"}, "triage_s", "note"}, plus "reason" for
    adjudications. "part" defaults to 0. A true finding's defect_id is a gold defect id or
    "valid_incidental" (then "note" says what it is).
    """
    from ..label import import_labels

    n = import_labels(rundir, file, rater=rater, adjudicator=adjudicator)
    who = f"rater {rater}" if rater else f"adjudicator {adjudicator}"
    err_console.print(f"imported {n} labels from {file!s} as {who}")


@label_group.command("carry")
@click.argument("old", type=click.Path(path_type=Path, file_okay=False))
@click.argument("new", type=click.Path(path_type=Path, file_okay=False))
@click.option("--dry-run", is_flag=True, help="Say what would be carried; write no label.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def carry_command(old: Path, new: Path, dry_run: bool, as_json: bool) -> None:
    """Carry people's labels from OLD to the identical claims of NEW (a rerun on the same corpus).

    Identical: the same case, the same path and line, the same text once split into atomic
    claims and normalised (NFC, case-folded, white space collapsed), the same occurrence in
    its review. Every rater's and adjudicator's current label is copied as a row marked
    carried, with where it came from (OLD's label chain head, the row's seq and digest).
    Scores use them; agreement leaves them out. Claims NEW has labels of already, and judge
    labels, are not carried. Refused when the two runs recorded different gold. OLD is
    only read.
    """
    from ..label.carry import carry_labels

    result = carry_labels(old, new, dry_run=dry_run)
    if as_json:
        print_json(result.as_dict())
        return
    o = result.origin
    roles = ", ".join(f"{n} {role}" for role, n in sorted(result.by_role.items())) or "none"
    verb = "would carry" if dry_run else "carried"
    count = result.planned if dry_run else result.written
    console.print(f"{verb} {count} labels ({roles}) to {result.claims} of {result.target_claims} claims of {new} "
                  f"from {old} (labels chain {o.labels_rows} rows, head {o.labels_head[:12]}…; gold "
                  f"{o.gold_sha256[:12]}…)", markup=False)  # fmt: skip
    console.print(f"  {result.origin_claims} labelled claims in {old}: {result.claims} carried, {result.skipped} "
                  f"already labelled in {new} (kept), {result.unmatched} with no identical claim in {new}",
                  markup=False)  # fmt: skip
    console.print(f"  {result.unlabelled} claims of {new} have no human label: 'reviewbench label queue {new}'",
                  markup=False)  # fmt: skip


def _link(port: int, token: str) -> str:
    return f"http://127.0.0.1:{port}/?token={token}"


@label_group.command("serve")
@_RUNDIR
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535),
              help="Loopback port (0: any free one).")  # fmt: skip
@click.option("--rater", "raters", multiple=True, metavar="NAME", help="Issue a link for this rater (repeatable).")
@click.option("--adjudicator", "adjudicators", multiple=True, metavar="NAME",
              help="Issue a link for this adjudicator (repeatable): disagreements only, final labels.")  # fmt: skip
def serve_command(rundir: Path, port: int, raters: tuple[str, ...], adjudicators: tuple[str, ...]) -> None:
    """Start the labelling web app on 127.0.0.1 (offline: nothing is loaded from elsewhere).

    Every person named gets a new secret token (an earlier one of theirs stops working) and
    one link, printed here once: http://127.0.0.1:PORT/?token=T. Hand each link to its
    person only; the app refuses every page without a valid token, and a token opens its
    own person's pages only. People invited before with 'label invite' keep their links.
    Names are case-insensitive.

    Raters see packets in their own random order, never another rater's labels, 25 claims
    to a page; every field has a keyboard shortcut; triage time is active time (paused while
    the tab is hidden or idle for more than 60 s). Adjudicators see only the disagreements,
    with every rater's label, and record final labels with a reason. Stop with Ctrl-C.
    """
    from ..errors import UsageError
    from ..evidence.store import LabelStore, Role, check_name
    from ..label.app import AppOptions, serve

    issued: list[tuple[str, Role, str]] = []
    people = []

    def prepare() -> None:  # once the run directory is known to hold claims: no token rotated for nothing
        with LabelStore(rundir) as store:
            if not (raters or adjudicators or store.people()):
                raise UsageError("nobody could open the app: name its people with --rater NAME and --adjudicator "
                                 "NAME, or invite them with 'reviewbench label invite RUNDIR NAME'")  # fmt: skip
            issued.extend((name, role, store.invite(name, role))
                          for names, role in ((raters, Role.RATER), (adjudicators, Role.ADJUDICATOR))
                          for name in names)  # fmt: skip
            people.extend(store.people())

    for names, what in ((raters, "rater"), (adjudicators, "adjudicator")):
        for name in names:
            check_name(name, what)  # a bad name is refused before anything is built

    def ready(bound: int) -> None:  # plain lines: a link must never be wrapped
        click.echo(f"labelling app on http://127.0.0.1:{bound}/; Ctrl-C to stop. One link per person, "
                   "each for that person only:", err=True)  # fmt: skip
        for name, role, token in issued:
            click.echo(f"  {role.value} {name}: {_link(bound, token)}", err=True)
        others = [p for p in people if (p.name.casefold(), p.role) not in {(n.casefold(), r) for n, r, _ in issued}]
        if others:
            click.echo(f"  and {len(others)} invited before, with their own links: "
                       + ", ".join(f"{p.role.value} {p.name}" for p in others), err=True)  # fmt: skip

    serve(AppOptions(rundir=rundir), port, on_ready=ready, prepare=prepare)


def _profile_options(command: Callable[..., None]) -> Callable[..., None]:
    """The profile a person declares at invitation (``RaterProfile``)."""
    from ..evidence.records import Familiarity, SecurityReview

    options = [
        click.option("--language", "languages", multiple=True, metavar="LANG",
                     help="A programming language they review in (repeatable)."),
        click.option("--security-review", type=click.Choice([v.value for v in SecurityReview]),
                     help="Their security-review experience."),
        click.option("--familiarity", type=click.Choice([v.value for v in Familiarity]),
                     help="How well they know the code under review."),
        click.option("--authored-fixture", is_flag=True,
                     help="They wrote part of the fixture (the changes, fixes or gold): conflicted."),
        click.option("--conflict", metavar="TEXT", help="A declared conflict of interest, in their words."),
    ]  # fmt: skip
    for option in reversed(options):
        command = option(command)
    return command


def _profile(languages: tuple[str, ...], security_review: str | None, familiarity: str | None,
             authored_fixture: bool, conflict: str | None) -> RaterProfile:  # fmt: skip
    from ..errors import UsageError
    from ..evidence.records import RaterProfile

    if any(not lang.strip() or len(lang) > 40 or not lang.isprintable() for lang in languages):
        raise UsageError("a --language is 1 to 40 printable characters")
    if conflict is not None and (not conflict.strip() or len(conflict) > 500):
        raise UsageError("--conflict is 1 to 500 characters saying what the conflict is")
    return RaterProfile(languages=[lang.strip() for lang in languages], security_review=security_review,
                        familiarity=familiarity, authored_fixture=authored_fixture, conflict=conflict)  # fmt: skip


def _profile_given(*values: object) -> bool:
    return any(bool(v) for v in values)


@label_group.command("invite")
@_RUNDIR
@click.argument("name")
@click.option("--adjudicator", is_flag=True, help="Invite an adjudicator (default: a rater).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535),
              help="The port 'label serve' listens on, for the link.")  # fmt: skip
@_profile_options
def invite_command(rundir: Path, name: str, adjudicator: bool, port: int, languages: tuple[str, ...],
                   security_review: str | None, familiarity: str | None, authored_fixture: bool,
                   conflict: str | None) -> None:  # fmt: skip
    """Issue a secret link for one rater (or adjudicator) and print it once.

    The person's earlier link, if any, stops working. The store keeps only the token's
    SHA-256. The link works with 'label serve RUNDIR --port PORT', running now or later.

    The profile options record who they are (shown only in aggregate: 'label status',
    the report). A rater who authored the fixture or declares a conflict never gives a
    claim's first independent label: the app offers them only claims a rater without a
    conflict labelled first, and an import of theirs is refused otherwise.
    """
    from ..evidence.store import LabelStore, Role

    role = Role.ADJUDICATOR if adjudicator else Role.RATER
    given = (languages, security_review, familiarity, authored_fixture, conflict)
    profile = _profile(*given) if _profile_given(*given) else None
    with LabelStore(rundir) as store:
        token = store.invite(name, role)
        if profile is not None:
            store.set_profile(name, role, profile)
    click.echo(_link(port, token))
    err_console.print(f"give this link to {role.value} {name} only: it is their identity in the app",
                      markup=False)  # fmt: skip
    if profile is not None and profile.conflicted:
        err_console.print(f"{name} is conflicted: they label only claims a rater without a conflict labelled first",
                          markup=False)  # fmt: skip


@label_group.command("profile")
@_RUNDIR
@click.argument("name")
@click.option("--adjudicator", is_flag=True, help="The profile of an adjudicator (default: a rater).")
@_profile_options
def profile_command(rundir: Path, name: str, adjudicator: bool, languages: tuple[str, ...],
                    security_review: str | None, familiarity: str | None, authored_fixture: bool,
                    conflict: str | None) -> None:  # fmt: skip
    """Record (again) the profile of a rater or adjudicator, keeping their link.

    The profile replaces their earlier one (both stay in labels.sqlite, chained). A
    conflict declared after labelling sets aside their labels of claims nobody without a
    conflict had labelled before them: those claims wait for another rater.
    """
    from ..evidence.store import LabelStore, Role

    role = Role.ADJUDICATOR if adjudicator else Role.RATER
    profile = _profile(languages, security_review, familiarity, authored_fixture, conflict)
    with LabelStore(rundir) as store:
        store.set_profile(name, role, profile)
    state = "conflicted" if profile.conflicted else "not conflicted"
    err_console.print(f"recorded the profile of {role.value} {name} ({state})", markup=False)


@label_group.command("practice")
@_RUNDIR
@click.argument("file", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def practice_command(rundir: Path, file: Path | None, as_json: bool) -> None:
    """Load a practice set (FILE), or say how every rater did on the current one.

    FILE is JSONL, one practice item a line: {"packet": a packet as 'label export' writes
    it (its ids the set's own, outside the corpus), "answers": the reference label of each
    of its claims} ('reviewbench schema practice'). In the app, a rater does the practice
    set first, then sees their agreement with the reference, claim by claim, before their
    first real packet. Practice labels never count as labels of the run.
    """
    from ..errors import UsageError
    from ..evidence.store import LabelStore, Role
    from ..label.practice import load_practice, practice_result, practice_set

    with LabelStore(rundir) as store:
        if file is not None:
            loaded = load_practice(store, file)
            claims = sum(len(item.packet.claims) for item in loaded.items)
            err_console.print(f"loaded practice set {loaded.sha256[:12]} ({len(loaded.items)} packets, {claims} "
                              f"claims) from {file}: raters do it before their first packet", markup=False)  # fmt: skip
            return
        practice = practice_set(store)
        if practice is None:
            raise UsageError(f"{rundir} has no practice set: load one with 'reviewbench label practice RUNDIR FILE'")
        names = sorted({p.name for p in store.people(Role.RATER)}
                       | set(store.latest(Role.RATER, probe=practice.probe, counted=False)))  # fmt: skip
        results = [practice_result(store, practice, name) for name in names]
    if as_json:
        print_json({"set_sha256": practice.sha256, "raters": [r.as_dict() for r in results]})
        return
    console.print(f"practice set {practice.sha256[:12]}: {len(practice.answers)} claims", markup=False)
    for r in results:
        a = r.as_dict()["agreement"]
        share = "n/a" if a["value"] is None else f"{a['value']:.1%}"
        state = "done" if r.done else f"{r.labelled} of {r.claims} labelled"
        console.print(f"  {r.rater}: agrees with the reference on {r.agree}/{r.labelled} ({share}); {state}",
                      markup=False)  # fmt: skip


@label_group.command("status")
@_RUNDIR
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status_command(rundir: Path, as_json: bool) -> None:
    """Who is invited, how many label rows each role wrote, and the SHA-256 chain heads.

    Every label and calibration row carries the SHA-256 of the row before it; the chain is
    checked here (a row edited, deleted or inserted by hand is an error) and its head is
    printed: publish or timestamp it when labelling ends, and a later head that differs
    shows the labels changed.
    """
    from ..evidence.people import people_time, profile_summary
    from ..evidence.store import LabelStore, Role

    with LabelStore(rundir) as store:
        labels, calibrations = store.verify_chain()
        profiles_head = store.verify_profiles()
        people = store.people()
        rows = {role.value: len(store.rows(role=role, probe=None)) for role in Role}
        carries = store.carries()
        profiles = profile_summary(store)
        time = people_time(store)
        rubric = store.rubric_version
        stale = sum(1 for role in (Role.RATER, Role.ADJUDICATOR) for per in store.latest(role, counted=False).values()
                    for label in per.values() if label.rubric_version != rubric)  # fmt: skip
    data = {"people": [{"name": p.name, "role": p.role.value, "invited_at": p.created_at} for p in people],
            "rows": rows, "carried": carries, "profiles": profiles.as_dict(), "time": time.as_dict(),
            "rubric": {"version": rubric, "older_labels": stale},
            "chain": {"labels": {"rows": labels.rows, "head_sha256": labels.head},
                      "calibrations": {"rows": calibrations.rows, "head_sha256": calibrations.head},
                      "profiles": {"rows": profiles_head.rows, "head_sha256": profiles_head.head}}}  # fmt: skip
    if as_json:
        print_json(data)
        return
    names = ", ".join(f"{p.role.value} {p.name}" for p in people) or "nobody yet ('label invite')"
    console.print(f"invited: {names}", markup=False)
    console.print("label rows: " + ", ".join(f"{role} {n}" for role, n in rows.items()), markup=False)
    for c in carries:
        console.print(f"  of which carried: {c['labels']} from {c['from_rundir']} (its labels chain {c['from_labels_rows']}"
                      f" rows, head {c['from_labels_head']}) at {c['carried_at']}", markup=False)  # fmt: skip
    for line in profiles.lines():
        console.print(line, markup=False)
    console.print(f"rubric {rubric}: {stale} current labels were given under an older rubric (queued again)",
                  markup=False)  # fmt: skip
    console.print(f"labels chain: {labels.rows} rows, head sha256 {labels.head}", markup=False)
    console.print(f"calibrations chain: {calibrations.rows} rows, head sha256 {calibrations.head}", markup=False)
    console.print(f"profiles chain: {profiles_head.rows} rows, head sha256 {profiles_head.head}", markup=False)


@label_group.command("queue")
@_RUNDIR
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=0), help="Claims to list.")
@click.option("--gates", type=click.Path(path_type=Path, dir_okay=False),
              help="Gates file (default: the registered one, else the built-in table).")
@click.option("--include-unvalidated/--validated-only", default=None,
              help="Which cases count, as for 'score' (default: as registered, else validated only).")
def queue_command(rundir: Path, as_json: bool, limit: int, gates: Path | None, include_unvalidated: bool | None) -> None:
    """Claims still waiting for people, most useful first, and how many remain per gate.

    Scores the run with the labels already in (as 'score' does, rewriting
    RUNDIR/verdicts.jsonl), then, for every condition and gate (tier or veto), says
    whether it is settled (passes or fails whatever the unlabelled claims turn out to be),
    moot (a veto holds, too few cases), or how many claims, and rater labels, can still
    change it. Claims that can change a gate come first; then disputed claims (for an
    adjudicator), single-rated ones (for a second rater), unlabelled ones.
    """
    from ..evidence.store import LabelStore
    from ..label.queue import label_queue, remaining_by_condition
    from ..label.settle import decisive_comments, score_with_labels, settlement
    from ..score.gates import veto_outcome

    with LabelStore(rundir) as store:
        items, _ = label_queue(store)
        settled = settlement(score_with_labels(rundir, gates, include_unvalidated), store, items)
        items, counts = label_queue(store, priority=decisive_comments(settled))
        by_condition = remaining_by_condition(store, items)
    remaining = {"claims": len(items), "labels_needed": sum(i.labels_needed for i in items),
                 "decisive": sum(i.decisive for i in items)}  # fmt: skip
    if as_json:
        print_json({"remaining": remaining, "by_status": dict(sorted(counts.items())), "by_condition": by_condition,
                    "gates": [s.as_dict() for s in settled],
                    "queue": [i.as_dict() for i in items[:limit] if limit]})  # fmt: skip
        return
    console.print(f"{remaining['claims']} claims wait for {remaining['labels_needed']} labels "
                  f"({remaining['decisive']} can change a gate); by status: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), markup=False)  # fmt: skip
    for name, left in by_condition.items():
        console.print(f"  {name}: {left['claims']} claims, {left['labels_needed']} labels before its figures "
                      "rest on people alone", markup=False)  # fmt: skip
    if settled:
        console.print("gates:", markup=False)
    for s in settled:
        if s.moot:
            state = f"moot ({s.moot})"
        elif s.settled and s.outcome is not None:  # settled: it has an outcome
            state = f"settled ({veto_outcome(s.outcome) if s.kind == 'veto' else s.outcome})"
        else:
            state = f"needs labels: {s.claims} claims ({s.labels_needed} rater labels) can still change it"
        console.print(f"  {s.condition} {s.kind} {s.gate}: {state}", markup=False)
        for c in s.checks:
            bounds = "n/a" if c.lower is None else f"{c.lower:.3f}"
            if c.upper is not None and c.upper != c.lower:
                bounds = f"[{bounds}, {c.upper:.3f}]"
            where = f"{c.outcome}" if c.outcome else f"open, {len(c.comments)} comments"
            console.print(f"      {c.metric} {c.op} {c.threshold:g} at {bounds}: {where}", markup=False)
    table = Table(show_edge=False, box=None)
    for column in ("packet", "comment", "part", "status", "needs", "decisive"):
        table.add_column(column)
    for item in items[:limit]:
        table.add_row(item.packet_id, item.comment_id, str(item.part), item.status.value, str(item.labels_needed),
                      "yes" if item.decisive else "")  # fmt: skip
    if items and limit:
        console.print(table)


@label_group.command("verdicts")
@_RUNDIR
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def verdicts_command(rundir: Path, as_json: bool) -> None:
    """Final labels per reviewer comment (people's, then a usable calibrated judge's),
    actionability of human-labelled true findings, and triage minutes."""
    from ..evidence.people import people_time
    from ..evidence.store import LabelStore
    from ..label import label_metrics, label_verdicts

    verdicts = label_verdicts(rundir)
    rate, triage = label_metrics(rundir)
    with LabelStore(rundir) as store:
        time = people_time(store)
    if as_json:
        print_json({"verdicts": [v.model_dump(mode="json") for v in verdicts], "actionability_rate": rate.as_dict(),
                    "triage_minutes": triage.as_dict(), "time": time.as_dict()})  # fmt: skip
        return
    by_class: dict[str, int] = {}
    for v in verdicts:
        by_class[v.label_class.value] = by_class.get(v.label_class.value, 0) + 1
    judged = sum(v.evidence.value == "judge" for v in verdicts)
    console.print(f"{len(verdicts) - judged} comments with a final human label, {judged} by a calibrated judge: "
                  + (", ".join(f"{k} {n}" for k, n in sorted(by_class.items())) or "none"), markup=False)  # fmt: skip
    value = "n/a" if rate.overall.value is None else f"{rate.overall.value:.3f}"
    console.print(f"actionability_rate {rate.overall.numerator}/{rate.overall.denominator} {value}", markup=False)
    if triage.median is not None:
        console.print(f"triage_minutes per run: median {triage.median:.2f}, IQR {triage.iqr:.2f} over "
                      f"{triage.runs} runs; adjudication {triage.adjudication_minutes:.2f} min", markup=False)  # fmt: skip
    for line in _time_lines(time):
        console.print(line, markup=False)


def _time_lines(time: PeopleTime) -> list[str]:
    """Triage minutes per rater and per adjudicator, and the adjudication's extra share."""
    lines = ["triage minutes per rater: " + (", ".join(f"{name} {v['minutes']:.2f} ({v['claims']:.0f} claims)"
                                                      for name, v in time.raters.items()) or "none")]  # fmt: skip
    if time.adjudicators:
        lines.append("adjudication minutes: " + ", ".join(f"{name} {v['minutes']:.2f} ({v['claims']:.0f} claims)"
                                                          for name, v in time.adjudicators.items()))  # fmt: skip
    share = "n/a" if time.extra_share is None else f"{time.extra_share:.1%}"
    lines.append(f"adjudicators' extra time: {time.adjudication_minutes:.2f} min over the raters' "
                 f"{time.rater_minutes:.2f} min = {share}")  # fmt: skip
    return lines


def _kappa(k: dict) -> str:
    if k["kappa"] is None:
        return "n/a (no claims)" if not k["n"] else "undefined (one answer throughout)"
    interval = "" if k["kappa_lo"] is None else f" [{k['kappa_lo']:.3f}, {k['kappa_hi']:.3f}]"
    return f"{k['kappa']:.3f}{interval}"


@click.command("agreement")
@_RUNDIR
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--bootstrap", default=2000, show_default=True, type=click.IntRange(min=0), help="Resamples.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the bootstrap.")
def agreement_command(rundir: Path, as_json: bool, bootstrap: int, seed: int) -> None:
    """Inter-rater agreement: per pair, percent agreement, confusion table and Cohen's kappa.

    For the finding class and for each actionability field, with a bootstrap interval;
    also how many claims were adjudicated and the adjudication time.
    """
    from ..evidence.people import people_time, profile_summary
    from ..evidence.store import LabelStore
    from ..label import agreement

    with LabelStore(rundir) as store:
        report = agreement(store, resamples=bootstrap, seed=seed).as_dict()
        time = people_time(store)
        profiles = profile_summary(store)
        report["time"], report["profiles"] = time.as_dict(), profiles.as_dict()
    if as_json:
        print_json(report)
        return
    if not report["pairs"]:
        console.print("no pair of raters has labelled the same claims yet")
    for pair in report["pairs"]:
        a, b = pair["raters"]
        pct = "n/a" if pair["percent_agreement"] is None else f"{pair['percent_agreement']:.1%}"
        console.print(f"\n[bold]{escape(a)} × {escape(b)}[/]: {pair['n']} claims, {pct} agree, "
                      f"kappa {escape(_kappa(pair))}", markup=True)  # fmt: skip
        labels = sorted(pair["confusion"])
        table = Table(title=f"rows {a}, columns {b}", show_edge=False)
        table.add_column("")
        for label in labels:
            table.add_column(label, justify="right")
        for row in labels:
            table.add_row(row, *(str(pair["confusion"][row][col]) for col in labels))
        if labels:
            console.print(table)
        for name, k in pair["fields"].items():
            console.print(f"  {name:<13} n={k['n']:<4} kappa {_kappa(k)}", markup=False)
    console.print(f"\nadjudicated {report['adjudicated']} claims in {report['adjudication_s'] / 60:.1f} min; "
                  f"{report['disputed']} disputed", markup=False)  # fmt: skip
    for line in _time_lines(time):
        console.print(line, markup=False)
    for line in profiles.lines():
        console.print(line, markup=False)
    if report["carried"]:
        console.print(f"{report['carried']} claims carry labels from another run directory ('label carry'): kept "
                      "out of these figures, their agreement is that run's", markup=False)  # fmt: skip


class _DefaultGroup(HelpGroup):
    """``judge RUNDIR`` runs the judge; ``judge calibrate RUNDIR`` calibrates it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


_CONFIG = click.option("--config", "config", required=True, type=click.Path(path_type=Path, dir_okay=False),
                       help="judge.toml: judge = { kind = ..., ... }, optional prompt, rule, audit.")  # fmt: skip


@click.group("judge", cls=_DefaultGroup, order=("calibrate", "run"))
def judge_group() -> None:
    """An LLM judge (any openai, anthropic or command endpoint), used only once calibrated.

    \b
    Examples:
      reviewbench judge runs/first --config judge.toml
      reviewbench judge calibrate runs/first --config judge.toml --json

    A command judge gets {"comment_id", "claim", "diff", "defects", "path", "line"} as JSON
    on stdin and prints one label object: {"class", "defect_id", "fields"}.
    """


@judge_group.command("run")
@_RUNDIR
@_CONFIG
@click.option("--all", "redo", is_flag=True, help="Ask again about claims the judge already labelled.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def judge_run_command(rundir: Path, config: Path, redo: bool, as_json: bool) -> None:
    """Label claims with the judge (stored as judge labels; never above human labels)."""
    from ..evidence.store import LabelStore, Role
    from ..label.judge import audit_sample, judge_claims, load_judge

    judge = load_judge(config)
    with LabelStore(rundir) as store:
        packet_set = store.packets()
        done = store.latest(Role.JUDGE).get(judge.name, {})
        keys = [(c.comment_id, c.part) for p in packet_set.packets for c in p.claims if redo or
                (c.comment_id, c.part) not in done]  # fmt: skip
        run = judge_claims(store, judge, keys)
        audit = audit_sample(store, judge, sorted(store.latest(Role.JUDGE).get(judge.name, {})))
    errors = sorted(set(run.failed.values()))[:5]
    result = {"judge": judge.name, "asked": len(keys), "labelled": len(run.labelled), "failed": len(run.failed),
              "errors": errors, "audit": audit}  # fmt: skip
    if as_json:
        print_json(result)
        return
    console.print(f"{judge.name}: labelled {result['labelled']} of {result['asked']} claims"
                  f" ({result['failed']} without a usable answer)", markup=False)  # fmt: skip
    for error in errors:
        console.print(f"  {error}", markup=False)
    console.print(f"audit sample for people: {len(audit['claims'])} claims (seed {audit['seed']})", markup=False)


@judge_group.command("calibrate")
@_RUNDIR
@_CONFIG
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--bootstrap", default=2000, show_default=True, type=click.IntRange(min=0), help="Resamples.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the bootstrap.")
def judge_calibrate_command(rundir: Path, config: Path, as_json: bool, bootstrap: int, seed: int) -> None:
    """Compare the judge with adjudicated (or agreed) human labels and probe it for bias.

    Reports the confusion matrix, kappa with interval, per class and per actionability
    field, and how many labels flip when the claims come in reverse order or padded with
    meaningless boilerplate. Usable only under the registered rule (default: n >= 30,
    kappa lower bound >= 0.6, flips <= 5%).
    """
    from ..evidence.store import LabelStore
    from ..label.judge import calibrate, load_judge

    judge = load_judge(config)
    with LabelStore(rundir) as store:
        result = calibrate(store, judge, resamples=bootstrap, seed=seed)
    if as_json:
        print_json(result)
        return
    verdict = "usable" if result["usable"] else "NOT usable"
    console.print(f"{judge.name}: n={result['n']}, kappa {_kappa(result)}, order flips {result['order_flips']}, "
                  f"length flips {result['length_flips']}: {verdict}", markup=False)  # fmt: skip
    for reason in result["reasons"]:
        console.print(f"  {reason}", markup=False)
    for name, k in result["fields"].items():
        console.print(f"  {name:<13} n={k['n']:<4} kappa {_kappa(k)} {'usable' if k['usable'] else 'disabled'}",
                      markup=False)  # fmt: skip
    kinds = result["composition"]
    absent = ", ".join(k.replace("_", " ") for k in kinds["absent"]) or "none"
    waived = f" (composition waived, min_per_kind = 0; absent: {absent})" if kinds["waived"] else ""
    console.print("human-labelled subset: " + ", ".join(f"{kind.replace('_', ' ')} {n}"
                                                        for kind, n in kinds["counts"].items()) + waived,
                  markup=False)  # fmt: skip
    shown = result["disagreements"]
    if shown:
        console.print(f"{result['disagreement_count']} claims where the judge and people differ; the first "
                      f"{len(shown)}:", markup=False)  # fmt: skip
    for d in shown:
        def label(x: dict) -> str:
            return x["class"] + (f" {x['defect_id']}" if x["defect_id"] else "")

        console.print(f"  '{printable(d['claim'][:120])}': people {label(d['human'])}, judge {label(d['judge'])}",
                      markup=False)  # fmt: skip
