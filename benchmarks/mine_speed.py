#!/usr/bin/env python3
"""Speed of fix-commit mining: reviewbench against PyDriller, per-commit git calls and git.

Four ways of extracting the same facts from a repository's fix commits run in ONE Python
process, on the same repository, with the same commit-message filter (the Python regex
``reviewbench.config.DEFAULT_FIX_PATTERN``, case-insensitive, i.e.
``\\b(?:fix|fixes|fixed|bugfix|hotfix)\\b``):

``reviewbench``
    ``mine_corpus(MineConfig(repo=REPO, controls_ratio=0, mirrors=False), <fresh temp dir>,
    force=True)``: the real mining stage with its defaults (max 60 changed source lines) but
    no controls and no mirrors (pydriller makes neither: the history walk is what is
    compared, and the figures in benchmarks/README.md were measured before mirrors),
    writing a corpus.
    It reads history in one ``git log``, diffs all matching commits through one
    ``git diff-tree --stdin`` and reads blobs through one ``git cat-file --batch``.
``pydriller``
    ``Repository(REPO, only_no_merge=True).traverse_commits()``; each message is
    filtered with the same regex and, for each matching commit, every modified file's
    ``.diff`` text, its path and the identifiers of ``diff_parsed['deleted']`` are
    materialised (PyDriller computes these lazily, so they are touched explicitly).
``per-commit``
    The git calls of the ``build_corpus.sh`` seed script: one
    ``git log --no-merges`` listing (with messages, filtered in Python), then for each
    fix commit ``git rev-parse FIX^``, ``git diff --unified=3 FIX PARENT`` (the reverse
    patch), ``git diff --name-only PARENT FIX`` and ``git diff --unified=0 PARENT FIX``
    (whose ``-`` lines give the removed identifiers, regex ``[A-Za-z_][A-Za-z0-9_]{3,}``).
    Outputs are kept in memory, not written to files as the shell script does.
``floor``
    git alone streaming the same commits with patches to /dev/null:
    ``git log --no-merges -i -E --grep='\\b(fix|fixes|fixed|bugfix|hotfix)\\b' -p HEAD``.
    Before timing, the script checks that git's ``-E`` regex selects exactly the same
    commits as the Python regex; if not it tries ``-P`` (PCRE), and otherwise reports
    the approximation used. The ``<= 2x`` target of issue 28 is set against it.
``floor-all``
    git alone streaming every non-merge commit with patches to /dev/null
    (``git log --no-merges -p HEAD``): what the default selection looks at, since its
    co-edit signal (``test_coedit``) takes commits whose message says nothing. Reported
    beside the target, not instead of it: reviewbench reads every commit's file list
    (``--raw``) and the patches of its candidates only, so it may beat this floor.

The methods do not do identical work: reviewbench additionally classifies paths, parses
hunks, reads the post-fix file of every kept case to find enclosing symbols and writes
(and fsyncs) a corpus; it also reads merge commits' messages because it reports them as
dropped. The floor does no extraction at all. The table shows what each one saw.

Timing: wall clock (``time.perf_counter``) of each run; methods run in interleaved rounds
(``--repeat`` rounds, default 3) and the best run counts. Set-up and clean-up (temp dirs)
are outside the timed region.

Memory, and what each number measures:

``py RSS``
    Peak resident set of this Python process during a timed run:
    ``getrusage(RUSAGE_SELF).ru_maxrss`` after the kernel's high-water mark was reset
    through ``/proc/self/clear_refs`` just before the run; max over runs. It includes the
    interpreter and every imported library (reviewbench, pydantic, PyDriller, GitPython)
    and whatever earlier runs left allocated, so it is a process figure, not memory
    attributable to the method alone. Where the reset is impossible the figure is the
    cumulative high-water mark and is marked ``(cum)``.
``py heap``
    Peak of memory allocated through Python's allocators (``tracemalloc``) during one
    extra, untimed run per method. This is the part a method itself allocates in Python;
    git's memory is not in it.
``git procs`` / ``git RSS``
    In the same untimed run a ``git`` shim first on PATH runs every git process under GNU
    time (``/usr/bin/time``), which reaps it with ``wait4``: the count of git processes
    and the largest one's own peak RSS (this includes pack pages git mmaps and touches).
    ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` is printed too, but on Linux a child's maxrss
    starts from its parent's resident set at fork/vfork (recorded at exec), so for children
    of this ~50 MiB Python process it is at least Python's size and says little about git.
    Without GNU time the shim only counts git processes and ``git RSS`` reads ``n/a``.

CPU columns are ``getrusage`` deltas of the best run: ``cpu py`` is this process (all
threads), ``cpu git`` is the git processes reaped during the run.

By default the repository is first copied with ``git clone --bare --no-hardlinks`` into a
temp dir and all four methods read that copy (the same packs, byte for byte). The reason:
PyDriller (through GitPython) writes ``blame.markUnblamableLines`` into the repository's
config, and GitPython cannot open a bare repository whose config lacks ``core.bare``.
``--in-place`` skips the copy.

Run::

    .venv/bin/pip install -e '.[bench]'      # pydriller==2.12
    .venv/bin/python benchmarks/mine_speed.py /path/to/repo [--repeat 3]

There are no assertions on wall-clock time; the targets are reported, not enforced.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewbench import MineConfig, mine_corpus
from reviewbench import __version__ as reviewbench_version
from reviewbench.config import DEFAULT_FIX_PATTERN

#: The same identifier regex as the seed script's ``grep -oE``.
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")

#: git's --grep flavours (ERE, PCRE) have no reliable ``(?:``; a capturing group is equivalent.
GIT_FIX_PATTERN = r"\b(fix|fixes|fixed|bugfix|hotfix)\b"

METHODS = ("reviewbench", "pydriller", "per-commit", "floor", "floor-all")

#: Targets: (numerator, denominator, comparison, bound).
TARGETS = (
    ("pydriller", "reviewbench", ">=", 5.0),
    ("per-commit", "reviewbench", ">=", 10.0),
    ("reviewbench", "floor", "<=", 2.0),
)
#: Ratios printed without a target: (numerator, denominator, what the denominator is).
REPORTED = (("reviewbench", "floor-all", "git streaming every commit the default selection examines"),)


# --------------------------------------------------------------------------- processes


def run_git(args: list[str], capture: bool = True) -> tuple[int, bytes]:
    """One git call, as a straightforward script would make it."""
    proc = subprocess.run(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return proc.returncode, proc.stdout or b""


class GitShim:
    """A ``git`` first on PATH that logs every git process and, via GNU time, its peak RSS.

    Used only in the untimed memory run. GNU time reaps git with ``wait4`` and prints its
    ``ru_maxrss``; time's own footprint (~2 MiB) is what git inherits at fork, so the figure
    is git's own peak (including pack pages git mmaps and touches). A git process killed
    through its parent (GitPython terminates its persistent ``cat-file`` processes) leaves
    a start line but no figure; the report counts those.
    """

    def __init__(self, root: Path) -> None:
        self.dir = root / "git-shim"
        self.dir.mkdir()
        self.log = self.dir / "processes.log"
        real_git = shutil.which("git") or "git"
        self.time_bin = shutil.which("time")  # GNU time; the shell keyword is not on PATH
        log = shlex.quote(str(self.log))
        lines = ["#!/bin/sh", f"echo start >> {log}"]
        if self.time_bin:
            lines.append(
                f'exec {shlex.quote(self.time_bin)} -a -o {log} -f "rss %M" '
                f'{shlex.quote(real_git)} "$@"'
            )
        else:
            lines.append(f'exec {shlex.quote(real_git)} "$@"')
        shim = self.dir / "git"
        shim.write_text("\n".join(lines) + "\n")
        shim.chmod(0o755)
        self._saved_path: str | None = None

    def __enter__(self) -> GitShim:
        self.log.write_text("")
        self._saved_path = os.environ.get("PATH", "")
        os.environ["PATH"] = f"{self.dir}{os.pathsep}{self._saved_path}"
        return self

    def __exit__(self, *exc: object) -> None:
        os.environ["PATH"] = self._saved_path or ""

    def summary(self) -> tuple[int, int, int | None]:
        """(processes started, processes with a figure, largest peak RSS in KiB)."""
        started = measured = 0
        peak: int | None = None
        for line in self.log.read_text().splitlines():
            if line == "start":
                started += 1
            elif line.startswith("rss "):
                measured += 1
                peak = max(peak or 0, int(line[4:]))
        return started, measured, peak


def git(repo: Path, *args: str) -> str:
    """One untimed helper call to git; raises on failure."""
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        errors="replace",
    ).stdout


# --------------------------------------------------------------------------- results


@dataclass
class RunResult:
    """What one run of a method saw and produced."""

    examined: int | None = None  # commits whose message was looked at
    matched: int | None = None  # matching non-merge commits
    output: str = ""  # what was produced, in words
    shas: frozenset[str] | None = None  # the matching non-merge commits, when known
    files: int | None = None  # changed-file entries over matching commits
    idents: int | None = None  # sum over commits of distinct removed identifiers


@dataclass
class Measurement:
    """All runs of one method."""

    name: str
    seconds: list[float] = field(default_factory=list)
    cpu_self: list[float] = field(default_factory=list)
    cpu_children: list[float] = field(default_factory=list)
    self_rss_kb: list[int] = field(default_factory=list)
    py_heap_peak: int | None = None
    git_procs: tuple[int, int, int | None] | None = None  # from GitShim.summary()
    result: RunResult | None = None

    @property
    def best(self) -> float:
        return min(self.seconds)

    def best_index(self) -> int:
        return self.seconds.index(self.best)


# --------------------------------------------------------------------------- methods


class Method:
    """A way of mining; ``run`` is timed, ``setup`` and ``teardown`` are not."""

    name = ""

    def __init__(self, repo: Path, pattern: re.Pattern[str]) -> None:
        self.repo = repo
        self.pattern = pattern

    def setup(self) -> Any:
        return None

    def run(self, state: Any) -> RunResult:
        raise NotImplementedError

    def teardown(self, state: Any) -> None:
        pass


class Reviewbench(Method):
    name = "reviewbench"

    def __init__(self, repo: Path, pattern: re.Pattern[str], tmp_root: str | None) -> None:
        super().__init__(repo, pattern)
        self.tmp_root = tmp_root

    def setup(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="mine-speed-rb-", dir=self.tmp_root))

    def run(self, state: Path) -> RunResult:
        config = MineConfig(repo=self.repo, controls_ratio=0, mirrors=False)  # neither controls nor mirrors
        summary = mine_corpus(config, state / "corpus", force=True)
        counts = summary.meta.counts
        merges = counts.dropped.get("merge", 0)
        return RunResult(
            examined=summary.scanned_commits,
            matched=counts.matched_commits - merges,
            output=f"{counts.cases} cases ({counts.matched_commits} matched incl. {merges} merges)",
        )

    def teardown(self, state: Path) -> None:
        shutil.rmtree(state, ignore_errors=True)


class PyDriller(Method):
    name = "pydriller"

    def run(self, state: Any) -> RunResult:
        from pydriller import Repository

        examined = matched = files = idents = diff_chars = 0
        shas: set[str] = set()
        for commit in Repository(str(self.repo), only_no_merge=True).traverse_commits():
            examined += 1
            if not self.pattern.search(commit.msg):
                continue
            matched += 1
            shas.add(commit.hash)
            removed: set[str] = set()
            paths: list[str] = []
            for mf in commit.modified_files:
                diff_chars += len(mf.diff)  # the patch text, computed and decoded
                paths.append(mf.new_path or mf.old_path or "")
                for _, line in mf.diff_parsed["deleted"]:
                    removed.update(IDENT.findall(line))
            files += len(paths)
            idents += len(removed)
        return RunResult(
            examined=examined,
            matched=matched,
            shas=frozenset(shas),
            files=files,
            idents=idents,
            output=f"{files} files, {idents} idents, {diff_chars} diff chars",
        )


class PerCommit(Method):
    name = "per-commit"

    def run(self, state: Any) -> RunResult:
        calls = 1
        base = ["git", "-C", str(self.repo)]
        _, listing = run_git([*base, "log", "--no-merges", "--format=%H%x1f%B%x1e", "HEAD"])
        examined = files = idents = rootless = reverse_bytes = 0
        shas: list[str] = []
        for record in listing.decode("utf-8", "replace").split("\x1e"):
            record = record.lstrip("\n")
            if not record:
                continue
            sha, message = record.split("\x1f", 1)
            examined += 1
            if not self.pattern.search(message):
                continue
            shas.append(sha)
            code, out = run_git([*base, "rev-parse", f"{sha}^"])
            calls += 1
            if code != 0:  # a root commit: the shell script would stop here (set -e)
                rootless += 1
                continue
            parent = out.decode().strip()
            _, reverse = run_git([*base, "diff", "--unified=3", sha, parent])
            _, names = run_git([*base, "diff", "--name-only", parent, sha])
            _, zero = run_git([*base, "diff", "--unified=0", parent, sha])
            calls += 3
            reverse_bytes += len(reverse)
            files += len(names.splitlines())
            removed: set[str] = set()
            for line in zero.decode("utf-8", "replace").splitlines():
                if line.startswith("-") and not line.startswith("---"):
                    removed.update(IDENT.findall(line))
            idents += len(removed)
        note = f", {rootless} root commits skipped" if rootless else ""
        return RunResult(
            examined=examined,
            matched=len(shas),
            shas=frozenset(shas),
            files=files,
            idents=idents,
            output=f"{files} files, {idents} idents, {reverse_bytes} patch bytes, "
            f"{calls} git calls{note}",
        )


class Floor(Method):
    name = "floor"

    def __init__(self, repo: Path, pattern: re.Pattern[str], flag: str, shas: frozenset[str]):
        super().__init__(repo, pattern)
        self.flag = flag
        self.shas = shas  # what the same git selection lists (checked before timing)

    def args(self) -> list[str]:
        return [
            "git",
            "-C",
            str(self.repo),
            "log",
            "--no-merges",
            "-i",
            self.flag,
            f"--grep={GIT_FIX_PATTERN}",
            "-p",
            "HEAD",
        ]

    def run(self, state: Any) -> RunResult:
        code, _ = run_git(self.args(), capture=False)
        if code != 0:
            raise RuntimeError(f"git log failed with exit code {code}")
        return RunResult(matched=len(self.shas), shas=self.shas, output="patches to /dev/null")


class FloorAll(Method):
    name = "floor-all"

    def __init__(self, repo: Path, pattern: re.Pattern[str], commits: int):
        super().__init__(repo, pattern)
        self.commits = commits

    def args(self) -> list[str]:
        return ["git", "-C", str(self.repo), "log", "--no-merges", "-p", "HEAD"]

    def run(self, state: Any) -> RunResult:
        code, _ = run_git(self.args(), capture=False)
        if code != 0:
            raise RuntimeError(f"git log failed with exit code {code}")
        return RunResult(matched=self.commits, shas=None, output="every commit's patch to /dev/null")


# --------------------------------------------------------------------------- preflight


@dataclass
class Preflight:
    head: str
    reachable: int
    non_merge: int
    python_shas: frozenset[str]
    git_flag: str
    git_note: str
    git_shas: frozenset[str]


def preflight(repo: Path, pattern: re.Pattern[str]) -> Preflight:
    """Untimed: what the Python regex selects, and which git --grep flavour agrees."""
    head = git(repo, "rev-parse", "HEAD").strip()
    reachable = int(git(repo, "rev-list", "--count", "HEAD"))
    listing = git(repo, "log", "--no-merges", "--format=%H%x1f%B%x1e", "HEAD")
    records = [r.lstrip("\n") for r in listing.split("\x1e") if r.strip()]
    python_shas = frozenset(
        sha for sha, msg in (r.split("\x1f", 1) for r in records) if pattern.search(msg)
    )
    tried: list[str] = []
    for flag in ("-E", "-P"):
        try:
            out = git(
                repo,
                "log",
                "--no-merges",
                "-i",
                flag,
                f"--grep={GIT_FIX_PATTERN}",
                "--format=%H",
                "HEAD",
            )
        except subprocess.CalledProcessError:
            tried.append(f"{flag}: not supported by this git")
            continue
        shas = frozenset(out.split())
        if shas == python_shas:
            note = f"git {flag} selects exactly the Python regex's {len(shas)} commits"
            if tried:
                note += f" ({'; '.join(tried)})"
            return Preflight(head, reachable, len(records), python_shas, flag, note, shas)
        tried.append(f"{flag}: {len(shas)} commits, differs from Python's {len(python_shas)}")
    # Neither flavour agrees: keep -E and say so.
    out = git(
        repo, "log", "--no-merges", "-i", "-E", f"--grep={GIT_FIX_PATTERN}", "--format=%H", "HEAD"
    )
    note = "APPROXIMATION: " + "; ".join(tried) + "; using -E"
    return Preflight(head, reachable, len(records), python_shas, "-E", note, frozenset(out.split()))


# --------------------------------------------------------------------------- measuring


def _reset_peak_rss() -> bool:
    """Reset the kernel's RSS high-water mark of this process (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def timed_run(method: Method, m: Measurement) -> None:
    """One timed run: wall clock, CPU of this process and of reaped git, peak RSS."""
    state = method.setup()
    try:
        gc.collect()
        reset = _reset_peak_rss()
        self0 = resource.getrusage(resource.RUSAGE_SELF)
        kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        result = method.run(state)
        elapsed = time.perf_counter() - t0
        self1 = resource.getrusage(resource.RUSAGE_SELF)
        kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        method.teardown(state)
    m.seconds.append(elapsed)
    m.cpu_self.append(_cpu(self1) - _cpu(self0))
    m.cpu_children.append(_cpu(kids1) - _cpu(kids0))
    # Negative marks a cumulative (not reset) high-water mark.
    m.self_rss_kb.append(self1.ru_maxrss if reset else -self1.ru_maxrss)
    if m.result is None:
        m.result = result


