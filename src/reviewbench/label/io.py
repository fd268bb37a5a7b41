"""JSONL in and out of the label store: packets for raters, labels from anywhere."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from ..errors import UsageError
from ..evidence.records import LabelClass, LabelRow
from ..evidence.resolve import verdicts_from
from ..evidence.stats import ActionabilityRate, TriageMinutes, actionability_rate, triage_minutes
from ..evidence.store import LabelStore, Role, check_name

__all__ = ["export_labels", "export_packets", "import_labels", "label_metrics", "read_label_rows"]


def _write_atomic(out: Path, data: bytes) -> None:
    if out.is_symlink():
        raise UsageError(f"{out} is a symbolic link; refusing to write through it")
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export_packets(rundir: Path, out: Path) -> int:
    """Write every packet of ``rundir`` to ``out`` (JSONL); return how many."""
    with LabelStore(rundir) as store:
        packets = store.packets().packets
    _write_atomic(out, b"".join(p.model_dump_json().encode() + b"\n" for p in packets))
    return len(packets)


def read_label_rows(path: Path, *, adjudication: bool = False) -> list[LabelRow]:
    """Label rows from a JSONL file, each checked; errors name the file and line.

    Raises:
        UsageError: the file is missing, or a line is not a valid label row.
    """
    return [row for _, row in _numbered_rows(path, adjudication=adjudication)]


def _numbered_rows(path: Path, *, adjudication: bool) -> list[tuple[int, LabelRow]]:
    if not path.is_file():
        raise UsageError(f"{path} is not a file")
    rows = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                row = LabelRow.model_validate_json(raw)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise UsageError(f"{path}:{number}: not a label row ({where + ': ' if where else ''}"
                                 f"{first['msg']})") from None  # fmt: skip
            if adjudication and not (row.reason or "").strip():
                raise UsageError(f"{path}:{number}: an adjudication needs a 'reason'")
            if not adjudication and row.reason is not None:
                raise UsageError(f"{path}:{number}: 'reason' belongs to adjudications (use --adjudicator)")
            rows.append((number, row))
    return rows


def import_labels(rundir: Path, path: Path, *, rater: str | None = None, adjudicator: str | None = None) -> int:
    """Append the labels of ``path`` as one rater's or one adjudicator's; return how many.

    Raises:
        UsageError: neither or both of ``rater`` and ``adjudicator``; a bad row; an unknown claim.
    """
    if (rater is None) == (adjudicator is None):
        raise UsageError("give exactly one of --rater NAME and --adjudicator NAME")
    name = check_name(rater or adjudicator or "", "rater" if rater else "adjudicator")
    numbered = _numbered_rows(path, adjudication=adjudicator is not None)
    with LabelStore(rundir) as store:
        store.packets()  # claims are known even when nobody exported packets here before
        for number, row in numbered:
            problem = store.check_row(row)  # its claim, its gold defect link, a finite time
            if problem is None and rater:  # a conflicted rater never labels a claim first
                problem = store.first_label_problem(row, name)
            if problem is not None:
                raise UsageError(f"{path}:{number}: {problem}")
        rows = [row for _, row in numbered]
        return store.add(rows, author=name, role=Role.RATER if rater else Role.ADJUDICATOR, source="import")


def export_labels(rundir: Path, out: Path, *, rater: str | None = None, adjudicator: str | None = None) -> int:
    """Write one author's current labels in the import format; return how many."""
    if (rater is None) == (adjudicator is None):
        raise UsageError("give exactly one of --rater NAME and --adjudicator NAME")
    role = Role.RATER if rater else Role.ADJUDICATOR
    with LabelStore(rundir) as store:
        latest = store.latest(role).get(rater or adjudicator or "", {})
    rows = [label.row for label in sorted(latest.values(), key=lambda label: label.seq)]
    data = b"".join(json.dumps(row.model_dump(mode="json", by_alias=True, exclude_none=False)).encode() + b"\n"
                    for row in rows)  # fmt: skip
    _write_atomic(out, data)
    return len(rows)


def label_metrics(rundir: Path) -> tuple[ActionabilityRate, TriageMinutes]:
    """Actionability of human-verdict true findings, and rater triage minutes per run."""
    with LabelStore(rundir) as store:
        verdicts = verdicts_from(store)
        claims = store.claim_sources()
        per_label = []
        for labels in store.latest(Role.RATER).values():
            for key, label in labels.items():
                if label.row.triage_s is None:
                    continue
                # A claim labelled once for identical comments of several runs: each run's
                # triage is what reading its own comments takes, so each counts the time.
                for run_id, case_id in sorted({(ref.run_id, ref.case_id) for ref in claims.get(key, [])}):
                    per_label.append((run_id, case_id, label.row.triage_s))
        adjudication = [label.row.triage_s or 0.0 for per in store.latest(Role.ADJUDICATOR).values()
                        for label in per.values()]  # fmt: skip
    true = [v.fields for v in verdicts if v.label_class is LabelClass.TRUE_FINDING and v.fields is not None]
    return actionability_rate(true), triage_minutes(per_label, adjudication)
