"""Cases made at HEAD rather than found in history: mutations, rename variants, controls.

Order matters: mutations first (their files decide where controls go) with their mirrors
(:mod:`mirror`), then a rename variant of every defect case, then controls, as many as
``controls_ratio`` times the defect cases (variants and mirrors excluded: they repeat a
defect or its clean twin, they do not add one). The fix
reversals' share of the controls is made at their fix commits, on their own files; the
rest, and whatever the fix commits could not give, at HEAD.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ..config import MineConfig
from ..git.repo import Repository
from ..git.stream import BlobReader
from .coverage import TestLocator, load_coverage
from .edits import SyntheticCase
from .fix_reversal import MinedCase
from .head import HeadTree
from .mirror import mutation_mirror
from .noisy import NOISE_PER_CASE, noisy_cases
from .paths import SCRIPT_LANGUAGES, PathClassifier, language_of
from .script_tests import ScriptTestLocator
from .shape import patch_shape

__all__ = ["SyntheticSummary", "controls_for", "synthesize"]


@dataclass(frozen=True)
class SyntheticSummary:
    """What was made at HEAD, and what could not be."""

    mutations: int = 0
    controls: int = 0
    variants: int = 0
    variants_skipped: int = 0
    coverage: bool = False
    paired_controls: int = 0
    """Controls made at fix commits, paired with fix reversals (the rest are at HEAD)."""
    noisy: int = 0
    variants_skipped_by: dict[str, int] = field(default_factory=dict)
    """Defect cases that got no rename variant, by reason (``variants.NoVariant``)."""


def _editable(head: HeadTree, path: str) -> bool:
    """Whether controls may edit ``path``: Python, or JavaScript/TypeScript in a Node project."""
    return language_of(path) in SCRIPT_LANGUAGES if head.scripted else language_of(path) == "python"


def _sources(head: HeadTree) -> str:
    return "JavaScript/TypeScript sources" if head.scripted else "Python sources"


def controls_for(ratio: float, defect_cases: int) -> int:
    """Controls for ``defect_cases`` at ``ratio``, rounded half up (1.5 → 2, 2.5 → 3)."""
    return math.floor(ratio * defect_cases + 0.5)


def synthesize(
    config: MineConfig,
    repo: Repository,
    fixes: list[MinedCase],
    *,
    warn: Callable[[str], None],
    progress: Callable[[str], None] | None = None,
) -> tuple[list[MinedCase], SyntheticSummary]:
    """Mutation cases, rename variants of ``fixes`` and of the mutations, and controls."""
    # libcst is imported here, not with the package: every other command starts faster.
    from .controls import POOL_FACTOR, ControlMaker, ShapeQuota
    from .identifiers import RepositoryNames
    from .mutation import MutationMiner
    from .script_controls import ScriptControlMaker
    from .variants import NoVariant, fix_reversal_edits, keyword_names, rename_variant

    say = progress or (lambda _text: None)
    classifier = PathClassifier(config.test_patterns, config.include, config.exclude)
    made: list[MinedCase] = []
    with BlobReader(repo.path) as blobs:
        head = HeadTree(repo, classifier, blobs)
        mutations: list[SyntheticCase] = []
        for_noise: list[SyntheticCase] = []
        covered = False
        if config.mutations or config.noisy:
            tests = head.script_tests if head.scripted else head.tests
            coverage = None
            if config.coverage_cmd or (repo.path / ".coverage").is_file():
                say("measuring coverage at HEAD")
                coverage = load_coverage(repo, config.coverage_cmd, set(head.files), tests, warn)
            covered = coverage is not None
            locator = (ScriptTestLocator(tests, head.texts(tests)) if head.scripted
                       else TestLocator(tests, head.texts(tests)))  # fmt: skip
            miner = MutationMiner(config, head, coverage, locator)
            wanted_mutations = config.mutations + config.noisy
            mutations = miner.cases(wanted_mutations, on_case=lambda n: say(f"mutations: {n}/{wanted_mutations}"))
            # The last --noisy mutations are buried among refactors rather than shown alone.
            mutations, for_noise = mutations[: config.mutations], mutations[config.mutations :]
            if len(mutations) < config.mutations:
                where = f" matching {', '.join(config.paths)}" if config.paths else ""
                warn(f"only {len(mutations)} of {config.mutations} mutations could be made: the {_sources(head)} "
                     f"at HEAD{where} have no more usable sites")  # fmt: skip
            made.extend(m.mined for m in mutations)
            if config.mirrors:
                made.extend(mutation_mirror(config.seed, m) for m in mutations)
        variants = skipped = 0
        skipped_by: dict[str, int] = {}
        if config.rename:
            say("rename variants")
            originals: list[tuple[MinedCase, tuple | None]] = [
                (fix, fix_reversal_edits(fix, repo, head)) for fix in fixes
            ] + [(m.mined, m.edits) for m in mutations]
            keywords = keyword_names(head)
            trees: dict[str, RepositoryNames] = {}
            for mined, edits in originals:
                base = mined.case.base
                if base not in trees:
                    trees[base] = RepositoryNames(head if base == head.commit else HeadTree(repo, classifier, blobs, base))
                variant = (rename_variant(config.seed, mined.gold, base, edits, keywords, trees[base])
                           if edits else NoVariant.FILES)  # fmt: skip
                if isinstance(variant, NoVariant):
                    skipped_by[variant.value] = skipped_by.get(variant.value, 0) + 1
                    continue
                made.append(variant.mined)
                variants += 1
            skipped = sum(skipped_by.values())
            if skipped:
                reasons = ", ".join(f"{k} {v}" for k, v in sorted(skipped_by.items()))
                warn(f"{skipped} defect case(s) got no rename variant ({reasons}); see docs/MUTATIONS.md")
        wanted = controls_for(config.effective_controls_ratio, len(fixes) + len(mutations))
        noise_wanted = 2 * NOISE_PER_CASE * len(for_noise)
        controls: list[SyntheticCase] = []
        paired: list[SyntheticCase] = []
        noisy: list[SyntheticCase] = []
        if wanted or noise_wanted:
            say("controls")
            maker = ScriptControlMaker(config, head) if head.scripted else ControlMaker(config, head)
            # More candidates than wanted; the quota keeps those shaped like the defect cases.
            quota = ShapeQuota([patch_shape(d.patch) for d in [*fixes, *(m.mined for m in mutations)]], wanted)
            for_fixes = min(wanted, controls_for(config.effective_controls_ratio, len(fixes)))
            if for_fixes:
                pairs = [(fix.case.base, [p for p in fix.case.paths if _editable(head, p)]) for fix in fixes]
                paired, _ = quota.choose(maker.paired(pairs, POOL_FACTOR * for_fixes), for_fixes,
                                         spread=lambda c: c.mined.case.base)  # one per fix first
            paths = [e.path for m in [*mutations, *for_noise] for e in m.edits]
            paths += [p for fix in fixes for p in fix.case.paths if _editable(head, p) and p in head.files]
            at_head = wanted - len(paired)
            chosen, rest = quota.choose(maker.cases(paths, POOL_FACTOR * at_head + noise_wanted), at_head)
            controls, noise = paired + chosen, rest[:noise_wanted]
            if len(controls) < wanted:
                warn(f"only {len(controls)} of {wanted} controls could be made from the {_sources(head)} at "
                     "the fix commits and at HEAD")  # fmt: skip
            made.extend(c.mined for c in controls)
            if for_noise:
                say("noisy diffs")
                noisy = noisy_cases(config.seed, repo.head, for_noise, noise, config.noisy)
                made.extend(n.mined for n in noisy)
        if config.noisy and sum(n.mined.gold.expect_finding for n in noisy) < config.noisy:
            warn(f"only {sum(n.mined.gold.expect_finding for n in noisy)} of {config.noisy} noisy defect cases could "
                 "be made: too few mutation sites or refactors in other files at HEAD")  # fmt: skip
    return made, SyntheticSummary(len(mutations), len(controls), variants, skipped, covered, len(paired), len(noisy),
                                  skipped_by)
