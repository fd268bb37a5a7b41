"""The label release (the protocol: "release the plaintext label file, its pre-run hash,
adjudication changes and final hash"), once the runs and the labels are done.

``reviewbench release RUNDIR --out DIR`` writes:

- ``gold.jsonl``: the corpus's labels as they are, in plaintext;
- ``labels.jsonl``: people's final label of every claim (agreed by the raters, or
  adjudicated), with the run comment it labels;
- ``adjudications.jsonl``: every adjudication in the order given: the raters' labels it
  settled, the adjudicated label and its reason;
- ``release.json``: the gold's SHA-256 registered before the first run, the final one (of
  the released file), whether they agree, the label chain's head, the SHA-256 of each file
  written, and what is complete.

It refuses while planned runs are missing, comments were never exported for labelling, or
claims have no final label (unlabelled, one rater only, disputed), unless ``partial``:
then it writes what there is and says so, in ``release.json`` and on the command line.
Nothing is written when it refuses.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..errors import UsageError
from ..evidence.people import people_time, profile_summary
from ..evidence.resolve import (
    ClaimStatus,
    _adjudications,
    carried_claims,
    claim_status,
    final_labels,
)
from ..evidence.store import LABELS_DB, Role, open_labels
from ..score.registration import registered_versions
from ..store.corpus import read_corpus
from ..store.runs import RUNS_DB, RunStore

__all__ = ["ReleaseManifest", "release_labels"]

RELEASE_FILE = "release.json"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GoldDigests(_Record):
    registered_sha256: str | None = Field(description="The gold's SHA-256 in the first registered version "
                                          "(frozen before any run when pre-registered); null: not registered.")  # fmt: skip
    registered_at: str | None
    pre_registered: bool | None = Field(description="That version was registered before any run.")
    recorded_by_runs: str | None = Field(description="The gold SHA-256 the run store recorded at the first run.")
    final_sha256: str = Field(description="SHA-256 of the released gold.jsonl.")
    unchanged: bool = Field(description="final_sha256 equals the registered (or, unregistered, the recorded) one.")


class ReleaseManifest(_Record):
    """``release.json``."""

    rundir: str
    corpus: str
    released_at: str
    partial: bool = Field(description="Released with --partial while something was incomplete.")
    incomplete: list[str] = Field(description="What was not done (empty when complete).")
    gold: GoldDigests
    runs: dict[str, int] = Field(description="planned, recorded, missing.")
    claims: dict[str, int] = Field(description="Claims by status (unlabelled, single, disputed, agreed, "
                                   "adjudicated), comments never exported for labelling, final, and final on "
                                   "labels carried from another run directory (carried).")  # fmt: skip
    adjudications: int
    labels_chain: dict[str, object] | None = Field(description="rows and head of labels.sqlite's SHA-256 chain.")
    files: dict[str, str] = Field(description="File name -> SHA-256 of what was written.")
    rubric: str | None = Field(default=None, description="The rubric version the final labels were given under.")
    people: dict[str, object] | None = Field(default=None, description="The raters' profiles counted over people "
                                             "(never per name), and minutes per rater and adjudicator.")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _planned(rundir: Path, experiment_path: str | None, versions: list[dict], corpus) -> set[str] | None:
    """The run ids the experiment plans, or None when the experiment file cannot say (gone,
    or changed since its registration)."""
    from ..review.experiment import load_experiment
    from ..review.runner import plan_runs

    if not experiment_path or not Path(experiment_path).is_file():
        return None
    path = Path(experiment_path)
    if versions and _sha(path.read_bytes()) != versions[-1]["frozen"]["experiment"]["sha256"]:
        return None
    return {r.run_id for r in plan_runs(load_experiment(path), corpus)}


def release_labels(rundir: Path, out: Path, partial: bool = False) -> ReleaseManifest:
    """Write the release of ``rundir`` into ``out`` (see the module's docstring).

    Raises:
        CorpusError: not a run directory, or its corpus is missing.
        LabelChainBroken: labels.sqlite was edited outside reviewbench.
        UsageError: something is incomplete and not ``partial``; ``out`` holds files.
    """
    store = RunStore(rundir / RUNS_DB)
    try:
        runs = list(store.runs())
        corpus_path, recorded, experiment_path = (store.get_meta(k) for k in ("corpus_path", "gold_sha256",
                                                                               "experiment_path"))  # fmt: skip
    finally:
        store.close()
    if not corpus_path:
        raise UsageError(f"{rundir} records no corpus; was it written by 'reviewbench run'?")
    corpus = read_corpus(Path(corpus_path))
    versions = registered_versions(rundir)
    planned = _planned(rundir, experiment_path, versions, corpus)
    recorded_ids = {r.run_id for r in runs}
    incomplete: list[str] = []
    if planned is None:
        incomplete.append("the planned runs are unknown (the experiment file is gone or changed since registration)")
        missing = 0
    else:
        missing = len(planned - recorded_ids)
        if missing:
            incomplete.append(f"{missing} of {len(planned)} planned runs are missing")
    comments = {f"{r.run_id}:{i}" for r in runs if r.state.completed for i in range(len(r.findings))}
    statuses: Counter[str] = Counter()
    final, adjudication_rows, chain_head, claims, copies, carried = {}, [], None, {}, {}, set()
    rubric, people = None, None
    if (rundir / LABELS_DB).is_file():
        with open_labels(rundir) as labels:
            head, _ = labels.verify_chain()
            chain_head = {"rows": head.rows, "head": head.head}
            claims = labels.claims()
            copies = labels.claim_sources()
            raters = labels.latest(Role.RATER)
            adjudicated = _adjudications(labels)
            statuses.update(claim_status(raters, adjudicated, key).value for key in claims)
            final = final_labels(labels)
            carried, provenance = carried_claims(labels), labels.provenance()
            rubric = labels.rubric_version
            people = {"profiles": profile_summary(labels).as_dict(), "time": people_time(labels).as_dict()}
            for row in labels.rows(role=Role.ADJUDICATOR):
                before = {author: {"class": got[row.key].row.label_class.value, "defect_id": got[row.key].row.defect_id}
                          for author, got in raters.items() if row.key in got}  # fmt: skip
                adjudication_rows.append({"comment_id": row.row.comment_id, "part": row.row.part,
                                          "source_id": claims[row.key].source_id if row.key in claims else None,
                                          "raters": before, "label": row.row.model_dump(mode="json", by_alias=True),
                                          "reason": row.row.reason, "adjudicator": row.author,
                                          "at": row.created_at, "carried_from": provenance.get(row.seq)})  # fmt: skip
    exported = {ref.source_id for refs in copies.values() for ref in refs}
    not_exported = len(comments - exported)
    if not_exported:
        incomplete.append(f"{not_exported} reviewer comments were never exported for labelling (label export)")
    open_claims = {s: statuses[s.value] for s in (ClaimStatus.UNLABELLED, ClaimStatus.SINGLE, ClaimStatus.DISPUTED)
                   if statuses[s.value]}  # fmt: skip
    if open_claims:
        incomplete.append(", ".join(f"{n} claims {s.value}" for s, n in open_claims.items()) + " (no final label)")
    if incomplete and not partial:
        raise UsageError(f"not releasing {rundir}: {'; '.join(incomplete)}; --partial releases what there is, "
                         "marked partial")  # fmt: skip
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty: release into a new directory")
    gold_bytes = (corpus.path / "gold.jsonl").read_bytes()
    first = versions[0] if versions else None
    registered = first["frozen"]["corpus"]["gold_sha256"] if first else None
    final_sha = _sha(gold_bytes)
    label_lines = []
    for key in sorted(final):
        final_row, basis = final[key]
        ref = claims.get(key)
        label_lines.append(json.dumps({"comment_id": key[0], "part": key[1],
                                       "source_id": ref.source_id if ref else None,
                                       "source_ids": sorted({r.source_id for r in copies.get(key, [])}),
                                       "case_id": ref.case_id if ref else None,
                                       **final_row.model_dump(mode="json", by_alias=True, exclude={"triage_s"}),
                                       "basis": basis.value, "carried": key in carried}, ensure_ascii=False))  # fmt: skip
    payloads = {"gold.jsonl": gold_bytes,
                "labels.jsonl": "".join(line + "\n" for line in label_lines).encode(),
                "adjudications.jsonl": "".join(json.dumps(a, ensure_ascii=False) + "\n"
                                               for a in adjudication_rows).encode()}  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    for name, data in payloads.items():
        (out / name).write_bytes(data)
    manifest = ReleaseManifest(
        rundir=str(rundir), corpus=str(corpus.path), released_at=datetime.now(UTC).isoformat(timespec="seconds"),
        partial=bool(incomplete), incomplete=incomplete,
        gold=GoldDigests(registered_sha256=registered, registered_at=first["registered_at"] if first else None,
                         pre_registered=first.get("pre_registered", True) if first else None,
                         recorded_by_runs=recorded, final_sha256=final_sha,
                         unchanged=final_sha == (registered or recorded)),
        runs={"planned": len(planned) if planned is not None else -1, "recorded": len(recorded_ids), "missing": missing},
        claims={**{s.value: statuses[s.value] for s in ClaimStatus}, "not_exported": not_exported,
                "final": len(final), "carried": len(carried & set(final))},
        adjudications=len(adjudication_rows), labels_chain=chain_head,
        files={name: _sha(data) for name, data in payloads.items()}, rubric=rubric, people=people,
    )  # fmt: skip
    (out / RELEASE_FILE).write_text(json.dumps(manifest.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    return manifest
