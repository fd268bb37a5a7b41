"""Streaming reads of history: a fixed number of git processes for any number of commits.

Mining must never start a process per commit. ``iter_log`` reads commit
metadata in one ``git log``; ``iter_diffs`` feeds commit pairs to one
``git diff-tree --stdin`` and splits its output per commit; ``BlobReader`` keeps one
``git cat-file --batch`` open for file contents.
"""

from __future__ import annotations

import queue
import subprocess
import tempfile
import threading
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from ..errors import GitError
from .quote import unquote_path
from .repo import GIT, raise_if_interrupted

__all__ = ["BlobReader", "FileStatus", "LogEntry", "RawSection", "iter_diffs", "iter_log"]

K = TypeVar("K")

_RECORD = "\x1e"
_FIELD = "\x1f"


@dataclass(frozen=True)
class LogEntry:
    """Metadata of one commit."""

    sha: str
    parents: tuple[str, ...]
    date: str
    subject: str
    message: str
    committed: str = ""
    """Committer date (ISO 8601): when the change entered history, for cut-offs."""
    files: tuple[FileStatus, ...] | None = None
    """The files it touched against its first parent (``iter_log(files=True)``; merges
    touch none); None when not asked for."""


@dataclass(frozen=True)
class FileStatus:
    """One file a commit touched, as ``git log --raw -M`` names it: a status letter
    (``M``, ``A``, ``D``, ``R``, ``T``) and the path before and after (the same but for
    a rename). No patch is computed, so reading every commit's files costs a tree walk."""

    status: str
    old_path: str
    new_path: str


def _spawn(repo: Path, args: list[str], stdin: bool = False) -> subprocess.Popen[bytes]:
    # stderr goes to a file, not a pipe: a chatty git must never block on a full pipe
    # that nobody reads until the end.
    err = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(
            [*GIT, "-C", str(repo), *args],
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
        )
    except FileNotFoundError:
        err.close()
        raise GitError("git is not installed or not on PATH") from None
    proc.err_file = err  # type: ignore[attr-defined]
    return proc


def _stderr(proc: subprocess.Popen[bytes]) -> str:
    """The last line git wrote to stderr so far, or ''."""
    err = proc.err_file  # type: ignore[attr-defined]
    err.seek(0)
    lines = err.read().decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""


def _finish(proc: subprocess.Popen[bytes], what: str, complete: bool) -> None:
    """Reap ``proc``; raise if it failed while we still wanted its output."""
    if not complete and proc.poll() is None:
        proc.kill()
    if proc.stdout:
        proc.stdout.close()
    code = proc.wait()
    last = _stderr(proc)
    proc.err_file.close()  # type: ignore[attr-defined]
    if complete and code != 0:
        raise_if_interrupted(code)
        raise GitError(f"{what} failed: {last or f'exit code {code}'}")


def iter_log(
    repo: Path, since: str | None = None, until: str | None = None, files: bool = False
) -> Iterator[LogEntry]:
    """Yield every commit reachable from HEAD, newest first, in one ``git log``;
    ``files``: with the files each touched (:attr:`LogEntry.files`)."""
    # The message ends at a field mark, so that a message line that looks like a raw
    # line (":100644 …") is never read as one.
    args = ["log", f"--format={_RECORD}%H{_FIELD}%P{_FIELD}%aI{_FIELD}%cI{_FIELD}%B{_FIELD}", "HEAD"]
    if files:
        args[2:2] = ["--raw", "-M", "--no-abbrev"]
    if since:
        args.insert(1, f"--since={since}")
    if until:
        args.insert(1, f"--until={until}")
    proc = _spawn(repo, args)
    assert proc.stdout is not None
    complete = False
    try:
        pending: list[str] = []
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace")
            if line.startswith(_RECORD) and pending:
                yield _parse_entry("".join(pending), files)
                pending = []
            pending.append(line)
        if pending:
            yield _parse_entry("".join(pending), files)
        complete = True
    finally:
        _finish(proc, f"git log in {repo}", complete)


