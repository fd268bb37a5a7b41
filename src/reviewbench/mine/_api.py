"""Entry point of the mining stage: walk history, make cases at HEAD, write a corpus."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .._text import printable
from .._version import __version__
from ..config import MineConfig
from ..errors import NoCases, NoMatchingCommits, UsageError
from ..git.repo import open_repository
from ..records import CASE_DROP_REASONS, CorpusCounts, CorpusMeta, RepoInfo, Stratum
from ..store.corpus import CorpusWriter
from .fix_reversal import FixReversalMiner, MinedCase
from .mirror import MIRRORED, fix_mirrors, pair_id
from .natural import NaturalMiner, NaturalSummary
from .synthetic import SyntheticSummary, synthesize

__all__ = ["MineSummary", "mine_corpus"]


@dataclass(frozen=True)
class MineSummary:
    """What ``mine`` did: the corpus written and how many commits it looked at."""

    out: Path
    meta: CorpusMeta
    scanned_commits: int
    synthetic: SyntheticSummary = field(default_factory=SyntheticSummary)
    #: Matching commits that made a fix-reversal case. Rename variants of those cases are
    #: cases too but no commit of their own: outcome tallies of commits use this count.
    fix_commits: int = 0
    natural: NaturalSummary | None = None
    mirrors: int = 0
    #: Fix reversals that got no mirror (their forward diff did not pair file for file).
    mirrors_missed: int = 0


def _warn(message: str) -> None:
    print(f"warning: {printable(message)}", file=sys.stderr)  # warnings name repository paths


def mine_corpus(
    config: MineConfig,
    out: Path,
    *,
    force: bool = False,
    on_commit: Callable[[int, int], None] | None = None,
    warn: Callable[[str], None] = _warn,
    on_progress: Callable[[str], None] | None = None,
) -> MineSummary:
    """Mine ``config.repo`` into a new corpus directory ``out``.

    Args:
        force: replace ``out`` if it already holds files.
        on_commit: called with (commits scanned, cases kept) after each case, for progress.
        on_progress: told what is being made at HEAD (mutations, variants, controls).
        warn: receives non-fatal warnings (a shallow clone, for instance).

    Raises:
        NotAGitRepository, EmptyRepository: the repository cannot be mined.
        OutputExists: ``out`` is not empty and ``force`` is false.
        NoMatchingCommits: no commit message matched (and no mutation was asked for).
        NoCases: no case could be made at all; nothing is written.
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
    stats = miner.stats
    extra = SyntheticSummary()
    with CorpusWriter(out, force=force) as writer:
        fixes: list[MinedCase] = []
        if config.fixes:
            for mined in miner.cases():
                writer.add(mined.case, mined.gold, mined.patch)
                # Variants need only the records; mirrors need the patch (their base), controls its shape.
                fixes.append(MinedCase(mined.case, mined.gold, mined.patch))
                if on_commit:
                    on_commit(miner.stats.scanned, len(writer.cases))
            if stats.matched == 0 and not (config.mutations or config.noisy):
                raise NoMatchingCommits(
                    f"no commit in {repo.path} matches {' or '.join(config.grep)} "
                    f"({stats.scanned} commits scanned; --select {','.join(config.select)})"
                )
            if not writer.cases and not (config.mutations or config.noisy):
                reasons = ", ".join(f"{k} {v}" for k, v in sorted(stats.dropped.items()))
                noun = "commit" if stats.matched == 1 else "commits"
                raise NoCases(f"{stats.matched} {noun} matched but none made a case (dropped: {reasons})")
        writer.dropped = list(stats.dropped_commits)
        mirrors_missed = 0
        if config.mirrors and fixes:
            if on_progress:
                on_progress("mirrors: the fixes themselves")
            mirrors, mirrors_missed = fix_mirrors(config.seed, repo, fixes, config.max_lines)
            for mined in mirrors:
                writer.add(mined.case, mined.gold, mined.patch, mined.extra)
        natural: NaturalSummary | None = None
        if config.natural:
            if on_progress:
                on_progress("natural history: tracing fixes to the commits that introduced them")
            tracer = NaturalMiner(config, repo)
            for mined in tracer.cases(fixes):
                writer.add(mined.case, mined.gold, mined.patch, mined.extra)
            natural = tracer.summary
        if config.synthetic:
            made, extra = synthesize(config, repo, fixes, warn=warn, progress=on_progress)
            for mined in made:
                writer.add(mined.case, mined.gold, mined.patch, mined.extra)
            if not writer.cases:
                raise NoCases("no case could be made: no fix reversal, and no mutation site in the "
                              "sources at HEAD")  # fmt: skip
        if config.mirrors:
            _pair_with_mirrors(config.seed, writer)
        dropped = {reason.value: stats.dropped.get(reason, 0) for reason in CASE_DROP_REASONS}
        by_stratum = Counter(g.stratum for g in writer.gold)
        strata = {"fix_reversal": by_stratum.get("fix_reversal", 0)}
        if config.synthetic:
            strata.update(mutation=by_stratum.get("mutation", 0), control=by_stratum.get("control", 0))
        if config.noisy:
            strata["noisy"] = by_stratum.get("noisy", 0)
        if config.natural:
            strata["natural"] = by_stratum.get("natural", 0)
        if config.mirrors:
            strata["mirror"] = by_stratum.get("mirror", 0)
        strata.update(by_stratum)

        def make_meta(gold_sha256: str) -> CorpusMeta:
            return CorpusMeta(
                repo=RepoInfo(path=str(repo.path), remote=repo.remote, head=repo.head, shallow=repo.shallow),
                created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                tool_version=__version__,
                config=config.model_dump(mode="json"),
                counts=CorpusCounts(
                    cases=len(writer.cases),
                    by_stratum=strata,
                    matched_commits=stats.matched,
                    by_signal=dict(sorted(stats.by_signal.items())),
                    dropped=dropped,
                ),
                gold_sha256=gold_sha256,
            )

        meta = writer.commit(make_meta)
    return MineSummary(out=out, meta=meta, scanned_commits=stats.scanned, synthetic=extra, fix_commits=len(fixes),
                       natural=natural, mirrors=by_stratum.get("mirror", 0), mirrors_missed=mirrors_missed)


def _pair_with_mirrors(seed: int, writer: CorpusWriter) -> None:
    """Give each mirrored defect case its mirror's ``pair_id`` (a defect case is written
    before its mirror exists; its rename variant, made from its unpaired record, stays
    unpaired)."""
    paired = {g.pair_id for g in writer.gold if g.stratum == Stratum.MIRROR}
    writer.gold = [
        g.model_copy(update={"pair_id": pid})
        if g.stratum in MIRRORED and g.variant_of is None and (pid := pair_id(seed, g)) in paired
        else g
        for g in writer.gold
    ]
