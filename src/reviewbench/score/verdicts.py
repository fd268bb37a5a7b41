"""Per-finding verdicts: the records every metric, the report, the CSV and SARIF read.

Matching a run yields one :class:`FindingVerdict` per finding, in one pass over its
findings (linear in their number). ``score`` writes them to ``RUNDIR/verdicts.jsonl`` and
computes every metric from them; nothing downstream matches again.

Override seam: a verdict is keyed by ``comment_id`` (``"<run_id>:<finding index>"``). A
later label (``evidence = "judge"`` or ``"human"``) replaces the automatic ``identified``
(and, if it says so, ``false_positive``) of that one comment through
:func:`apply_overrides`; every metric then follows, and the condition's ``evidence`` is the
lowest level among its verdicts. See docs/SCORING.md, "Verdicts and labels".
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ReviewbenchError
from ..evidence.records import ClaimCounts, VerdictOverride
from ..records import Defect, Evidence, Finding
from .identify import IdentifiedBy, identify
from .match import PathMatcher

__all__ = [
    "VERDICTS_FILE",
    "Evidence",
    "FindingVerdict",
    "VerdictOverride",
    "apply_overrides",
    "comment_id",
    "judge_run",
    "write_verdicts",
]

VERDICTS_FILE = "verdicts.jsonl"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FindingVerdict(_Record):
    """How scoring counted one finding of one run."""

    comment_id: str = Field(description="'<run_id>:<finding index>': the key a label overrides.")
    run_id: str = Field(description="The run the finding belongs to.")
    index: int = Field(ge=0, description="Position of the finding in the run's output.")
    case_id: str = Field(description="The case reviewed.")
    condition: str = Field(description="The condition of the run.")
    repetition: int = Field(ge=0, description="The run's repetition.")
    scored: bool = Field(description="False when the run did not complete or its case is not analysed.")
    defect_id: str | None = Field(default=None, description="The defect it is located at (or duplicates).")
    located: bool = Field(default=False, description="Path and line within tolerance of the defect.")
    identified: bool = Field(default=False, description="The finding identifies the defect: by a label (judge or "
                             "human), or automatically when it names the defect and discriminates (see named, "
                             "discriminating).")
    identified_by: IdentifiedBy | None = Field(default=None, description="What in the claim named it.")
    named: bool = Field(default=False, description="The claim names the defect (automatic name matching, before "
                        "the mirror test): named_recall, a diagnostic.")
    discriminating: bool | None = Field(default=None, description="For a naming finding: the same condition, in "
                                        "the same repetition, said nothing naming the defect on the paired mirror "
                                        "(true), or did (false); null when the pair has no valid, completed mirror "
                                        "run (then it is no automatic evidence).")
    duplicate_of: str | None = Field(default=None, description="comment_id of the finding that counted first.")
    false_positive: bool = Field(default=False, description="Located at no defect (every finding on a control).")
    file_level: bool = Field(default=False, description="No line, on a defect case: file recall only.")
    severity_ok: bool | None = Field(default=None, description="Claimed severity equals gold (None: no gold one).")
    evidence: Evidence = Field(default=Evidence.AUTOMATIC, description="Who decided identified/false_positive.")
    unclear: bool = Field(default=False, description="Labelled unclear: out of precision's denominator, counted "
                          "beside it (docs/SCORING.md, 'Unclear claims').")
    claims: ClaimCounts | None = Field(default=None, description="From labels: the comment's atomic claims by "
                                       "class. Precision counts a split comment's claims, not the comment "
                                       "(docs/SCORING.md, 'Atomic claims'); null without labels.")
    incidental: bool = Field(default=False, description="Some claim of the comment is labelled a valid incidental "
                             "finding: a real defect none of the gold's. On a clean case it contaminates the case.")
    boilerplate: bool = Field(default=False, description="The claim matches the registered boilerplate rule: out "
                              "of precision's denominator when it is a false positive.")


_ALL_SET = set(FindingVerdict.model_fields)
"""The fields set of every verdict :func:`judge_run` makes: each one a frozen record, one set
serves them all (pydantic's own set per record is 0.7 KiB, 170 MiB at 250,000 findings)."""


def comment_id(run_id: str, index: int) -> str:
    return f"{run_id}:{index}"


def _line_ok(line: int, start: int, end: int, tolerance: int) -> bool:
    if start == 0 and end == 0:  # a file the patch deletes: any line in it
        return True
    return start - tolerance <= line <= end + tolerance


def judge_run(
    *,
    run_id: str,
    case_id: str,
    condition: str,
    repetition: int,
    findings: Sequence[Finding],
    defects: Sequence[Defect],
    paths: Sequence[str],
    tolerance: int,
    scored: bool,
) -> list[FindingVerdict]:
    """The automatic verdict of every finding of one run (``defects`` empty: a clean case).

    ``identified`` is ``named`` here; :func:`score.discriminate.discriminate` then keeps it
    only where the paired mirror's run said nothing naming the same defect.

    Each defect is credited to one finding: the first located one that identifies it,
    else the first located one; other findings located there are duplicates of it. A
    finding is credited to at most one defect. A finding with a line located at no
    defect is a false positive; one without a line is file-level.
    """
    def verdict(index: int, **fields: Any) -> FindingVerdict:
        # Built from matching's own values, not input: constructed unvalidated, every field set
        # (one shared set, see _ALL_SET: a store holds hundreds of thousands of findings).
        return FindingVerdict.model_construct(_ALL_SET, comment_id=comment_id(run_id, index), run_id=run_id,
                                              index=index, case_id=case_id, condition=condition,
                                              repetition=repetition, scored=scored, **fields)  # fmt: skip

    if not scored:
        return [verdict(i) for i in range(len(findings))]
    if not defects:
        return [verdict(i, false_positive=True) for i in range(len(findings))]
    matcher = PathMatcher([*paths, *(loc.path for d in defects for loc in d.locations)])
    hits: list[list[int]] = []
    names: list[dict[int, IdentifiedBy]] = []
    for finding in findings:
        located = [] if finding.line is None else [
            i for i, d in enumerate(defects)
            if any(matcher.agrees(finding.path, loc.path) and _line_ok(finding.line, loc.start_line, loc.end_line,
                                                                       tolerance) for loc in d.locations)
        ]  # fmt: skip
        hits.append(located)
        names.append({i: by for i in located if (by := identify(finding.claim, defects[i])) is not None})
    primary: dict[int, int] = {}  # defect index -> finding index
    taken: set[int] = set()
    for d in range(len(defects)):
        candidates = [f for f, h in enumerate(hits) if d in h and f not in taken]
        if not candidates:
            continue
        chosen = next((f for f in candidates if d in names[f]), candidates[0])
        primary[d] = chosen
        taken.add(chosen)
    credited = {f: d for d, f in primary.items()}
    out: list[FindingVerdict] = []
    for f, finding in enumerate(findings):
        if f in credited or hits[f]:
            d = credited[f] if f in credited else next((i for i in hits[f] if i in primary), hits[f][0])
            gold = defects[d].severity
            extra: dict[str, Any] = (
                {"severity_ok": None if gold is None else finding.severity == gold} if f in credited
                else {"duplicate_of": comment_id(run_id, primary[d]) if d in primary else None}
            )  # fmt: skip
            out.append(verdict(f, defect_id=defects[d].defect_id, located=True, identified=d in names[f],
                               named=d in names[f], identified_by=names[f].get(d), **extra))  # fmt: skip
        elif finding.line is None:
            out.append(verdict(f, file_level=True))
        else:
            out.append(verdict(f, false_positive=True))
    return out


def apply_overrides(verdicts: Iterable[FindingVerdict],
                    overrides: Mapping[str, VerdictOverride]) -> list[FindingVerdict]:  # fmt: skip
    """Replace automatic verdicts by labels of at least equal evidence, by ``comment_id``.

    A label never lowers the evidence of a verdict (a judge does not overrule a human).
    """
    out = []
    for v in verdicts:
        label = overrides.get(v.comment_id)
        if label is None or not v.scored or label.evidence.rank < v.evidence.rank:
            out.append(v)
            continue
        update: dict[str, Any] = {"identified": label.identified and v.located, "evidence": label.evidence,
                        "identified_by": v.identified_by if label.identified else None}  # fmt: skip
        if label.false_positive is not None:
            update["false_positive"] = label.false_positive
        if label.unclear:
            update["unclear"] = True
        if label.claims is not None:
            update["claims"] = label.claims
            update["incidental"] = label.claims.incidental > 0
        out.append(v.model_copy(update=update))
    return out


def write_verdicts(path: Path, verdicts: Iterable[FindingVerdict]) -> None:
    """Write ``verdicts.jsonl`` atomically (a reader never sees half a file).

    Raises:
        ReviewbenchError: the run directory cannot be written (read-only, disk full).
    """
    try:
        fd, tmp = tempfile.mkstemp(prefix=".verdicts.", dir=path.parent)
    except OSError as exc:
        raise ReviewbenchError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for v in verdicts:
                handle.write(json.dumps(v.model_dump(mode="json"), separators=(",", ":")) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ReviewbenchError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