def _parse_entry(record: str, files: bool = False) -> LogEntry:
    sha, parents, date, committed, rest = record[1:].split(_FIELD, 4)
    message, _, raw = rest.rpartition(_FIELD)
    message = message.strip()
    return LogEntry(
        sha=sha,
        parents=tuple(parents.split()),
        date=date,
        subject=message.splitlines()[0] if message else "",
        message=message,
        committed=committed,
        files=tuple(_raw_files(raw)) if files else None,
    )


def _raw_files(raw: str) -> Iterator[FileStatus]:
    """The ``:old-mode new-mode old-blob new-blob STATUS\tpath[\tpath]`` lines of ``--raw``."""
    for line in raw.splitlines():
        if not line.startswith(":"):
            continue
        meta, _, names = line.partition("\t")
        paths = [unquote_path(n) for n in names.split("\t")]
        status = meta.split()[-1][:1]
        yield FileStatus(status, paths[0], paths[-1])


@dataclass
class RawSection:
    """One file's part of a diff, as bytes, with cheap tallies.

    ``body`` holds the hunk lines only while the section stays under the caller's size
    cap; past it the lines are counted but dropped, which keeps memory bounded.
    """

    header: list[bytes] = field(default_factory=list)
    body: list[bytes] | None = field(default_factory=list)
    added: int = 0
    removed: int = 0
    binary: bool = False

    @property
    def changed(self) -> int:
        return self.added + self.removed

    def raw(self) -> bytes:
        """The section's exact bytes (only meaningful while ``body`` was kept)."""
        return b"".join(self.header) + b"".join(self.body or [])


def _is_commit_line(line: bytes) -> bool:
    # diff-tree's "<sha>\n" header: the length first, the hex check only then.
    if len(line) not in (41, 65) or line[-1:] != b"\n":
        return False
    return all(c in b"0123456789abcdef" for c in line[:-1])


