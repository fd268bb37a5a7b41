"""The corpus directory on disk: written atomically, read with line-level errors.

A corpus is built in a hidden sibling directory and renamed into place only when every
file is complete, so an interrupted ``mine`` never leaves a half-written corpus behind.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import CorpusError, IntegrityError, OutputExists, UsageError
from ..records import Case, CorpusMeta, DroppedCommit, GoldRecord
from .scratch import make_scratch

__all__ = [
    "CASES_FILE",
    "DROPPED_FILE",
    "GOLD_FILE",
    "META_FILE",
    "PATCH_DIR",
    "Corpus",
    "CorpusWriter",
    "dump_jsonl",
    "patch_file",
    "read_corpus",
    "read_recorded_corpus",
    "read_dropped",
    "read_patch",
    "sha256_file",
]

META_FILE = "corpus.json"
CASES_FILE = "cases.jsonl"
GOLD_FILE = "gold.jsonl"
#: Candidate commits that made no case, one ``DroppedCommit`` a line (written by ``mine``).
DROPPED_FILE = "dropped.jsonl"
PATCH_DIR = "patches"

M = TypeVar("M", bound=BaseModel)


def dump_jsonl(records: Iterable[BaseModel]) -> bytes:
    """One compact JSON object per line, fields by alias, UTF-8."""
    return b"".join(r.model_dump_json(by_alias=True).encode() + b"\n" for r in records)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:  # a failed write names no file: say which (a full disk, say)
        if exc.filename is None:
            exc.filename = str(path)
        raise


def sync_filesystem(path: Path) -> None:
    """Flush every file written under ``path`` to disk in one call.

    One ``syncfs`` costs about what one ``fsync`` does, where an fsync per patch file made
    the disk, not git, the bottleneck of mining. Falls back to ``os.sync``.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            if libc.syncfs(fd) == 0:
                return
        except (OSError, AttributeError):
            pass
        os.sync()
    finally:
        os.close(fd)


class CorpusWriter:
    """Collects cases into a staging directory; :meth:`commit` moves it to ``out``.

    Patches go to disk as they arrive (memory stays bounded); the small records are kept
    and written sorted by ``case_id`` so that file order reveals nothing about history.
    """

    def __init__(self, out: Path, force: bool = False) -> None:
        # Absolute, so that "." or "x/.." still has a real name and parent to rename within.
        self.out = out = Path(os.path.abspath(out))
        self.force = force
        if out.exists() and not out.is_dir():
            raise OutputExists(f"{out} exists and is not a directory")
        if out.is_dir() and any(out.iterdir()):
            if not force:
                raise OutputExists(f"{out} exists and is not empty (use --force to replace it)")
            if not (out / META_FILE).is_file():
                # --force replaces a corpus, never an arbitrary directory (a home, a repository).
                raise OutputExists(
                    f"{out} is not empty and holds no {META_FILE}; refusing to replace it "
                    "even with --force (choose a new directory)"
                )
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            # ".<name>.<pid>-XXXX.tmp": a later mine sweeps the stage of a killed one.
            stage = make_scratch(f".{out.name}.", out.parent, ".tmp")
        except OSError as exc:
            raise UsageError(
                f"cannot create a corpus at {out}: {exc.strerror} ({exc.filename})"
            ) from None
        self.stage = Path(stage)
        (self.stage / PATCH_DIR).mkdir()
        self.cases: list[Case] = []
        self.gold: list[GoldRecord] = []
        self.dropped: list[DroppedCommit] = []
        """Candidate commits that made no case (``dropped.jsonl``), in history order."""

    def add(self, case: Case, gold: GoldRecord, patch: bytes, extra: dict[str, bytes] | None = None) -> None:
        """Stage one case; ``extra`` holds other files it needs, by corpus path under ``patches/``."""
        _write(self.stage / case.patch, patch)
        for name, data in (extra or {}).items():
            if not name.startswith(f"{PATCH_DIR}/") or ".." in name.split("/"):
                raise ValueError(f"case file {name!r} must lie under {PATCH_DIR}/")
            _write(self.stage / name, data)
        self.cases.append(case)
        self.gold.append(gold)

    def commit(self, make_meta: Callable[[str], CorpusMeta]) -> CorpusMeta:
        """Write the JSONL files and ``corpus.json`` (built by ``make_meta(gold_sha256)``)."""
        self.cases.sort(key=lambda c: c.case_id)
        self.gold.sort(key=lambda g: g.case_id)
        _write(self.stage / CASES_FILE, dump_jsonl(self.cases))
        _write(self.stage / GOLD_FILE, dump_jsonl(self.gold))
        _write(self.stage / DROPPED_FILE, dump_jsonl(self.dropped))
        meta = make_meta(sha256_file(self.stage / GOLD_FILE))
        _write(self.stage / META_FILE, meta.model_dump_json(indent=2).encode() + b"\n")
        sync_filesystem(self.stage)  # everything is on disk before the corpus appears
        if self.out.exists():
            trash = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.", suffix=".old", dir=self.out.parent))
            try:
                os.replace(self.out, trash / "corpus")
                try:
                    os.replace(self.stage, self.out)
                except OSError:
                    os.replace(trash / "corpus", self.out)  # put the old corpus back
                    raise
            finally:
                shutil.rmtree(trash, ignore_errors=True)
        else:
            os.replace(self.stage, self.out)
        return meta

    def abort(self) -> None:
        shutil.rmtree(self.stage, ignore_errors=True)

    def __enter__(self) -> CorpusWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if self.stage.exists():
            self.abort()


