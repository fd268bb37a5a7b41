"""The one registry of metric names: scoring, gates, the report and docs all read it.

A metric's name here is the name in ``score --json``, in a gates file, in the report and
in ``docs/SCORING.md`` (a test checks the doc lists every one). A gates file may also name
a metric per stratum, ``defect_recall@mutation``, computed from the breakdown.

Some metrics are *bounded*: with automatic evidence only, identification (a naming finding
the mirror's review did not echo) is the low end
and location an upper bound, so ``defect_recall`` (identified) carries ``located_recall``
as its upper bound and ``precision`` carries ``located_precision``. A gate on a bounded
metric is decided from both (``score/gates.py``).

Per rule (``defect_recall@rule:R-01``, and its located bound ``located_recall@rule:R-01``):
the rule's defects a condition's guidance reaches, identified (or located) / eligible
(run, defect) pairs; a gate may name them as any metric (``score/rules.py``).

People's figures (``LABEL_METRICS``: actionability, triage minutes) come from the labels of
a run directory, not from the runs: a gate may name them, and without labels they are
"not scored", never zero and never passing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum

from ..errors import UsageError
from ..records import RULE_ID_PATTERN, STRATUM_PATTERN, GoldRecord, Stratum

__all__ = ["DEPRECATED", "LABEL_METRICS", "METRICS", "RATE_METRICS", "RULE_METRICS", "SUMMARY_METRICS", "MetricKind",
           "MetricSpec", "check_metric_name", "corpus_names", "spec"]


class MetricKind(StrEnum):
    RATE = "rate"
    """Σnum/Σden over case clusters, with a bootstrap interval."""
    SUMMARY = "summary"
    """A summary with its own fields (latency quantiles, token totals); not gateable."""
    LABEL = "label"
    """From people's (or a calibrated judge's) labels of the run directory; gateable,
    "not scored" without labels, never per stratum."""


@dataclass(frozen=True)
class MetricSpec:
    name: str
    kind: MetricKind
    meaning: str
    """Numerator / denominator in words (the docs' table says the same)."""
    upper: str | None = None
    """The metric that bounds this one from above under automatic evidence."""
    higher_is_better: bool = True
    over_findings: bool = False
    """The denominator is the reviewer's own findings: a reviewer that said nothing has no
    value, which fails a gate on it (its own doing), not short evidence."""
    count: bool = False
    """A count per case, not a proportion (its exact interval is Poisson's, not a binomial's)."""


_R, _S = MetricKind.RATE, MetricKind.SUMMARY

METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("defect_recall", _R, "(run, defect) pairs with an identified finding / pairs: identified by people, "
               "else a calibrated judge, else a naming finding the mirror's run does not echo", upper="located_recall"),
    MetricSpec("located_recall", _R, "(run, defect) pairs with a located finding / pairs (upper bound)"),
    MetricSpec("named_recall", _R, "(run, defect) pairs with a located finding whose claim names the defect / pairs "
               "(diagnostic: naming alone, which style remarks achieve)"),
    MetricSpec("discriminating_recall", _R, "(run, defect) pairs with a naming finding the mirror's run does not "
               "echo / pairs whose mirror the condition reviewed"),
    MetricSpec("pair_accuracy", _R, "defect-case runs identifying every defect whose mirror run has no finding / "
               "defect-case runs whose mirror the condition reviewed"),
    MetricSpec("recall_any", _R, "defects identified in at least one repetition / defects with a run"),
    MetricSpec("recall_all", _R, "defects identified in every repetition / defects with a run"),
    MetricSpec("recall_k_of_n", _R, "defects identified in at least k of their n counted repetitions / defects "
               "with at least k counted repetitions (k registered in the gates' [stability]; without it, a "
               "majority: k = n // 2 + 1)"),
    MetricSpec("file_recall", _R, "defect-case runs with a finding naming a gold file / defect-case runs"),
    MetricSpec("symbol_recall", _R, "defect-case runs whose output names a gold symbol / runs of cases with symbols"),
    MetricSpec("localisation", _R, "(run, defect) pairs located / pairs where some finding names the defect's file"),
    MetricSpec("silence_rate", _R, "defect-case runs with no finding / defect-case runs", higher_is_better=False),
    MetricSpec("false_alarm_rate", _R, "control runs with a finding / control runs", higher_is_better=False),
    MetricSpec("fp_per_clean_case", _R, "false positives on controls / control runs", higher_is_better=False,
               count=True),
    MetricSpec("precision", _R, "identified findings / (located + false-positive findings)", upper="located_precision",
               over_findings=True),
    MetricSpec("located_precision", _R, "located findings / (located + false-positive findings) (upper bound)",
               over_findings=True),
    MetricSpec("duplicate_rate", _R, "duplicates / substantive findings", higher_is_better=False,
               over_findings=True),
    MetricSpec("severity_match", _R, "identified defects with the gold severity / identified defects with one"),
    MetricSpec("rename_stability", _R, "(defect, repetition) identified on the variant / identified on the original"),
    MetricSpec("flag_coverage", _R, "non-gold changed files flagged / non-gold changed files", higher_is_better=False),
    MetricSpec("completion", _R, "completed runs / all runs"),
    MetricSpec("file_mention_rate", _R, "defect-case runs whose output names a gold file's basename / all runs"),
    MetricSpec("symbol_mention_rate", _R, "defect-case runs whose output contains a removed identifier / all runs"),
    MetricSpec("severity_match_all", _R, "(run, defect) pairs identified with gold severity / all pairs, every run"),
    MetricSpec("rename_stable_all", _R, "(variant run, defect) pairs identified / all such pairs, every run"),
    MetricSpec("weighted_points", _R, "severity-weighted points of identified pairs (3/2/1) / points possible"),
    MetricSpec("latency_s", _S, "median, IQR, min and max over completed runs"),
    MetricSpec("time_to_first_review_s", _S, "forge runs: median, IQR, min and max seconds from the trigger to the "
               "bot's first review; runs with a first review / forge runs (timed-out ones count, as not reviewed)",
               higher_is_better=False),
    MetricSpec("tokens", _S, "total tokens, in, out and per case"),
)

