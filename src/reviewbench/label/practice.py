"""A practice set: packets outside the corpus, with reference labels, labelled before scoring opens.

``label practice RUNDIR SET.jsonl`` loads a set (one :class:`PracticeItem` a line: a packet
and the reference label of each of its claims) into ``labels.sqlite`` (table
``practice_sets``, append-only; the latest set is the current one). In the app, a rater
with a practice set to do is sent to it first; once every practice claim is labelled they
see their agreement with the reference, claim by claim, and only then their first real
packet. Practice labels are rows of ``labels`` under the probe ``practice:<set digest>``:
chained like every label, never read as a label of the run. ``label practice RUNDIR``
prints every rater's agreement.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import UsageError
from ..evidence.records import LabelRow, PracticeItem
from ..evidence.resolve import disagree
from ..evidence.stats import Kappa, kappa_with_interval
from ..evidence.store import LabelStore, Role

__all__ = ["PRACTICE", "PracticeResult", "PracticeSet", "check_practice_rows", "load_practice", "practice_result",
           "practice_set", "read_practice"]

PRACTICE = "practice:"
"""Prefix of the ``probe`` practice labels are stored under (then the set's first 12 hex digits)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS practice_sets (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    sha256 TEXT NOT NULL,
    items TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS practice_sets_no_update BEFORE UPDATE ON practice_sets
BEGIN SELECT RAISE(ABORT, 'practice sets are append-only'); END;
CREATE TRIGGER IF NOT EXISTS practice_sets_no_delete BEFORE DELETE ON practice_sets
BEGIN SELECT RAISE(ABORT, 'practice sets are append-only'); END;
"""


@dataclass(frozen=True)
class PracticeSet:
    """The current practice set of a run directory."""

    sha256: str
    items: list[PracticeItem]

    @property
    def probe(self) -> str:
        return PRACTICE + self.sha256[:12]

    @property
    def answers(self) -> dict[tuple[str, int], LabelRow]:
        return {(a.comment_id, a.part): a for item in self.items for a in item.answers}

    def packet(self, packet_id: str) -> PracticeItem | None:
        return next((item for item in self.items if item.packet.packet_id == packet_id), None)


def read_practice(path: Path) -> tuple[list[PracticeItem], str]:
    """The practice items of ``path`` (JSONL) and the file's SHA-256.

    Raises:
        UsageError: unreadable, empty, a line that is not a practice item (file and line
            named), or a packet or claim id given twice.
    """
    if not path.is_file() or path.is_symlink():
        raise UsageError(f"{path} is not a file")
    data = path.read_bytes()
    items = []
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            items.append(PracticeItem.model_validate_json(raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise UsageError(f"{path}:{number}: not a practice item ({where + ': ' if where else ''}"
                             f"{first['msg']})") from None  # fmt: skip
    if not items:
        raise UsageError(f"{path} holds no practice item")
    packets = [item.packet.packet_id for item in items]
    claims = [c.comment_id for item in items for c in item.packet.claims if c.part == 0]
    if len(set(packets)) != len(packets) or len(set(claims)) != len(claims):
        raise UsageError(f"{path}: every packet_id and comment_id of a practice set is its own (one is given twice)")
    return items, hashlib.sha256(data).hexdigest()


def load_practice(store: LabelStore, path: Path) -> PracticeSet:
    """Load the practice set of ``path`` into ``store`` as the current one.

    Raises:
        UsageError: a bad file, or a claim id that is one of the run's own claims (a practice
            set lies outside the corpus).
    """
    items, digest = read_practice(path)
    known = {c.comment_id for c in store.packets().claims}
    clash = sorted({c.comment_id for item in items for c in item.packet.claims} & known)
    if clash:
        raise UsageError(f"{path}: comment_id {clash[0]!r} is a claim of this run directory; a practice set lies "
                         "outside the corpus")  # fmt: skip
    from datetime import UTC, datetime

    store.db.executescript(_SCHEMA)
    text = json.dumps([item.model_dump(mode="json", by_alias=True) for item in items])
    store.db.execute("INSERT INTO practice_sets (sha256, items, created_at) VALUES (?, ?, ?)",
                     (digest, text, datetime.now(UTC).isoformat(timespec="milliseconds")))  # fmt: skip
    return PracticeSet(sha256=digest, items=items)


def practice_set(store: LabelStore) -> PracticeSet | None:
    """The current (latest loaded) practice set, or None."""
    import sqlite3

    try:
        row = store.db.execute("SELECT sha256, items FROM practice_sets ORDER BY seq DESC LIMIT 1").fetchone()
    except sqlite3.OperationalError:  # no set was ever loaded
        return None
    if row is None:
        return None
    return PracticeSet(sha256=row[0], items=[PracticeItem.model_validate(i) for i in json.loads(row[1])])


def check_practice_rows(practice: PracticeSet, packet_id: str, rows: list[LabelRow]) -> str | None:
    """Why ``rows`` are not labels of practice packet ``packet_id`` (None when they are)."""
    item = practice.packet(packet_id)
    if item is None:
        return "no such practice packet"
    claims = {(c.comment_id, c.part) for c in item.packet.claims}
    if any((r.comment_id, r.part) not in claims for r in rows):
        return "a label names a claim of another packet"
    gold = {d.defect_id for d in item.packet.defects} | {"valid_incidental"}
    if any(r.defect_id is not None and r.defect_id not in gold for r in rows):
        return "a label links a defect that is not one of this packet's gold defects"
    if any(r.reason is not None for r in rows):
        return "reasons belong to adjudications"
    return None


@dataclass(frozen=True)
class PracticeResult:
    """One rater's practice labels against the reference."""

    rater: str
    claims: int
    labelled: int
    agree: int
    """Labels equal to the reference in class, defect link and (true findings) the five answers."""
    kappa: Kappa
    """On the class, over the claims labelled."""
    differences: list[dict[str, Any]]
    """Per claim labelled otherwise: its text, the rater's label, the reference's."""

    @property
    def done(self) -> bool:
        return self.labelled == self.claims

    def as_dict(self) -> dict[str, Any]:
        share = round(self.agree / self.labelled, 6) if self.labelled else None
        return {"rater": self.rater, "claims": self.claims, "labelled": self.labelled, "done": self.done,
                "agreement": {"value": share, "numerator": self.agree, "denominator": self.labelled},
                "kappa": self.kappa.as_dict(), "differences": self.differences}  # fmt: skip


def _short(row: LabelRow) -> dict[str, Any]:
    return {"class": row.label_class.value, "defect_id": row.defect_id, "fields": row.fields.model_dump()}


def practice_result(store: LabelStore, practice: PracticeSet, rater: str) -> PracticeResult:
    """``rater``'s latest practice labels compared with the reference answers."""
    mine = store.latest(Role.RATER, probe=practice.probe, counted=False).get(rater, {})
    mine = {k: v for k, v in mine.items() if v.rubric_version == store.rubric_version}
    answers = practice.answers
    text = {(c.comment_id, c.part): c.text for item in practice.items for c in item.packet.claims}
    keys = [k for k in answers if k in mine]
    differences = [{"comment_id": k[0], "part": k[1], "claim": text[k][:300], "yours": _short(mine[k].row),
                    "reference": _short(answers[k])} for k in keys if disagree(mine[k].row, answers[k])]  # fmt: skip
    kappa = kappa_with_interval([mine[k].row.label_class.value for k in keys],
                                [answers[k].label_class.value for k in keys], resamples=0)  # fmt: skip
    return PracticeResult(rater=rater, claims=len(answers), labelled=len(keys), agree=len(keys) - len(differences),
                          kappa=kappa, differences=differences)  # fmt: skip