@dataclass(frozen=True)
class Corpus:
    """A corpus read back from disk."""

    path: Path
    meta: CorpusMeta
    cases: list[Case]
    gold: list[GoldRecord]


def read_jsonl(path: Path, model: type[M]) -> list[M]:
    if not path.is_file():
        raise CorpusError(f"{path} is missing")
    records: list[M] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                records.append(model.model_validate_json(raw))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                detail = f"{where}: {first['msg']}" if where else first["msg"]
                raise CorpusError(f"{path}:{number}: not a valid {model.__name__} ({detail})") from None
    return records


def read_dropped(corpus_path: Path) -> list[DroppedCommit]:
    """The candidate commits a corpus's mining dropped; [] for a corpus mined before
    ``dropped.jsonl`` existed.

    Raises:
        CorpusError: a line is not a valid record.
    """
    path = corpus_path / DROPPED_FILE
    return read_jsonl(path, DroppedCommit) if path.is_file() else []


def patch_file(corpus_path: Path, case: Case, name: str | None = None) -> Path:
    """The absolute path of ``case``'s patch (or of ``name``, another of its patches such as
    its ``base_patch``), checked to be a regular file inside ``patches/``.

    ``Case`` already refuses absolute and ``..`` paths; this also refuses a symlink anywhere
    on the way (a shared corpus whose ``patches/x.diff`` points at ``/etc/passwd``).

    Raises:
        CorpusError: the patch file is missing, not a regular file, or reached through a link.
    """
    name = case.patch if name is None else name
    root = Path(os.path.abspath(corpus_path))
    path = root / name
    current = root
    for part in Path(name).parts:
        current = current / part
        try:
            info = current.lstat()
        except FileNotFoundError:
            raise CorpusError(f"the patch of {case.case_id} is missing: {path}") from None
        if stat.S_ISLNK(info.st_mode):
            raise CorpusError(f"the patch of {case.case_id} is reached through a symbolic link "
                              f"({current}); refusing to follow it out of the corpus")  # fmt: skip
    if not stat.S_ISREG(info.st_mode):
        raise CorpusError(f"the patch of {case.case_id} is not a regular file: {path}")
    return path


def read_patch(corpus_path: Path, case: Case) -> bytes:
    """The bytes of ``case``'s patch (see :func:`patch_file` for what is refused)."""
    path = patch_file(corpus_path, case)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise CorpusError(f"cannot read the patch of {case.case_id} ({path}): {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def read_recorded_corpus(rundir: Path, corpus_path: str | None, recorded_gold: str | None, mixing: str) -> Corpus:
    """The corpus a run directory's store recorded, refused when its gold changed since.

    Args:
        corpus_path, recorded_gold: the store's ``corpus_path`` and ``gold_sha256`` meta.
        mixing: what a changed gold would mix, for the message ("scoring", "labels").

    Raises:
        UsageError: the store recorded no corpus, or the gold changed since the runs.
        CorpusError: as :func:`read_corpus`.
    """
    if not corpus_path:
        raise UsageError(f"{rundir} records no corpus; was it written by 'reviewbench run'?")
    corpus = read_corpus(Path(corpus_path))
    if recorded_gold and corpus.meta.gold_sha256 != recorded_gold:
        raise UsageError(f"the gold of {corpus_path} changed since these runs; {mixing} would mix benchmark versions")
    return corpus


def read_corpus(path: Path) -> Corpus:
    """Load and check a corpus directory.

    ``gold.jsonl`` must still hash to the ``gold_sha256`` recorded in ``corpus.json``: a
    hand-edited gold file would otherwise change recall with no trace.

    Raises:
        CorpusError: a file is missing or a line does not match its schema.
        IntegrityError: gold.jsonl changed since corpus.json was written.
    """
    if not path.is_dir():
        raise CorpusError(f"{path} is not a corpus directory")
    meta_path = path / META_FILE
    if not meta_path.is_file():
        raise CorpusError(f"{path} has no {META_FILE}: not a corpus (run 'reviewbench mine' first)")
    try:
        meta = CorpusMeta.model_validate_json(meta_path.read_bytes())
    except ValidationError as exc:
        raise CorpusError(f"{meta_path}: not a valid corpus.json ({exc.errors()[0]['msg']})") from None
    cases = read_jsonl(path / CASES_FILE, Case)
    gold = read_jsonl(path / GOLD_FILE, GoldRecord)
    if sha256_file(path / GOLD_FILE) != meta.gold_sha256:
        raise IntegrityError(f"{path / GOLD_FILE} changed since {META_FILE} was written (its SHA-256 "
                          f"differs from gold_sha256); mine the corpus again or restore the file")  # fmt: skip
    return Corpus(path=path, meta=meta, cases=cases, gold=gold)