def memory_run(method: Method, m: Measurement, shim: GitShim, trace: bool) -> None:
    """One untimed run: Python heap peak under tracemalloc and every git process's RSS."""
    state = method.setup()
    try:
        gc.collect()
        with shim:
            if trace:
                tracemalloc.start()
            try:
                method.run(state)
                if trace:
                    m.py_heap_peak = tracemalloc.get_traced_memory()[1]
            finally:
                if trace:
                    tracemalloc.stop()
            gc.collect()  # lets GitPython terminate its persistent processes
            time.sleep(0.2)  # and lets GNU time append their figures
    finally:
        method.teardown(state)
    m.git_procs = shim.summary()


def _mib(kb: int) -> str:
    return f"{kb / 1024:.0f} MiB"


# --------------------------------------------------------------------------- report


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [
            c.ljust(w) if i == 0 or i == len(row) - 1 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _git_cell(procs: tuple[int, int, int | None] | None) -> tuple[str, str]:
    if procs is None:
        return "-", "-"
    started, measured, peak = procs
    count = str(started) if measured == started else f"{started} ({started - measured} n/a)"
    return count, "-" if peak is None else _mib(peak)


def report(
    measurements: dict[str, Measurement], pre: Preflight, args: argparse.Namespace, has_time: bool
) -> str:
    header = [
        "method",
        "best s",
        "median s",
        "cpu py s",
        "cpu git s",
        "examined",
        "matched",
        "py RSS",
        "py heap",
        "git procs",
        "git RSS",
        "output",
    ]
    rows = [header]
    for name, m in measurements.items():
        r = m.result or RunResult()
        i = m.best_index()
        rss = max(m.self_rss_kb, key=abs)
        procs, git_rss = _git_cell(m.git_procs)
        rows.append(
            [
                name,
                f"{m.best:.3f}",
                f"{statistics.median(m.seconds):.3f}",
                f"{m.cpu_self[i]:.2f}",
                f"{m.cpu_children[i]:.2f}",
                "-" if r.examined is None else str(r.examined),
                "-" if r.matched is None else str(r.matched),
                _mib(rss) if rss > 0 else f"{_mib(-rss)} (cum)",
                "-" if m.py_heap_peak is None else f"{m.py_heap_peak / 2**20:.1f} MiB",
                procs,
                git_rss if has_time else "n/a",
                r.output,
            ]
        )
    out = [_table(rows), ""]
    out.append(
        "best/median s: wall clock of the timed runs; cpu py/git s: getrusage SELF / CHILDREN "
        "deltas of the best run.\n"
        "py RSS: peak RSS of this whole Python process during a timed run (high-water mark "
        "reset per run;\n  includes the interpreter and all imported libraries; max over runs).\n"
        "py heap: tracemalloc peak of Python allocations in one untimed run. git procs / git "
        "RSS: git processes\n  started in one untimed run and the largest one's own peak RSS "
        "(GNU time around each git; n/a: killed\n  by its parent before exiting, no figure)."
    )
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out.append(
        f"getrusage(RUSAGE_CHILDREN).ru_maxrss after all runs: {_mib(kids)}. On Linux a child's "
        "maxrss starts from the\n  parent's resident set at fork/vfork (recorded at exec), so "
        "for children of this Python process it is\n  at least Python's RSS at spawn time and "
        "says little about git itself; hence the GNU time figures."
    )
    out.append("")

    out.append("Commit sets (matching non-merge commits):")
    out.append(f"  python regex over `git log --no-merges` messages: {len(pre.python_shas)}")
    out.append(f"  floor selection: {pre.git_note}")
    for name, m in measurements.items():
        r = m.result
        if r is None or r.matched is None:
            continue
        same = ""
        if r.shas is not None:
            same = " (same set)" if r.shas == pre.python_shas else " (DIFFERENT set)"
        elif name == "reviewbench":
            same = " (matched minus merges; it reads all commits and drops merges itself)"
        out.append(f"  {name}: {r.matched}{same}")
    facts = [(n, m.result) for n, m in measurements.items() if m.result and m.result.files]
    if facts:
        out.append(
            "  facts: "
            + "; ".join(
                f"{n} {r.files} changed-file entries, {r.idents} removed identifiers"
                for n, r in facts
            )
        )
    out.append("")
    out.append(f"Ratios of wall-clock times, best of {args.repeat} (medians in brackets):")
    for num, den, op, bound in TARGETS:
        if num not in measurements or den not in measurements:
            continue
        ratio = measurements[num].best / measurements[den].best
        med = statistics.median(measurements[num].seconds) / statistics.median(
            measurements[den].seconds
        )
        met = ratio >= bound if op == ">=" else ratio <= bound
        out.append(
            f"  {num + '/' + den:<24} = {ratio:6.2f}x  ({med:.2f}x)  target {op} "
            f"{bound:g}x: {'met' if met else 'MISSED'}"
        )
    for num, den, what in REPORTED:
        if num in measurements and den in measurements:
            ratio = measurements[num].best / measurements[den].best
            med = statistics.median(measurements[num].seconds) / statistics.median(measurements[den].seconds)
            out.append(f"  {num + '/' + den:<24} = {ratio:6.2f}x  ({med:.2f}x)  no target: {what}")
    return "\n".join(out)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="mine_speed.py",
        description="Time reviewbench's mining against PyDriller, per-commit git calls "
        "and plain `git log -p`, in one process on one repository.",
        epilog="Targets (reported, never asserted): pydriller/reviewbench >= 5x, "
        "per-commit/reviewbench >= 10x, reviewbench/floor <= 2x.",
    )
    parser.add_argument("repo", type=Path, nargs="?", help="git repository (work tree or bare; not needed with --smoke)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        metavar="N",
        help="timed runs per method; the best counts (default: 3)",
    )
    parser.add_argument(
        "--methods",
        default=",".join(METHODS),
        metavar="LIST",
        help=f"comma-separated subset of {','.join(METHODS)} (default: all)",
    )
    parser.add_argument(
        "--no-memory-run",
        action="store_true",
        help="skip the extra untimed run per method that measures the Python "
        "heap (tracemalloc) and git processes' RSS",
    )
    parser.add_argument(
        "--in-place",
        action="store_true",
        help="read REPO itself instead of a scratch bare clone (PyDriller "
        "then writes blame.markUnblamableLines into REPO's config)",
    )
    parser.add_argument(
        "--tmpdir",
        default=None,
        metavar="DIR",
        help="where temp dirs (scratch clone, corpora) go (default: system)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one round on a tiny repository built in a temp dir, seconds: checks that the script "
        "runs (pydriller is skipped, with a line saying so, when not installed); its figures mean nothing",
    )
    args = parser.parse_args(argv)
    if args.repo is None and not args.smoke:
        parser.error("REPO is required (or --smoke)")
    if args.smoke:
        args.repeat = 1
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = set(args.methods) - set(METHODS)
    if unknown or not args.methods:
        parser.error(f"--methods: unknown {sorted(unknown)}; choose from {','.join(METHODS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.smoke:
        return measure_all(args)
    from _smoke import optional, smoke_repo

    if "pydriller" in args.methods and not optional("pydriller", "the pydriller method"):
        args.methods.remove("pydriller")
    with tempfile.TemporaryDirectory(prefix="mine-speed-smoke-", dir=args.tmpdir) as tmp:
        args.repo = smoke_repo(Path(tmp) / "smoke-repo")
        return measure_all(args)


def measure_all(args: argparse.Namespace) -> int:
    source = args.repo.resolve()
    if not source.is_dir():
        print(f"error: {source} is not a directory", file=sys.stderr)
        return 2
    pattern = re.compile(DEFAULT_FIX_PATTERN, re.IGNORECASE)
    if "pydriller" in args.methods:
        try:
            import pydriller  # noqa: F401  (imported before timing)
        except ImportError:
            print(
                "error: pydriller is not installed (pip install 'pydriller==2.12')", file=sys.stderr
            )
            return 2

    scratch = Path(tempfile.mkdtemp(prefix="mine-speed-", dir=args.tmpdir))
    try:
        if args.in_place:
            repo = source
        else:
            repo = scratch / "repo.git"
            subprocess.run(
                ["git", "clone", "--quiet", "--bare", "--no-hardlinks", str(source), str(repo)],
                check=True,
            )
            if git(repo, "rev-parse", "HEAD") != git(source, "rev-parse", "HEAD"):
                raise SystemExit("error: the scratch clone's HEAD differs from the source's")
        pre = preflight(repo, pattern)

        makers: dict[str, Callable[[], Method]] = {
            "reviewbench": lambda: Reviewbench(repo, pattern, args.tmpdir),
            "pydriller": lambda: PyDriller(repo, pattern),
            "per-commit": lambda: PerCommit(repo, pattern),
            "floor": lambda: Floor(repo, pattern, pre.git_flag, pre.git_shas),
            "floor-all": lambda: FloorAll(repo, pattern, pre.non_merge),
        }
        methods = [makers[name]() for name in METHODS if name in args.methods]
        measurements = {m.name: Measurement(m.name) for m in methods}

        print(
            f"repo: {source}"
            + ("" if args.in_place else " (read through a scratch bare clone, --no-hardlinks)")
        )
        print(
            f"HEAD {pre.head}: {pre.reachable} commits reachable, {pre.non_merge} non-merge, "
            f"{len(pre.python_shas)} non-merge matching {DEFAULT_FIX_PATTERN} (re.I)"
        )
        git_version = subprocess.run(["git", "--version"], capture_output=True, text=True)
        print(
            f"python {platform.python_version()}, {git_version.stdout.strip()}, reviewbench "
            f"{reviewbench_version}, pydriller {_version_of('pydriller')}, "
            f"{os.cpu_count()} CPUs, repeat {args.repeat}"
        )
        load_before = os.getloadavg()

        for round_no in range(args.repeat):
            for method in methods:
                m = measurements[method.name]
                timed_run(method, m)
                print(
                    f"  round {round_no + 1}/{args.repeat} {method.name:<12} "
                    f"{m.seconds[-1]:8.3f} s",
                    file=sys.stderr,
                    flush=True,
                )
        shim = GitShim(scratch)
        if not args.no_memory_run:
            for method in methods:
                memory_run(method, measurements[method.name], shim, trace=True)
                print(f"  memory run       {method.name:<12} done", file=sys.stderr, flush=True)
        load_after = os.getloadavg()
        print(
            "load average (1, 5, 15 min) before: {:.2f} {:.2f} {:.2f}, after: "
            "{:.2f} {:.2f} {:.2f}".format(*load_before, *load_after)
        )
        print()
        print(report(measurements, pre, args, has_time=shim.time_bin is not None))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def _version_of(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    sys.exit(main())
