"""Discriminating identification: a remark that also holds for the clean mirror names nothing.

Automatic identification reads names: a finding located at a defect *names* it when its
claim cites the enclosing symbol, an identifier the fix touched, a hint term or a close
paraphrase (``identify.py``). Naming alone is gameable: "`parse` would read better with a
docstring", at the first changed line of every hunk, names every defect's function. Every
defect case of a fix reversal or a mutation therefore has a **mirror** (stratum
``mirror``, the same ``pair_id``): the same change the other way, same files, lines and
vocabulary, no defect. A naming finding is **discriminating** when the same condition, in
the same repetition, said nothing equivalent on the mirror: no finding of the mirror's run
at the mirrored lines (gold ``changed``, within the tolerance), whatever it says, and none
without a line on one of those files that names the defect by the same rules.

Only a discriminating naming finding identifies its defect automatically. Where the pair
has no valid mirror (no mirror in the corpus, an invalid one) or its run did not complete,
``discriminating`` is null and the finding is no automatic evidence: end to end, a missing
mirror review is never rewarded. Labels (a calibrated judge, people) still decide on top
(``verdicts.apply_overrides``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..records import Defect, Finding, GoldRecord, Location, Stratum
from ..store.runs import RunRow
from .identify import identify
from .match import PathMatcher
from .verdicts import FindingVerdict

__all__ = ["Pairing", "discriminate", "mirror_of", "pairings"]


def mirror_of(gold: Iterable[GoldRecord]) -> dict[str, GoldRecord]:
    """Each paired defect case's mirror, by the defect case's id; a rename variant takes its
    original's. A pair with no mirror, or with several, has none: no automatic
    identification rests on an ambiguous pair."""
    records = list(gold)
    by_pair: dict[str, list[GoldRecord]] = {}
    for g in records:
        if g.pair_id is not None:
            by_pair.setdefault(g.pair_id, []).append(g)
    out: dict[str, GoldRecord] = {}
    for members in by_pair.values():
        mirrors = [g for g in members if g.stratum == Stratum.MIRROR]
        defects = [g for g in members if g.stratum != Stratum.MIRROR and g.expect_finding]
        if len(mirrors) == 1:
            for g in defects:
                out[g.case_id] = mirrors[0]
    for g in records:
        if g.variant_of is not None and g.variant_of in out and g.case_id not in out:
            out[g.case_id] = out[g.variant_of]
    return out


class _Pairs:
    """Each run's mirror run: the same condition and repetition on the case's mirror."""

    def __init__(self, runs: Sequence[RunRow], gold: Mapping[str, GoldRecord], valid: Iterable[str]) -> None:
        self.mirrors = mirror_of(gold.values())
        self.valid = set(valid)
        self.by_key = {(r.case_id, r.condition, r.repetition): r for r in runs}

    def of(self, run: RunRow) -> tuple[GoldRecord, RunRow | None] | None:
        """The mirror in the analysis and its run (None: no run), or None without one."""
        mirror = self.mirrors.get(run.case_id)
        if mirror is None or mirror.case_id not in self.valid:
            return None
        return mirror, self.by_key.get((mirror.case_id, run.condition, run.repetition))


@dataclass(frozen=True)
class Pairing:
    """What a defect-case run's pair says, for the pair figures."""

    completed: bool
    """The mirror run completed."""
    clean: bool
    """It completed with no finding."""


def pairings(runs: Sequence[RunRow], gold: Mapping[str, GoldRecord], valid: Iterable[str]) -> dict[str, Pairing]:
    """By run id, the pairing of every run whose case has a mirror in the analysis that the
    same condition reviewed in the same repetition."""
    pairs = _Pairs(runs, gold, valid)
    out: dict[str, Pairing] = {}
    for run in runs:
        found = pairs.of(run)
        if found is None or found[1] is None:
            continue
        mirror_run = found[1]
        completed = mirror_run.reviewed
        out[run.run_id] = Pairing(completed=completed, clean=completed and not mirror_run.findings)
    return out


def _near(finding: Finding, changed: Sequence[Location], matcher: PathMatcher, tolerance: int) -> bool:
    for loc in changed:
        if not matcher.agrees(finding.path, loc.path):
            continue
        if finding.line is None or (loc.start_line == 0 and loc.end_line == 0):
            return True
        if loc.start_line - tolerance <= finding.line <= loc.end_line + tolerance:
            return True
    return False


def _named_on_mirror(run: RunRow, mirror: GoldRecord, defects: Sequence[Defect], tolerance: int,
                     originals: Sequence[Defect] | None = None) -> set[str]:  # fmt: skip
    """The ids of ``defects`` the mirror's run said something equivalent of: any finding at
    the mirrored lines (within the tolerance) speaks of the same change, whatever its words
    (a quoter picks another changed name on the other side); one without a line, on a
    mirrored file, when it names the defect (a rename variant's defect also by its
    original's names: the mirror has those). A mirror without ``changed`` lines (an authored
    counterexample) counts every finding that names the defect."""
    matcher = PathMatcher([loc.path for loc in mirror.changed])
    named: set[str] = set()
    for finding in run.findings:
        if mirror.changed and not _near(finding, mirror.changed, matcher, tolerance):
            continue
        if mirror.changed and finding.line is not None:
            named.update(d.defect_id for d in defects)
            continue
        for i, defect in enumerate(defects):
            alike = [defect, *([originals[i]] if originals is not None and i < len(originals) else [])]
            if any(identify(finding.claim, d) is not None for d in alike):
                named.add(defect.defect_id)
    return named


def discriminate(
    verdicts: Mapping[str, list[FindingVerdict]],
    runs: Sequence[RunRow],
    gold: Mapping[str, GoldRecord],
    valid: Iterable[str],
    tolerance: int,
) -> dict[str, list[FindingVerdict]]:
    """Every run's verdicts with ``discriminating`` set on naming findings and ``identified``
    meaning named *and* discriminating (automatic evidence; see the module's docstring).

    Args:
        verdicts: automatic verdicts by run id (``identified`` still equal to ``named``).
        runs: the runs, to find each defect run's mirror run (same condition, repetition).
        gold: gold records by case id.
        valid: ids of the cases in the analysis (a mirror outside it is no evidence).
        tolerance: lines either side of a mirrored range, as for matching.
    """
    pairs = _Pairs(runs, gold, valid)
    out: dict[str, list[FindingVerdict]] = {}
    for run in runs:
        own = verdicts[run.run_id]
        if not any(v.named for v in own):
            out[run.run_id] = own
            continue
        found = pairs.of(run)
        mirror, mirror_run = found if found is not None else (None, None)
        usable = mirror is not None and mirror_run is not None and mirror_run.reviewed
        said: set[str] = set()
        if usable and mirror is not None and mirror_run is not None:
            record = gold[run.case_id]
            original = gold.get(record.variant_of) if record.variant_of else None
            said = _named_on_mirror(mirror_run, mirror, record.defects, tolerance,
                                    original.defects if original else None)  # fmt: skip
        updated = []
        for v in own:
            if not v.named:
                updated.append(v)
                continue
            discriminating = (v.defect_id not in said) if usable else None
            updated.append(v.model_copy(update={"discriminating": discriminating,
                                                "identified": discriminating is True}))  # fmt: skip
        out[run.run_id] = updated
    return out
