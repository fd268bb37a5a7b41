"""Entry point of the mining stage: walk history, write a corpus."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .._version import __version__
from ..config import MineConfig
from ..errors import NoCases, NoMatchingCommits, UsageError
from ..git.repo import open_repository
from ..records import CorpusCounts, CorpusMeta, DropReason, RepoInfo
from ..store.corpus import CorpusWriter
from .fix_reversal import FixReversalMiner

__all__ = ["MineSummary", "mine_corpus"]


@dataclass(frozen=True)
class MineSummary:
    """What ``mine`` did: the corpus written and how many commits it looked at."""

    out: Path
    meta: CorpusMeta
    scanned_commits: int


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def mine_corpus(
    config: MineConfig,
    out: Path,
    *,
    force: bool = False,
    on_commit: Callable[[int, int], None] | None = None,
    warn: Callable[[str], None] = _warn,
) -> MineSummary:
    """Mine ``config.repo`` into a new corpus directory ``out``.

    Args:
        force: replace ``out`` if it already holds files.
        on_commit: called with (commits scanned, cases kept) after each case, for progress.
        warn: receives non-fatal warnings (a shallow clone, for instance).

    Raises:
        NotAGitRepository, EmptyRepository: the repository cannot be mined.
        OutputExists: ``out`` is not empty and ``force`` is false.
        NoMatchingCommits: no commit message matched.
        NoCases: commits matched but every one was dropped; nothing is written.
    """
    repo = open_repository(config.repo)
    target = out.resolve()
    if target == repo.path.resolve() or target in repo.path.resolve().parents:
        raise UsageError(
            f"--out {out} would replace the repository being mined; choose another directory"
        )
    if repo.shallow:
        warn(f"{repo.path} is a shallow clone: history is truncated, older fixes are missed")
    miner = FixReversalMiner(config, repo)
    with CorpusWriter(out, force=force) as writer:
        for mined in miner.cases():
            writer.add(mined.case, mined.gold, mined.patch)
            if on_commit:
                on_commit(miner.stats.scanned, len(writer.cases))
        stats = miner.stats
        if stats.matched == 0:
            raise NoMatchingCommits(
                f"no commit in {repo.path} matches {' or '.join(config.grep)} "
                f"({stats.scanned} commits scanned)"
            )
        if not writer.cases:
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(stats.dropped.items()))
            noun = "commit" if stats.matched == 1 else "commits"
            raise NoCases(f"{stats.matched} {noun} matched but none made a case (dropped: {reasons})")
        dropped = {reason.value: stats.dropped.get(reason, 0) for reason in DropReason}

        def make_meta(gold_sha256: str) -> CorpusMeta:
            return CorpusMeta(
                repo=RepoInfo(path=str(repo.path), remote=repo.remote, head=repo.head, shallow=repo.shallow),
                created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                tool_version=__version__,
                config=config.model_dump(mode="json"),
                counts=CorpusCounts(
                    cases=len(writer.cases),
                    by_stratum={"fix_reversal": len(writer.cases)},
                    matched_commits=stats.matched,
                    dropped=dropped,
                ),
                gold_sha256=gold_sha256,
            )

        meta = writer.commit(make_meta)
    return MineSummary(out=out, meta=meta, scanned_commits=stats.scanned)
