"""The audit of a corpus's automatic matching: probes that must never earn credit, and shape.

Automatic identification is only as good as the corpus lets it be. ``audit`` runs every
built-in probe (``reviewers/probe.py``: ``namer``, ``quoter``, ``shape``, reviewers that never
describe a behavioural defect) against the validated corpus, once each, offline, and scores
them exactly as ``score`` scores any reviewer (a private run directory under the scratch
area, removed afterwards). A sound corpus gives every probe a discriminating recall of at
most :data:`MAX_PROBE_RECALL`. It also measures how well diff shape alone separates defect
cases from clean ones (controls and mirrors; ``mine/shape.py``): a reviewer may game
restraint by shape when the cross-validated AUC exceeds :data:`MAX_SHAPE_AUC`.

The verdict is written to ``CORPUS/audit.json`` with the gold's digest (``audit_run.py``
runs it); ``score`` and the report print it beside the automatic figures, and when the
corpus is not sound, no tier rests on automatic evidence (:func:`unsound` turns such a
grant into "needs labels"). The file lies in the corpus, which may come from anyone, so
``score`` trusts it only to withhold authority: before a tier rests on automatic evidence
it re-runs the audit (:class:`AuditCheck`) unless the file already says "not sound".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AUDIT_FILE", "MAX_PROBE_RECALL", "MAX_SHAPE_AUC", "PROBES", "Audit", "AuditCheck", "Fraction",
           "ProbeFigures", "ShapeFigures", "read_audit", "unsound"]

AUDIT_FILE = "audit.json"
PROBES = ("namer", "quoter", "shape")
MAX_PROBE_RECALL = 0.05
"""A probe's discriminating recall above this: the matcher credits what is no identification."""
MAX_SHAPE_AUC = 0.7
"""Shape separability above this: restraint can be gamed by diff shape."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Fraction(_Record):
    num: float
    den: float


class ProbeFigures(_Record):
    """One probe's figures (completed analysis, one repetition)."""

    named: Fraction = Field(description="(run, defect) pairs with a naming finding / pairs.")
    discriminating: Fraction = Field(description="Naming findings its mirror run did not echo / pairs with a "
                                     "reviewed mirror: what automatic identification would credit.")
    false_alarms: Fraction = Field(description="Clean-case runs with a finding / clean-case runs.")


class ShapeFigures(_Record):
    auc: float | None = Field(description="Cross-validated AUC of a logistic regression on shape features.")
    best_feature: str | None
    best_feature_auc: float | None
    defect_cases: int
    clean_cases: int


class Audit(_Record):
    """Contents of ``audit.json`` and of ``audit --json``."""

    gold_sha256: str = Field(description="The gold this audit read: an audit of other gold is not used.")
    probes: dict[str, ProbeFigures]
    shape: ShapeFigures
    sound: bool = Field(description="Every probe's discriminating recall <= 5% and shape AUC <= 0.7.")
    reasons: list[str] = Field(default_factory=list, description="Why not sound, one line each.")

    def line(self) -> str:
        """The one-line verdict ``score`` and the report print."""
        worst = max(self.probes.items(), key=lambda kv: _rate(kv[1].discriminating), default=None)
        probe = (f"probes' discriminating recall at most {_fmt(worst[1].discriminating)} ({worst[0]})"
                 if worst else "no probe ran")  # fmt: skip
        shape = f"shape AUC {self.shape.auc:.3f}" if self.shape.auc is not None else "shape AUC not measured"
        verdict = "sound" if self.sound else "NOT SOUND: no tier rests on automatic evidence"
        if all(p.discriminating.den == 0 for p in self.probes.values()):
            probe = "no reviewed mirror pair: automatic identification credits nothing here"
        return f"matcher audit: {verdict} ({probe}; {shape})"


def _rate(f: Fraction) -> float:
    return f.num / f.den if f.den else 0.0


def _fmt(f: Fraction) -> str:
    return f"{f.num:g}/{f.den:g}"


def read_audit(corpus: Path, gold_sha256: str) -> Audit | None:
    """The corpus's audit, if one was written for this gold (None: none, or of other gold)."""
    path = corpus / AUDIT_FILE
    if not path.is_file() or path.is_symlink():
        return None
    try:
        audit = Audit.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return None
    return audit if audit.gold_sha256 == gold_sha256 else None


class AuditCheck:
    """This score's view of the corpus's audit: the recorded file when it says "not sound"
    (a forged verdict against the corpus only withholds authority), the audit re-run, once,
    before any tier rests on automatic evidence otherwise (about as long as scoring the three
    probes: 6 s on the demo corpus)."""

    RE_RUN = "re-run by score"
    RECORDED = "recorded in audit.json"

    def __init__(self, corpus: Path, gold_sha256: str) -> None:
        self.corpus = corpus
        self.audit = read_audit(corpus, gold_sha256)
        self.source: str | None = self.RECORDED if self.audit else None
        self.failure: str | None = None

    def trusted(self) -> Audit | None:
        """The audit a grant may rest on (None with :attr:`failure` set: it could not run)."""
        if self.source == self.RE_RUN or (self.audit is not None and not self.audit.sound):
            return self.audit
        from ..errors import CorpusError
        from .audit_run import audit_corpus  # it scores the probes: imported when needed

        self.source = self.RE_RUN
        try:
            self.audit = audit_corpus(self.corpus, write=False)
        except CorpusError as err:
            self.audit, self.failure = None, str(err)
        return self.audit

    def summary(self) -> dict[str, Any] | None:
        """The score's ``analysis.audit``."""
        if self.failure is not None:
            return {"sound": False, "line": f"matcher audit: could not run ({self.failure}): no tier rests on "
                    "automatic evidence", "reasons": [self.failure], "source": self.source}  # fmt: skip
        if self.audit is None:
            return None
        note = "" if self.source == self.RE_RUN else " [as recorded in audit.json; not re-checked: no tier rests on it]"
        return {"sound": self.audit.sound, "line": self.audit.line() + note, "reasons": self.audit.reasons,
                "source": self.source}  # fmt: skip


def unsound(decision: dict[str, Any], check: AuditCheck) -> dict[str, Any]:
    """``decision`` unless it grants a tier on automatic evidence over a corpus whose audit is
    not sound, or could not run: then "needs labels" (people or a calibrated judge must carry
    it)."""
    if decision["status"] != "granted" or decision.get("evidence") != "automatic":
        return decision
    audit = check.trusted()
    if audit is not None and audit.sound:
        return decision
    why = "; ".join(audit.reasons) if audit is not None else f"could not run: {check.failure}"
    return {**decision, "status": "needs_labels",
            "reason": f"the corpus's matcher audit is not sound ({why}): no tier rests on automatic evidence; "
                      f"granted {decision['tier']} on the gates alone"}  # fmt: skip
