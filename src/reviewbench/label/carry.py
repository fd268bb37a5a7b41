"""Human labels carried to the identical claims of another run directory (``label carry``).

A rerun (``reviewbench rerun OLD --out NEW``) reviews the same cases again, and many of its
comments are word for word the old ones. People labelled those once; asking them again is
wasted work, yet a copy is not a second judgement. So the labels of OLD are copied to the
claims of NEW that are *identical* (:class:`~reviewbench.evidence.packets.ClaimIdentity`:
same case, path, line, normalised parts and occurrence, the rule that already makes
comments one claim inside a run directory), each as a new chained row of source ``carry``
with its provenance (OLD's directory, gold, label chain rows and head, registration
digest; the origin row's seq, digest, claim id and time). Final labels, verdicts and the
score use them as people's labels; agreement leaves them out.

What is carried: every rater's and adjudicator's current label (their latest row) of each
labelled claim of OLD that NEW has, in OLD's order (so a re-opened adjudication stays
re-opened). Not carried: judge labels (a judge is calibrated per run directory), the
people and their tokens, the secret. A claim that has a human label in NEW already gets
nothing, so carrying twice writes nothing the second time and NEW's own labels always win.
Refused when the two run stores recorded different gold (different corpora). OLD is only
read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..evidence.packets import ClaimIdentity, comment_identities
from ..evidence.store import CarriedLabel, CarryOrigin, LabelStore, Role, StoredLabel
from ..store.runs import RUNS_DB, RunStore

__all__ = ["CarryResult", "carry_labels"]

Key = tuple[str, int]


@dataclass(frozen=True)
class CarryResult:
    """What a carry found and wrote."""

    origin: CarryOrigin
    target: str
    written: int
    """Label rows written into the target (0 for a dry run)."""
    planned: int
    """Label rows that would be (or were) written."""
    by_role: dict[str, int]
    claims: int
    """Target claims that get (or got) carried labels."""
    origin_claims: int
    """Claims of the origin with a human label."""
    unmatched: int
    """Labelled claims of the origin that no claim of the target is identical to."""
    skipped: int
    """Matched claims left alone: the target has a human label of them already."""
    target_claims: int
    unlabelled: int
    """Claims of the target with no human label once the carry is done."""
    dry_run: bool

    def as_dict(self) -> dict[str, Any]:
        o = self.origin
        return {"from": {"rundir": o.rundir, "gold_sha256": o.gold_sha256, "labels_rows": o.labels_rows,
                         "labels_head": o.labels_head, "registration_sha256": o.registration_sha256},
                "to": self.target, "dry_run": self.dry_run, "written": self.written, "planned": self.planned,
                "by_role": self.by_role, "claims": self.claims, "origin_claims": self.origin_claims,
                "unmatched": self.unmatched, "skipped": self.skipped, "target_claims": self.target_claims,
                "unlabelled": self.unlabelled}  # fmt: skip


def _recorded(rundir: Path) -> tuple[str, str | None]:
    """The gold SHA-256 and the registration digest ``rundir``'s run store recorded."""
    from ..score.registration import SEAL_KEY

    store = RunStore(rundir / RUNS_DB)
    try:
        gold, sealed = store.get_meta("gold_sha256"), store.get_meta(SEAL_KEY)
    finally:
        store.close()
    if not gold:
        raise UsageError(f"{rundir} records no corpus gold; was it written by 'reviewbench run'?")
    return gold, sealed


def _identities(store: LabelStore, rundir: Path) -> dict[Key, ClaimIdentity]:
    """The identity of every current claim of ``store`` (from its run store's comments)."""
    by_comment = comment_identities(rundir)
    out: dict[Key, ClaimIdentity] = {}
    for key, refs in store.claim_sources().items():
        found = sorted({by_comment[r.source_id] for r in refs if r.source_id in by_comment},
                       key=lambda i: (i.occurrence, str(i)))  # fmt: skip
        if found:
            out[key] = found[0]
    return out


