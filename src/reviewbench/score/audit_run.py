"""Running the matcher audit (``audit.py`` says what it is): the probes through the ordinary
run and score path, in a private scratch run directory."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import CorpusError
from ..mine.shape import FEATURES, Shape, mann_whitney_auc, patch_shape, shape_separability
from ..review.experiment import load_experiment
from ..review.runner import run_experiment
from ..store.corpus import patch_file, read_corpus
from ..store.scratch import make_scratch, remove_tree
from ._api import ScoreOptions, eligible_cases, score_run
from .audit import (
    AUDIT_FILE,
    MAX_PROBE_RECALL,
    MAX_SHAPE_AUC,
    PROBES,
    Audit,
    Fraction,
    ProbeFigures,
    ShapeFigures,
)

__all__ = ["audit_corpus"]


def _rate(f: Fraction) -> float:
    return f.num / f.den if f.den else 0.0


def _fmt(f: Fraction) -> str:
    return f"{f.num:g}/{f.den:g}"


def shape_rule(defect: list[Shape], clean: list[Shape]) -> tuple[str, str, float] | None:
    """The ``shape`` probe's rule for this corpus: its most separating feature (Mann–Whitney
    AUC, oriented), and the cut on it that best tells defect cases from clean ones (Youden's
    J over the observed values): ``(feature, "at_least" | "at_most", value)``."""
    if not defect or not clean:
        return None
    best: tuple[float, str, str] | None = None
    for index, name in enumerate(FEATURES):
        raw = mann_whitney_auc([s.features()[index] for s in defect], [s.features()[index] for s in clean])
        side = "at_least" if raw >= 0.5 else "at_most"
        if best is None or max(raw, 1 - raw) > best[0]:
            best = (max(raw, 1 - raw), name, side)
    assert best is not None
    _, name, side = best
    index = FEATURES.index(name)
    values = sorted({s.features()[index] for s in (*defect, *clean)})

    def j(cut: float) -> float:
        hit = (lambda v: v >= cut) if side == "at_least" else (lambda v: v <= cut)
        tpr = sum(hit(s.features()[index]) for s in defect) / len(defect)
        fpr = sum(hit(s.features()[index]) for s in clean) / len(clean)
        return float(tpr - fpr)

    cut = max(values, key=lambda v: (j(v), -v if side == "at_least" else v))
    return name, side, float(cut)


def _experiment(corpus: Path, rule: tuple[str, str, float] | None) -> str:
    lines = [f"corpus = {json.dumps(str(corpus))}", "repeats = 1", "seed = 0", "rename = false", ""]
    for probe in PROBES:
        extra = f', feature = "{rule[0]}", {rule[1]} = {rule[2]:g}' if probe == "shape" and rule else ""
        lines += ["[[condition]]", f'name = "{probe}"', f'reviewer = {{ kind = "probe", probe = "{probe}"{extra} }}',
                  "concurrency = 4", ""]  # fmt: skip
    return "\n".join(lines)


def audit_corpus(corpus: Path, *, write: bool = True) -> Audit:
    """Run the probes and the shape test on the validated ``corpus``; write ``audit.json``.

    Raises:
        CorpusError: the corpus is missing, damaged, or has no valid case to audit.
    """
    corpus = corpus.resolve()
    data = read_corpus(corpus)
    cases = eligible_cases(data, include_unvalidated=False)
    if not cases:
        raise CorpusError(f"{corpus} has no validated case to audit (run reviewbench validate first)")
    gold = {g.case_id: g for g in data.gold}
    shapes = {cid: patch_shape(patch_file(corpus, c).read_bytes()) for c in data.cases
              if (cid := c.case_id) in cases and not gold[cid].variant_of}  # fmt: skip
    defect = [s for cid, s in shapes.items() if gold[cid].expect_finding]
    clean = [s for cid, s in shapes.items() if not gold[cid].expect_finding]
    rule = shape_rule(defect, clean)
    scratch = make_scratch("reviewbench-audit-")
    try:
        path = scratch / "audit.toml"
        path.write_text(_experiment(corpus, rule), encoding="utf-8")
        rundir = scratch / "runs"
        run_experiment(load_experiment(path), rundir)
        result = score_run(rundir, ScoreOptions(bootstrap=100, seed=0, include_unvalidated=False))
    finally:
        remove_tree(scratch)
    conditions = result.as_json()["conditions"]
    probes = {}
    for probe in PROBES:
        metrics = conditions[probe]["metrics"]  # the completed analysis: every probe run completes
        probes[probe] = ProbeFigures(
            named=Fraction(num=metrics["named_recall"]["num"], den=metrics["named_recall"]["den"]),
            discriminating=Fraction(num=metrics["discriminating_recall"]["num"],
                                    den=metrics["discriminating_recall"]["den"]),
            false_alarms=Fraction(num=metrics["false_alarm_rate"]["num"], den=metrics["false_alarm_rate"]["den"]),
        )  # fmt: skip
    separability = shape_separability(defect, clean)
    reasons = [f"probe {name} is credited with {_fmt(p.discriminating)} defects (discriminating recall above "
               f"{MAX_PROBE_RECALL:.0%})" for name, p in probes.items() if _rate(p.discriminating) > MAX_PROBE_RECALL]
    if separability.auc is not None and separability.auc > MAX_SHAPE_AUC:
        reasons.append(f"diff shape separates defect cases from clean ones (AUC {separability.auc:.3f} > "
                       f"{MAX_SHAPE_AUC}; best single feature: {separability.best_feature} "
                       f"{separability.best_feature_auc:.3f})")
    if not clean:
        reasons.append("no valid clean case: restraint cannot be measured")
    audit = Audit(
        gold_sha256=data.meta.gold_sha256, probes=probes,
        shape=ShapeFigures(auc=_round(separability.auc), best_feature=separability.best_feature,
                           best_feature_auc=_round(separability.best_feature_auc), defect_cases=len(defect),
                           clean_cases=len(clean)),
        sound=not reasons, reasons=reasons,
    )  # fmt: skip
    if write:
        (corpus / AUDIT_FILE).write_text(audit.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return audit


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