class _Feeder(threading.Thread, Generic[K]):
    """Writes ``old new`` pairs to diff-tree's stdin so that reading never deadlocks.

    Every item, diffed or not, is queued in order, so the reader sees items in exactly
    the order they were produced whatever git buffers.
    """

    def __init__(
        self, proc: subprocess.Popen[bytes], items: Iterable[tuple[K, tuple[str, str] | None]]
    ) -> None:
        super().__init__(daemon=True)
        self.proc = proc
        self.items = items
        self.queue: queue.SimpleQueue[tuple[K, bool] | None] = queue.SimpleQueue()
        self.error: BaseException | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        assert self.proc.stdin is not None
        iterator = iter(self.items)
        try:
            for key, pair in iterator:
                if self.stop.is_set():
                    break
                self.queue.put((key, pair is not None))
                if pair is not None:
                    # diff-tree reads "<commit> <parent>" and diffs parent -> commit.
                    old, new = pair
                    self.proc.stdin.write(f"{new} {old}\n".encode())
        except (BrokenPipeError, OSError):
            pass
        except BaseException as exc:  # surfaced in the reading thread
            self.error = exc
        finally:
            self.queue.put(None)
            close = getattr(iterator, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:
                    pass
            try:
                self.proc.stdin.close()
            except OSError:
                pass


def iter_diffs(
    repo: Path, items: Iterable[tuple[K, tuple[str, str] | None]], keep_lines: int
) -> Generator[tuple[K, list[RawSection] | None], None, None]:
    """Diff each item's ``(old, new)`` pair in one ``git diff-tree --stdin`` process.

    Items come back in the order given; an item whose pair is None is passed through
    undiffed (with None) so the caller can account for it in order. The diff goes from
    ``old`` to ``new`` with ``a/`` and ``b/`` prefixes, rename detection and full blob
    ids. ``items`` is consumed in a background thread, so it may itself be a lazy stream
    (e.g. filtered ``git log`` output).

    Args:
        keep_lines: a section's hunk lines are kept while its added + removed lines stay
            at or below this number; beyond it only the tallies are kept.
    """
    proc = _spawn(
        repo,
        ["diff-tree", "--stdin", "--always", "-r", "-p", "-M", "--full-index", "--no-color",
         "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/"],
        stdin=True,
    )  # fmt: skip
    assert proc.stdout is not None
    feeder: _Feeder[K] = _Feeder(proc, items)
    feeder.start()
    complete = False

    def next_diffed() -> Iterator[tuple[K, list[RawSection] | None]]:
        # Pass through undiffed items until the one this diff output belongs to.
        while (item := feeder.queue.get()) is not None:
            if item[1]:
                yield item[0], []
                return
            yield item[0], None
        if feeder.error is not None:
            raise feeder.error
        raise GitError("git diff-tree produced more output than was asked for")

    try:
        key: K | None = None
        pending = False
        sections: list[RawSection] = []
        current: RawSection | None = None
        in_body = False
        for line in proc.stdout:
            if _is_commit_line(line):
                if pending:
                    yield key, sections  # type: ignore[misc]
                for key, diffed in next_diffed():  # noqa: B007
                    if diffed is None:
                        yield key, None
                pending, sections, current, in_body = True, [], None, False
                continue
            if line.startswith(b"diff --git "):
                current = RawSection(header=[line])
                sections.append(current)
                in_body = False
                continue
            if current is None:
                continue
            if not in_body:
                if line.startswith(b"@@"):
                    in_body = True
                elif line.startswith((b"Binary files ", b"GIT binary patch")):
                    current.binary = True
                    current.header.append(line)
                    continue
                else:
                    current.header.append(line)
                    continue
            first = line[:1]
            if first == b"+":
                current.added += 1
            elif first == b"-":
                current.removed += 1
            if current.body is not None:
                if current.changed > keep_lines:
                    current.body = None
                else:
                    current.body.append(line)
        if pending:
            yield key, sections  # type: ignore[misc]
        while (item := feeder.queue.get()) is not None:
            if item[1]:
                # Most likely git died (a missing object, say): its own words say why.
                raise_if_interrupted(proc.wait())
                last = _stderr(proc) or "no message"
                raise GitError(
                    f"git diff-tree stopped before diffing every commit in {repo}: {last}"
                )
            yield item[0], None
        complete = True
    finally:
        feeder.stop.set()
        _finish(proc, f"git diff-tree in {repo}", complete)
        feeder.join(timeout=5)
    if feeder.error is not None:
        raise feeder.error


class BlobReader:
    """File contents by blob id through one long-lived ``git cat-file --batch``."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._proc: subprocess.Popen[bytes] | None = None

    def get_many(self, blobs: list[str]) -> dict[str, bytes | None]:
        """The bytes of each blob (None when git lacks it), in one round trip.

        Requests are written from a thread while answers are read here, so a batch of any
        size never deadlocks on full pipes and costs one round trip, not one per blob.
        """
        if not blobs:
            return {}
        if self._proc is None:
            self._proc = _spawn(self.repo, ["cat-file", "--batch"], stdin=True)
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        stdin = proc.stdin

        def write() -> None:
            try:
                stdin.write(b"".join(b.encode() + b"\n" for b in blobs))
                stdin.flush()
            except OSError:
                pass

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        out: dict[str, bytes | None] = {}
        try:
            for blob in blobs:
                header = proc.stdout.readline().split()
                if not header:
                    try:
                        raise_if_interrupted(proc.wait(timeout=5))
                    except subprocess.TimeoutExpired:
                        pass
                    raise GitError(f"git cat-file in {self.repo} stopped answering: {_stderr(proc)}")
                if len(header) < 3 or header[1] == b"missing":
                    out[blob] = None
                    continue
                out[blob] = proc.stdout.read(int(header[2]))
                proc.stdout.read(1)  # the newline after the contents
        finally:
            writer.join()
        return out

    def get(self, blob: str) -> bytes | None:
        """Return one blob's bytes, or None when git does not have it."""
        return self.get_many([blob])[blob]

    def close(self, quiet: bool = False) -> None:
        """Stop git; ``quiet`` when already unwinding from an error (or a generator being
        closed), where a second exception would only replace the first."""
        if self._proc is not None:
            proc, self._proc = self._proc, None
            if proc.stdin:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            _finish(proc, f"git cat-file in {self.repo}", complete=not quiet)

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.close(quiet=exc_type is not None)
