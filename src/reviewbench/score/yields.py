"""What a corpus yields once validated: the cases its tests prove, per stratum and operator,
and how many clean cases (controls, mirrors) are valid and scored.

``reviewbench show`` prints this record and ``show --json`` is its JSON; it lives beside
scoring because "scored" means what :func:`~reviewbench.score.eligible_cases` admits, so
the two can never disagree on which cases count.
"""

from __future__ import annotations

from collections import Counter

from pydantic import Field

from ..records import GoldRecord, ValidationStatus
from ..store.corpus import Corpus
from .result import _Result as _Record  # the score records' frozen, strict config

__all__ = ["ControlCounts", "CorpusYields", "MirrorCounts", "OperatorYield", "StratumYield", "corpus_yields",
           "outcome_words"]

UNVALIDATED = "unvalidated"


class StratumYield(_Record):
    observed: int = Field(description="Cases some test observes (their tests fail with the change).")
    attempted: int = Field(description="Cases validated.")


class OperatorYield(StratumYield):
    mined: int = Field(description="Mutants the operator made (rename variants left out).")


class ControlCounts(_Record):
    """Controls: mined, made at a fix reversal's commit, validated, and valid (tests stay green)."""

    mined: int
    paired_with_fix_reversals: int
    validated: int
    valid: int = Field(description="Validated, and the tests stay green (not_observed).")


class MirrorCounts(_Record):
    """Mirrors (a defect case's change the other way): mined, paired, validated, valid, scored."""

    mined: int
    paired_with_defect_cases: int
    validated: int
    valid: int = Field(description="Validated, and the tests stay green (not_observed).")
    in_analysis: int = Field(description="Scored: valid, and its defect case valid too (an unpaired mirror has a "
                             "fix's shape).")  # fmt: skip


class CorpusYields(_Record):
    """A corpus's counts after validation (``show``)."""

    by_stratum: dict[str, int]
    by_validation: dict[str, int] = Field(description="By validation status ('unvalidated' for none).")
    by_outcome: dict[str, int] = Field(description="By what the status means for the kind of case.")
    by_stratum_yield: dict[str, StratumYield] = Field(alias="yield", description="Observed of validated, "
                                                      "per stratum.")  # fmt: skip
    by_operator: dict[str, OperatorYield] = Field(alias="yield_by_operator")
    controls: ControlCounts
    mirrors: MirrorCounts


def outcome_words(g: GoldRecord) -> str:
    """Validation in words that say what it means for this kind of case.

    ``not_observed`` is a failure for a defect case (no test sees the defect) and the aim
    for a control or a mirror (its change keeps the tests green)."""
    if g.validation is None:
        return UNVALIDATED
    status = g.validation.status
    if not g.expect_finding:
        clean = "control" if g.stratum == "control" else "mirror" if g.stratum == "mirror" else "clean case"
        if g.valid:
            return f"valid {clean} (tests pass)"
        if status is ValidationStatus.OBSERVED:
            return f"invalid {clean} (tests fail)"
        return f"{clean}: {status.value}"
    if g.valid:
        return "defect observed (tests fail)"
    if status is ValidationStatus.NOT_OBSERVED:
        return "defect not observed (tests pass)"
    return status.value


def _yields(gold: list[GoldRecord]) -> tuple[dict[str, StratumYield], dict[str, OperatorYield]]:
    """Observed of validated per stratum; per mutation operator, also how many it made
    (rename variants repeat their original's defect: left out)."""
    strata: dict[str, Counter[str]] = {}
    operators: dict[str, Counter[str]] = {}
    for g in gold:
        observed = g.validation is not None and g.validation.status is ValidationStatus.OBSERVED
        if g.validation is not None:
            row = strata.setdefault(g.stratum, Counter())
            row["attempted"] += 1
            row["observed"] += observed
        if g.stratum == "mutation" and not g.variant_of and g.provenance.operator:
            op = operators.setdefault(g.provenance.operator, Counter())
            op["mined"] += 1
            op["attempted"] += g.validation is not None
            op["observed"] += observed
    return ({k: StratumYield(observed=v["observed"], attempted=v["attempted"]) for k, v in sorted(strata.items())},
            {k: OperatorYield(observed=v["observed"], attempted=v["attempted"], mined=v["mined"])
             for k, v in sorted(operators.items())})  # fmt: skip


def corpus_yields(corpus: Corpus) -> CorpusYields:
    """Count ``corpus`` as validated: yields, and its controls and mirrors."""
    from ._api import eligible_cases  # numpy: only when asked

    gold = {g.case_id: g for g in corpus.gold}
    scored = set(eligible_cases(corpus, include_unvalidated=False))
    fix_bases = {c.base for c in corpus.cases if (g := gold.get(c.case_id)) and g.stratum == "fix_reversal"}
    controls = [(c, gold[c.case_id]) for c in corpus.cases if c.case_id in gold and gold[c.case_id].stratum == "control"]
    mirrors = [g for g in corpus.gold if g.stratum == "mirror"]
    defect_pairs = {g.pair_id for g in corpus.gold if g.pair_id and g.stratum != "mirror"}
    by_stratum, by_operator = _yields(corpus.gold)
    by_validation = Counter(g.validation.status.value if g.validation else UNVALIDATED for g in corpus.gold)
    return CorpusYields(
        by_stratum=dict(sorted(Counter(g.stratum for g in corpus.gold).items())),
        by_validation=dict(sorted(by_validation.items())),
        by_outcome=dict(sorted(Counter(outcome_words(g) for g in corpus.gold).items())),
        by_stratum_yield=by_stratum, by_operator=by_operator,
        controls=ControlCounts(mined=len(controls), paired_with_fix_reversals=sum(c.base in fix_bases for c, _ in controls),
                               validated=sum(g.validation is not None for _, g in controls),
                               valid=sum(g.valid for _, g in controls)),
        mirrors=MirrorCounts(mined=len(mirrors), paired_with_defect_cases=sum(g.pair_id in defect_pairs for g in mirrors),
                             validated=sum(g.validation is not None for g in mirrors), valid=sum(g.valid for g in mirrors),
                             in_analysis=sum(g.case_id in scored for g in mirrors)),
    )  # fmt: skip