#: Figures of people's labels (``label/stats.py``), read by the gates from the labels the
#: caller passes to scoring (``ScoreOptions.labels``); not in ``metrics`` of ``score --json``.
LABEL_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("actionability_rate", MetricKind.LABEL, "true findings passing all five actionability fields / "
               "true findings assessed (labels); a gate reads its Wilson 95% interval with bound = \"interval\""),
    MetricSpec("triage_minutes", MetricKind.LABEL, "median rater-minutes per labelled run (labels)",
               higher_is_better=False),
    MetricSpec("triage_minutes_q3", MetricKind.LABEL, "upper quartile of rater-minutes per labelled run (labels)",
               higher_is_better=False),
)

#: Names renamed after 0.1.0 (they carried "seed", which also means the random seed):
#: ``score --json`` still shows each old name beside the new, marked deprecated, and a
#: gates file may still name it; both go in the next version.
DEPRECATED: dict[str, str] = {"seed_file_recall": "file_mention_rate", "seed_symbol_recall": "symbol_mention_rate",
                              "seed_severity_match": "severity_match_all", "seed_rename_stable": "rename_stable_all"}

_BY_NAME = {m.name: m for m in (*METRICS, *LABEL_METRICS)}
_BY_NAME.update({old: _BY_NAME[new] for old, new in DEPRECATED.items()})
RATE_METRICS: tuple[str, ...] = tuple(m.name for m in METRICS if m.kind is MetricKind.RATE)
SUMMARY_METRICS: tuple[str, ...] = tuple(m.name for m in METRICS if m.kind is MetricKind.SUMMARY)


#: Metrics scored per rule (``NAME@rule:ID``).
RULE_METRICS = ("defect_recall", "located_recall")
_RULE = "rule:"


def corpus_names(gold: Iterable[GoldRecord]) -> set[str]:
    """What a gate's ``metric@...`` may name in this corpus: its strata, and its rules as ``rule:ID``."""
    names: set[str] = set()
    for record in gold:
        names.add(record.stratum)
        names.update(f"{_RULE}{d.rule_id}" for d in record.defects if d.rule_id)
    return names


def spec(name: str) -> MetricSpec:
    """The spec of a metric name, ``@stratum`` suffix ignored."""
    return _BY_NAME[name.split("@", 1)[0]]


def check_metric_name(name: str, where: str, strata: Collection[str] | None = None) -> None:
    """Refuse a gate's metric name that scoring does not produce.

    Args:
        strata: the strata a ``metric@stratum`` may name (the corpus's and the built-in
            ones) and the rules a ``metric@rule:ID`` may (``rule:ID``, :func:`corpus_names`);
            None when no corpus is at hand, and then any well-formed stratum or rule name
            (a user-defined stratum) passes.

    Raises:
        UsageError: unknown metric, stratum or rule, a summary metric (no rate to compare), a
            label figure per stratum (labels are not broken down), or a metric not scored per
            rule.
    """
    base, at, stratum = name.partition("@")
    if base not in _BY_NAME or _BY_NAME[base].kind is MetricKind.SUMMARY:
        names = ", ".join((*RATE_METRICS, *(m.name for m in LABEL_METRICS)))
        raise UsageError(f"{where}: unknown metric {name!r}; metrics: {names}")
    if at and stratum.startswith(_RULE):
        _check_rule(name, base, stratum[len(_RULE):], where, strata)
        return
    if at and _BY_NAME[base].kind is MetricKind.LABEL:
        raise UsageError(f"{where}: {name!r}: {base} comes from the labels as a whole, not per stratum")
    known = sorted({s.value for s in Stratum} | {s for s in strata or () if not s.startswith(_RULE)})
    if at and (not re.match(STRATUM_PATTERN, stratum) or (strata is not None and stratum not in known)):
        raise UsageError(f"{where}: unknown stratum in {name!r}; strata: {', '.join(known)}"
                         + ("" if strata is not None else " or a user-defined name (a-z, 0-9, _)"))  # fmt: skip


def _check_rule(name: str, base: str, rule: str, where: str, known: Collection[str] | None) -> None:
    if base not in RULE_METRICS:
        raise UsageError(f"{where}: {name!r}: only {' and '.join(RULE_METRICS)} are scored per rule")
    rules = sorted(s[len(_RULE):] for s in known or () if s.startswith(_RULE))
    if not re.match(RULE_ID_PATTERN, rule) or (known is not None and rule not in rules):
        raise UsageError(f"{where}: unknown rule in {name!r}; the corpus's rules: {', '.join(rules) or 'none'}"
                         if known is not None else f"{where}: {rule!r} in {name!r} is not a rule id")  # fmt: skip
