"""The artefact manifest (``export --manifest``): the SHA-256 of every artefact a score rests on.

Publish it beside the results and anyone holding the same files can check them: every
case's diff and validation log in the corpus, every run's raw review (as the run store holds
it, UTF-8), and the records of the corpus and the run directory themselves. Nothing is read
through a symbolic link: a linked file is listed as ``link`` with no digest.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..errors import CorpusError
from ..store.corpus import patch_file, read_recorded_corpus
from ..store.runs import RUNS_DB, RunStore

__all__ = ["MANIFEST_FILES", "Artefact", "ArtefactManifest", "artefact_manifest"]

#: The run directory's and the corpus's own records, hashed when present.
MANIFEST_FILES = {
    "rundir": ("runs.sqlite", "registration.json", "allocation.jsonl", "exclusions.jsonl", "verdicts.jsonl",
               "labels.sqlite", "readings.jsonl"),
    "corpus": ("corpus.json", "cases.jsonl", "gold.jsonl", "dropped.jsonl", "audit.json"),
}


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Artefact(_Record):
    """One artefact and its digest."""

    kind: str = Field(description="diff, log, raw_review, rundir or corpus (a record file), or link (not followed).")
    path: str | None = Field(default=None, description="Relative to the corpus (diff, log, corpus) or the run "
                             "directory (rundir); null for a raw review (it lives in runs.sqlite).")
    case_id: str | None = Field(default=None, description="The case of a diff, a log or a raw review.")
    run_id: str | None = Field(default=None, description="The run of a raw review.")
    condition: str | None = Field(default=None, description="The condition of a raw review's run.")
    sha256: str | None = Field(description="SHA-256 of the bytes (a raw review: its UTF-8 text); null for a link.")
    bytes: int | None = Field(description="Size in bytes; null for a link.")


class ArtefactManifest(_Record):
    """``export --manifest``: every diff, validation log and raw review, with its SHA-256."""

    rundir: str
    corpus: str
    gold_sha256: str
    counts: dict[str, int] = Field(description="Artefacts listed, by kind.")
    artefacts: list[Artefact] = Field(description="Record files first, then diffs and logs by case, then raw "
                                      "reviews by run id.")


def _hashed(kind: str, root: Path, name: str, **where: str | None) -> Artefact | None:
    """A file under ``root``, hashed without following a link; None when absent."""
    path = root / name
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return Artefact(kind="link", path=name, sha256=None, bytes=None, **where)
    if not stat.S_ISREG(info.st_mode):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)  # a link swapped in since lstat is refused here
    except OSError as exc:
        raise CorpusError(f"cannot read {path}: {exc.strerror}") from None
    digest, size = hashlib.sha256(), 0
    with os.fdopen(fd, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return Artefact(kind=kind, path=name, sha256=digest.hexdigest(), bytes=size, **where)


def artefact_manifest(rundir: Path) -> ArtefactManifest:
    """The manifest of ``rundir`` and the corpus its runs recorded.

    Raises:
        CorpusError: the run directory or its corpus is missing, or a diff is reached through a link.
        UsageError: the corpus's gold changed since the runs.
    """
    if not (rundir / RUNS_DB).is_file():
        raise CorpusError(f"{rundir} is not a run directory (no {RUNS_DB})")
    store = RunStore(rundir / RUNS_DB)
    try:
        runs = list(store.runs())
        corpus_path, recorded = store.get_meta("corpus_path"), store.get_meta("gold_sha256")
    finally:
        store.close()
    corpus = read_recorded_corpus(rundir, corpus_path, recorded, "the manifest")
    out: list[Artefact] = []
    for kind, root in (("rundir", rundir), ("corpus", corpus.path)):
        out.extend(a for name in MANIFEST_FILES[kind] if (a := _hashed(kind, root, name)) is not None)
    for case in sorted(corpus.cases, key=lambda c: c.case_id):
        path = patch_file(corpus.path, case)  # refuses a link or a path out of the corpus
        diff = _hashed("diff", corpus.path, str(path.relative_to(Path(os.path.abspath(corpus.path)))),
                       case_id=case.case_id)  # fmt: skip
        if diff is not None:
            out.append(diff)
        if (corpus.path / "logs").is_symlink():
            continue
        log = _hashed("log", corpus.path, f"logs/{case.case_id}.log", case_id=case.case_id)
        if log is not None:
            out.append(log)
    for run in sorted(runs, key=lambda r: r.run_id):
        if run.raw_output is None:
            continue
        data = run.raw_output.encode("utf-8", "surrogatepass")
        out.append(Artefact(kind="raw_review", case_id=run.case_id, run_id=run.run_id, condition=run.condition,
                            sha256=hashlib.sha256(data).hexdigest(), bytes=len(data)))  # fmt: skip
    counts: dict[str, int] = {}
    for artefact in out:
        counts[artefact.kind] = counts.get(artefact.kind, 0) + 1
    return ArtefactManifest(rundir=str(rundir), corpus=str(corpus.path), gold_sha256=corpus.meta.gold_sha256,
                            counts=dict(sorted(counts.items())), artefacts=out)  # fmt: skip