def _origin_labels(store: LabelStore, rundir: Path) -> tuple[dict[tuple[ClaimIdentity, int], list[StoredLabel]], int]:
    """Per (identity, part) of the origin, its people's current labels in the order given;
    and how many claims have one. Of two old claim ids with one identity (a store exported
    before identical comments were merged) the one with more labels counts, as in packets."""
    identities = _identities(store, rundir)
    current: dict[Key, list[StoredLabel]] = {}
    for role in (Role.RATER, Role.ADJUDICATOR):
        for labels in store.latest(role).values():
            for key, label in labels.items():
                if key in identities:
                    current.setdefault(key, []).append(label)
    out: dict[tuple[ClaimIdentity, int], list[StoredLabel]] = {}
    for key in sorted(current, key=lambda k: (-len(current[k]), k)):
        out.setdefault((identities[key], key[1]), sorted(current[key], key=lambda label: label.seq))
    return out, len(out)


def carry_labels(origin: Path, target: Path, *, dry_run: bool = False) -> CarryResult:
    """Carry the human labels of ``origin`` to the identical claims of ``target``.

    Raises:
        UsageError: the same directory twice, different corpora, no labels in ``origin``.
        CorpusError: not a run directory, or a damaged store.
        LabelChainBroken: either label store was edited outside reviewbench.
    """
    if origin.resolve() == target.resolve():
        raise UsageError(f"{origin} is both the origin and the target: carry labels to another run directory")
    gold, sealed = _recorded(origin)
    target_gold, _ = _recorded(target)
    if gold != target_gold:
        raise UsageError(f"the corpora differ (gold {gold[:12]}… in {origin}, {target_gold[:12]}… in {target}): "
                         "labels are carried only between runs on the same corpus")  # fmt: skip
    with LabelStore(origin, read_only=True) as old:
        head, _ = old.verify_chain()
        labels, labelled = _origin_labels(old, origin)
    source = CarryOrigin(rundir=str(origin.resolve()), gold_sha256=gold, labels_rows=head.rows,
                         labels_head=head.head, registration_sha256=sealed)  # fmt: skip
    with LabelStore(target) as new:
        new.verify_chain()
        new.packets()  # the target's claims are known even when nobody exported its packets
        identities = _identities(new, target)
        taken = {label.key for role in (Role.RATER, Role.ADJUDICATOR)
                 for per in new.latest(role).values() for label in per.values()}  # fmt: skip
        matched = {(identity, key[1]): key for key, identity in identities.items()}
        planned: list[CarriedLabel] = []
        claims, skipped = set(), 0
        for where, rows in labels.items():
            key = matched.get(where)
            if key is None:
                continue
            if key in taken:
                skipped += 1
                continue
            claims.add(key)
            planned.extend(CarriedLabel(row=label.row.model_copy(update={"comment_id": key[0]}), author=label.author,
                                        role=label.role, from_seq=label.seq, from_row_sha256=label.row_sha256 or "",
                                        from_comment_id=label.row.comment_id, from_created_at=label.created_at,
                                        rubric_version=label.rubric_version)
                           for label in rows)  # fmt: skip
        planned.sort(key=lambda c: c.from_seq)  # OLD's order: a re-opened adjudication stays re-opened
        written = 0 if dry_run else new.add_carried(planned, source)
        unlabelled = len(set(identities) - taken - claims)
    by_role: dict[str, int] = {}
    for c in planned:
        by_role[c.role.value] = by_role.get(c.role.value, 0) + 1
    unmatched = sum(1 for where in labels if where not in matched)
    return CarryResult(origin=source, target=str(target), written=written, planned=len(planned), by_role=by_role,
                       claims=len(claims), origin_claims=labelled, unmatched=unmatched, skipped=skipped,
                       target_claims=len(identities), unlabelled=unlabelled, dry_run=dry_run)  # fmt: skip
