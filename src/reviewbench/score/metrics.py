"""The metrics of docs/SCORING.md, as sums of per-case numerators and denominators.

Every rate is Σnum / Σden over units (runs, defects, findings…) that each belong to one
case cluster (a rename variant belongs to its original's cluster). Keeping the sums per
cluster is what lets the bootstrap resample cases and carry all their runs, and lets one
code path compute the headline, the breakdowns and the intervals.

Counting reads the per-finding verdicts (``score/verdicts.py``); nothing is matched here.
Two analyses are tallied from the same verdicts:

- **completed**: only completed runs enter the rates; the others appear in ``completion``;
- **end-to-end**: a run that ended ``invalid``, ``failed``, ``timed_out`` or ``cancelled``
  is a miss on a defect case (every defect missed, the run silent) and a false alarm on a
  control, so a missing review is never rewarded. The gates read this analysis by default.

Seed-faithful figures (``seed_*``, ``weighted_points``) are over all runs in both.
"""

from __future__ import annotations

import statistics
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..records import Defect
from ..store.runs import RunRow
from .discriminate import Pairing
from .identify import evidence_name
from .levels import case_kind
from .match import PathMatcher
from .registry import RATE_METRICS
from .verdicts import FindingVerdict

__all__ = ["RATE_METRICS", "CaseInfo", "ConditionTally", "Row", "Rows", "RunOutcome", "hit_sequences", "rule_eligible",
           "run_outcome", "stability_k", "tally_condition", "with_mirror"]

_POINTS = {"high": 3, "med": 2, "low": 1}


@dataclass(frozen=True)
class CaseInfo:
    """What scoring needs to know of one case."""

    case_id: str
    cluster: str
    """The case id of the original (itself, unless this is a rename variant)."""
    stratum: str
    control: bool
    variant: bool
    defects: tuple[Defect, ...]
    paths: tuple[str, ...]
    exploratory: bool = False
    """Gold marks the case (or the case its mirror or variant belongs to) exploratory: scored
    apart from the headline, as a holdout."""


@dataclass(frozen=True)
class RunOutcome:
    """One run's counts, read off its verdicts (a run without a review: all zero)."""

    completed: bool
    located: tuple[bool, ...]
    """Per gold defect: some finding is located at it."""
    identified: tuple[bool, ...]
    """Per gold defect: some located finding identifies it."""
    severity_ok: tuple[bool | None, ...]
    """Per defect: its credited finding claims the gold severity (None: not located, or no gold one)."""
    file_hit: tuple[bool, ...]
    """Per defect: some finding (with or without a line) names one of its files."""
    credited: int
    """Findings credited to a defect (one per located defect)."""
    identified_findings: int
    false_positives: int
    duplicates: int
    findings: int
    flagged_other: int
    """Non-gold changed files (all files on a control) named by a finding."""
    other_files: int
    unsettled: int
    """Credited findings, located but not identified, on automatic evidence: a label would settle them."""
    evidence: tuple[str, ...]
    """Evidence level of each scored verdict."""
    unclear: int = 0
    """Precision's would-be denominator findings labelled unclear (false positives, and
    credited findings whose defect nothing else identifies): left out of it, counted beside."""
    unclear_credited: int = 0
    """Of ``unclear``, the credited ones (left out of located_precision's numerator too)."""
    named: tuple[bool, ...] = ()
    """Per gold defect: some located finding names it (automatic name matching)."""
    discriminating: tuple[bool, ...] = ()
    """Per gold defect: some located finding names it and the mirror's run said nothing
    naming it (``discriminate.py``)."""
    paired: bool = False
    """The case has a mirror in the analysis and this run's condition reviewed it in the
    same repetition (set by scoring, :func:`with_mirror`)."""
    mirror_completed: bool = False
    """That mirror run completed."""
    mirror_clean: bool = False
    """That mirror run completed with no finding."""
    incidental_credited: int = 0
    """Credited findings labelled valid incidental whose defect nothing else identifies: real,
    but none of the gold's, so neither true nor false for precision (out of its denominator,
    and out of located precision), as an unlocated incidental one is."""
    claims_num: int = 0
    """Atomic claims beyond one per comment, in precision's numerator: the further true parts
    of split comments that identify a defect (``_atomic``)."""
    claims_den: int = 0
    """Atomic claims beyond one per comment, in precision's denominator: further true and
    false parts of counted split comments, and the false parts of split comments precision
    does not count whole (duplicates, unclear, incidental, unlocated true findings)."""
    split: int = 0
    """Scored comments split into two or more labelled claims."""
    boilerplate: int = 0
    """False positives matching the registered boilerplate rule: out of precision's denominator."""


def run_outcome(run: RunRow, case: CaseInfo, verdicts: Sequence[FindingVerdict]) -> RunOutcome:
    """Summarise one run from its verdicts (linear in its findings)."""
    defects = case.defects
    gold_paths = {loc.path for d in defects for loc in d.locations}
    others = [p for p in case.paths if p not in gold_paths]
    completed = run.reviewed
    if not completed:
        none = tuple(False for _ in defects)
        return RunOutcome(False, none, none, tuple(None for _ in defects), none, 0, 0, 0, 0, 0, 0, len(others), 0, ())
    index = {d.defect_id: i for i, d in enumerate(defects)}
    located = [False] * len(defects)
    identified = [False] * len(defects)
    named = [False] * len(defects)
    discriminating = [False] * len(defects)
    severity_ok: list[bool | None] = [None] * len(defects)
    credited = fps = dups = unsettled = unclear_fps = 0
    unclear_at: list[int] = []
    incidental_at: list[int] = []
    for v in verdicts:
        if v.defect_id is not None and v.defect_id in index:
            # Located is where a comment lands, whoever judges it: the upper bound a label
            # never moves (a labelled false positive stays located, and is never identified).
            located[index[v.defect_id]] = True
        if v.false_positive:
            fps += 1
            unclear_fps += v.unclear
            continue
        if v.defect_id is None or v.defect_id not in index:
            continue
        i = index[v.defect_id]
        identified[i] = identified[i] or v.identified
        named[i] = named[i] or v.named
        discriminating[i] = discriminating[i] or (v.named and v.discriminating is True)
        if v.duplicate_of is None:
            credited += 1
            if v.unclear:
                unclear_at.append(i)
            elif v.incidental and not v.identified:
                incidental_at.append(i)
            severity_ok[i] = v.severity_ok
            unsettled += int(not v.identified and v.evidence == "automatic")
        else:
            dups += 1
    # An unclear credited finding whose defect another comment identifies yields the credit to
    # it (a duplicate, in effect): the defect stays one identified finding of the denominator.
    unclear_credited = sum(1 for i in unclear_at if not identified[i])
    claims_num, claims_den, split, boilerplate = _atomic(verdicts, index, identified)
    matcher = PathMatcher([*case.paths, *gold_paths])
    written = [f.path for f in run.findings if f.path]
    file_hit = tuple(any(matcher.agrees(p, loc.path) for p in written for loc in d.locations) for d in defects)
    flagged_other = sum(1 for p in others if any(matcher.agrees(w, p) for w in written))
    return RunOutcome(
        completed=True, located=tuple(located), identified=tuple(identified), severity_ok=tuple(severity_ok),
        file_hit=file_hit, credited=credited, identified_findings=sum(identified), false_positives=fps,
        duplicates=dups, findings=len(run.findings), flagged_other=flagged_other, other_files=len(others),
        unsettled=unsettled, evidence=tuple(v.evidence.value for v in verdicts if v.scored),
        unclear=unclear_fps + unclear_credited, unclear_credited=unclear_credited,
        named=tuple(named), discriminating=tuple(discriminating),
        incidental_credited=sum(1 for i in incidental_at if not identified[i]),
        claims_num=claims_num, claims_den=claims_den, split=split, boilerplate=boilerplate,
    )  # fmt: skip


def _atomic(verdicts: Sequence[FindingVerdict], index: dict[str, int],
            identified: Sequence[bool]) -> tuple[int, int, int, int]:  # fmt: skip
    """Precision's atomic claims and boilerplate: (extra numerator, extra denominator, split
    comments, boilerplate false positives), over one completed run's verdicts.

    A comment split into labelled parts counts each: when precision counts the comment whole
    (its credit to a defect, or its false positive), it counts its T true and F false parts
    instead of one (the first already in: T - 1 more true, T + F - 1 more in all, none fewer);
    when it does not (a duplicate, an unclear comment, one held out as incidental, a true
    finding the matcher located nowhere), its F false parts still count. A false claim inside
    a true comment is never hidden. Duplicate, unclear and incidental parts count in neither.
    A file-level comment on a defect case is out of precision, parts and all.
    """
    num = den = split = boilerplate = 0
    for v in verdicts:
        if v.boilerplate and v.false_positive and not v.unclear:
            boilerplate += 1
            continue  # out of precision, whatever its parts say
        c = v.claims
        if c is None or c.parts < 2 or not v.scored or v.file_level:
            continue
        split += 1
        located = v.defect_id is not None and v.defect_id in index
        held = (v.unclear or v.incidental) and located and not identified[index[v.defect_id or ""]]
        whole = (v.false_positive and not v.unclear) or (located and not v.false_positive and v.duplicate_of is None
                                                         and not held)  # fmt: skip
        if whole:
            num += max(0, c.true - 1) if v.identified else 0
            den += max(0, c.true + c.false_positive - 1) if v.identified else max(0, c.false_positive - 1)
        else:
            den += c.false_positive
    return num, den, split, boilerplate


def with_mirror(outcome: RunOutcome, pairing: Pairing | None) -> RunOutcome:
    """``outcome`` with what its mirror run says (``pairing`` None: no mirror reviewed)."""
    if pairing is None:
        return outcome
    return replace(outcome, paired=True, mirror_completed=pairing.completed, mirror_clean=pairing.clean)


Row = tuple[str, str, float, float, str, str | None, str | None]
"""(metric, cluster, num, den, stratum, defect class, severity): one contribution."""


class Rows:
    """A condition's contributions, :data:`Row` by row, held column by column.

    Iterates as the tuples it was given, in their order. Held as tuples, a row cost 160 bytes
    (two float objects and a 7-tuple); a store of 50,000 runs makes 1.3 million of them (two
    analyses). Here a row is five shared references and two doubles: 56 bytes.
    """

    __slots__ = ("_cls", "_cluster", "_den", "_metric", "_num", "_severity", "_stratum")

    def __init__(self) -> None:
        self._metric: list[str] = []
        self._cluster: list[str] = []
        self._num = array("d")
        self._den = array("d")
        self._stratum: list[str] = []
        self._cls: list[str | None] = []
        self._severity: list[str | None] = []

    def append(self, row: Row) -> None:
        metric, cluster, num, den, stratum, cls, severity = row
        self._metric.append(metric)
        self._cluster.append(cluster)
        self._num.append(num)
        self._den.append(den)
        self._stratum.append(stratum)
        self._cls.append(cls)
        self._severity.append(severity)

    def __iter__(self) -> Iterator[Row]:
        return zip(self._metric, self._cluster, self._num, self._den, self._stratum, self._cls, self._severity,
                   strict=True)  # fmt: skip

    def __len__(self) -> int:
        return len(self._metric)


@dataclass
class ConditionTally:
    """Contributions of one condition's runs, ready to aggregate or resample."""

    rows: Rows = field(default_factory=Rows)
    """(metric, cluster, num, den, stratum, defect class, severity), in the order counted."""
    states: Counter[str] = field(default_factory=Counter)
    control_fps: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    runs_with_usage: int = 0
    cases_with_usage: set[str] = field(default_factory=set)
    found: dict[tuple[str, int, int], bool] = field(default_factory=dict)
    """(case id, defect index, repetition) → identified, for scored runs of original cases."""
    unsettled: int = 0
    evidence: set[str] = field(default_factory=set)
    evidence_counts: dict[str, Counter[str]] = field(default_factory=dict)
    """Per kind of case (defect, control, variant): evidence levels of the scored comments."""
    models_requested: set[str] = field(default_factory=set)
    models_returned: set[str] = field(default_factory=set)
    unclear: list[tuple[str, str, int, int]] = field(default_factory=list)
    """(cluster, stratum, unclear, of them credited) per counted run with unclear claims:
    what precision left out (``score/unclear.py`` puts them back as false, then true)."""
    retired: Counter[str] = field(default_factory=Counter)
    """Earlier attempts (``run --retry-failed``) counted in completion, by their state."""
    missing: list[int] = field(default_factory=lambda: [0, 0])
    """Missing-review events and attempts: every attempt that did not complete, retired ones included."""
    failure_codes: Counter[str] = field(default_factory=Counter)
    """Attempts that did not complete, by failure code (retired ones included)."""
    failure_codes_by_stratum: dict[str, Counter[str]] = field(default_factory=dict)
    rules: dict[str, list[int]] = field(default_factory=dict)
    """Per rule id: [identified, eligible (run, defect) pairs, pairs no applicable guidance covers,
    located]: identified and located count over eligible pairs only."""
    too_few_repetitions: int = 0
    """Defects left out of ``recall_k_of_n``: fewer counted repetitions than the registered k."""
    precision_claims: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    """Over the runs precision counts: [split comments, atomic claims beyond one per comment in
    its denominator, false positives the boilerplate rule left out, false positives]."""

    def attempt(self, case: CaseInfo, run: RunRow, completed: bool) -> None:
        """One attempt in completion: a run, or an earlier attempt a retry replaced."""
        self.add("completion", case, int(completed), 1)
        self.missing[0] += int(not completed)
        self.missing[1] += 1
        if not completed:
            code = str(run.failure_code or "unrecorded")
            self.failure_codes[code] += 1
            self.failure_codes_by_stratum.setdefault(case.stratum, Counter())[code] += 1

    def add(self, metric: str, case: CaseInfo, num: float, den: float,
            cls: str | None = None, severity: str | None = None) -> None:  # fmt: skip
        self.rows.append((metric, case.cluster, float(num), float(den), case.stratum, cls, severity))


def _defect_tags(defect: Defect) -> tuple[str, str]:
    return defect.defect_class, defect.severity.value if defect.severity else "unrated"


def _mentions(text: str | None, needles: Sequence[str]) -> bool:
    """A mention: any needle as a case-insensitive substring of the whole output."""
    if not text or not needles:
        return False
    low = text.lower()
    return any(n.lower() in low for n in needles)


def rule_eligible(run: RunRow, defect: Defect) -> bool:
    """Whether a rule defect is an opportunity for the run's condition: always without a
    treatment (no guidance recorded: the baseline), else only when a guidance file that
    applied to the run lies in a directory holding one of the defect's paths. A rule its
    guidance does not reach is the corpus's or the rules' scoping defect, not a miss."""
    if run.guidance_sha256 is None or run.guidance_blobs is None:
        return True
    folders = [g.rsplit("/", 1)[0] + "/" if "/" in g else "" for g in run.guidance_blobs]
    return any(loc.path.startswith(folder) for loc in defect.locations for folder in folders)


def tally_condition(runs: Sequence[RunRow], cases: dict[str, CaseInfo], outcomes: dict[str, RunOutcome],
                    end_to_end: bool = False, retired: Sequence[RunRow] = (), k: int | None = None) -> ConditionTally:  # fmt: skip
    """Count every run of one condition on the eligible ``cases`` from its outcome.

    ``retired``: the condition's earlier attempts that ``run --retry-failed`` replaced. Each
    stays a missing-review event in ``completion`` even when its retry completed (an attempt
    the operator interrupted, ``cancelled``, is the harness's and is left out).
    ``k``: the registered stability rule of ``recall_k_of_n`` (None: a majority).
    """
    tally = ConditionTally()
    for old in retired:
        if old.case_id in cases and old.state.value != "cancelled":
            tally.retired[old.state.value] += 1
            tally.attempt(cases[old.case_id], old, completed=False)
    by_rep: dict[tuple[str, int], RunOutcome] = {}
    for run in runs:
        case = cases.get(run.case_id)
        if case is None:
            continue  # not eligible under the current analysis
        m = outcomes[run.run_id]
        _count_attempt(tally, run, case, m)
        if not m.completed and not end_to_end:
            continue
        tally.evidence.update(m.evidence)
        tally.evidence_counts.setdefault(case_kind(case.control, case.variant), Counter()).update(m.evidence)
        tally.unsettled += m.unsettled
        by_rep[(run.case_id, run.repetition)] = m
        if m.completed:  # a missing review neither lowers flag coverage nor counts as silence
            tally.add("flag_coverage", case, m.flagged_other, m.other_files)
        if case.control:
            _count_clean(tally, case, m)
        elif not case.variant:  # variants count only in rename_stability (below)
            _count_defect_case(tally, run, case, m, end_to_end)
    _per_defect(tally, cases, k)
    _rename_stability(tally, cases, by_rep)
    return tally


def _count_attempt(tally: ConditionTally, run: RunRow, case: CaseInfo, m: RunOutcome) -> None:
    """What every attempt counts, in either analysis: state, models, latency, usage."""
    tally.states[run.state] += 1
    tally.attempt(case, run, m.completed)
    if run.model_requested:
        tally.models_requested.add(run.model_requested)
    if m.completed and run.model_returned:
        tally.models_returned.add(run.model_returned)
    if m.completed and run.latency_s is not None:
        tally.latencies.append(run.latency_s)
    if run.tokens_in is not None or run.tokens_out is not None:
        tally.tokens_in += run.tokens_in or 0
        tally.tokens_out += run.tokens_out or 0
        tally.runs_with_usage += 1
        tally.cases_with_usage.add(case.cluster)
    _seed_figures(tally, run, case, m)


def _count_clean(tally: ConditionTally, case: CaseInfo, m: RunOutcome) -> None:
    """A clean case's run: false alarms, and the denominators of precision it adds to."""
    tally.add("false_alarm_rate", case, int(m.findings > 0 or not m.completed), 1)
    if m.completed:
        tally.add("fp_per_clean_case", case, m.false_positives, 1)
        tally.control_fps.append(m.false_positives)
    tally.add("precision", case, m.claims_num, m.false_positives - m.unclear - m.boilerplate + m.claims_den)
    tally.add("located_precision", case, m.claims_num, m.false_positives - m.unclear - m.boilerplate + m.claims_den)
    if m.unclear:
        tally.unclear.append((case.cluster, case.stratum, m.unclear, 0))
    tally.add("duplicate_rate", case, 0, m.false_positives)
    _count_claims(tally, m)


def _count_claims(tally: ConditionTally, m: RunOutcome) -> None:
    cell = tally.precision_claims
    cell[0] += m.split
    cell[1] += m.claims_den
    cell[2] += m.boilerplate
    cell[3] += m.false_positives


def _count_defect_case(tally: ConditionTally, run: RunRow, case: CaseInfo, m: RunOutcome, end_to_end: bool) -> None:
    """A defect case's run: recall per defect, precision, pairs, rules."""
    if m.completed:
        tally.add("silence_rate", case, int(m.findings == 0), 1)
    tally.add("file_recall", case, int(any(m.file_hit)), 1)
    # The names identification accepts as evidence: a dunder such as `__init__` is also
    # a file name every path of a package mentions.
    symbols = sorted({s for d in case.defects for s in d.symbols if evidence_name(s)})
    if symbols:
        text = run.raw_output if m.completed else None
        tally.add("symbol_recall", case, int(_whole_word(text, symbols)), 1)
    substantive = m.credited + m.false_positives - m.unclear - m.incidental_credited - m.boilerplate + m.claims_den
    tally.add("precision", case, m.identified_findings + m.claims_num, substantive)
    tally.add("located_precision", case, m.credited - m.unclear_credited - m.incidental_credited + m.claims_num,
              substantive)
    if m.unclear:
        tally.unclear.append((case.cluster, case.stratum, m.unclear, m.unclear_credited))
    tally.add("duplicate_rate", case, m.duplicates, m.credited + m.false_positives + m.duplicates)
    _count_claims(tally, m)
    # Pairs: only where the mirror was reviewed (completed, for the completed analysis;
    # end to end, a mirror review that went missing is a pair the reviewer did not tell apart).
    paired = m.paired and (m.mirror_completed or end_to_end)
    if paired:
        tally.add("pair_accuracy", case, int(m.completed and all(m.identified) and m.mirror_clean), 1)
    for i, defect in enumerate(case.defects):
        cls, severity = _defect_tags(defect)
        tally.add("defect_recall", case, int(m.identified[i]), 1, cls, severity)
        tally.add("located_recall", case, int(m.located[i]), 1, cls, severity)
        tally.add("named_recall", case, int(bool(m.named) and m.named[i]), 1, cls, severity)
        if paired:
            tally.add("discriminating_recall", case, int(bool(m.discriminating) and m.discriminating[i]
                                                         and m.mirror_completed), 1, cls, severity)  # fmt: skip
        if m.file_hit[i]:
            tally.add("localisation", case, int(m.located[i]), 1, cls, severity)
        if m.identified[i] and m.severity_ok[i] is not None:
            tally.add("severity_match", case, int(bool(m.severity_ok[i])), 1, cls, severity)
        tally.found[(run.case_id, i, run.repetition)] = m.identified[i]
        if defect.rule_id:
            cell = tally.rules.setdefault(defect.rule_id, [0, 0, 0, 0])
            if rule_eligible(run, defect):
                cell[0] += int(m.identified[i])
                cell[1] += 1
                cell[3] += int(m.located[i])
            else:
                cell[2] += 1


def _whole_word(text: str | None, symbols: Sequence[str]) -> bool:
    from .match import mentions_symbol

    return mentions_symbol(text, symbols)


def _seed_figures(tally: ConditionTally, run: RunRow, case: CaseInfo, m: RunOutcome) -> None:
    """The all-runs figures: file and symbol mentions, severity match, rename stability and severity points, counted over every run."""
    if case.control:
        return
    text = run.raw_output or ""
    if case.variant:
        for i, defect in enumerate(case.defects):
            cls, severity = _defect_tags(defect)
            tally.add("rename_stable_all", case, int(m.identified[i]), 1, cls, severity)
        return
    files = sorted({loc.path.rsplit("/", 1)[-1] for d in case.defects for loc in d.locations})
    tally.add("file_mention_rate", case, int(_mentions(text, files)), 1)
    removed = sorted({s for d in case.defects for s in d.removed_identifiers if len(s) >= 4})
    tally.add("symbol_mention_rate", case, int(_mentions(text, removed)), 1)
    for i, defect in enumerate(case.defects):
        cls, severity = _defect_tags(defect)
        if defect.severity is None:
            continue
        points = _POINTS[defect.severity.value]
        tally.add("severity_match_all", case, int(m.identified[i] and m.severity_ok[i] is True), 1, cls, severity)
        tally.add("weighted_points", case, points * int(m.identified[i]), points, cls, severity)


def stability_k(n: int, k: int | None) -> int:
    """The repetitions of ``n`` that must find a defect: the registered ``k``, else a majority."""
    return k if k is not None else n // 2 + 1


def _per_defect(tally: ConditionTally, cases: dict[str, CaseInfo], k: int | None = None) -> None:
    """recall_any / recall_all: a defect identified in at least one / every counted
    repetition; recall_k_of_n: in at least k of its n (a defect with fewer than k counted
    repetitions cannot show it, and is left out and counted)."""
    outcomes: dict[tuple[str, int], list[bool]] = defaultdict(list)
    for (case_id, index, _rep), found in tally.found.items():
        outcomes[(case_id, index)].append(found)
    for (case_id, index), seen in sorted(outcomes.items()):
        case = cases[case_id]
        cls, severity = _defect_tags(case.defects[index])
        tally.add("recall_any", case, int(any(seen)), 1, cls, severity)
        tally.add("recall_all", case, int(all(seen)), 1, cls, severity)
        need = stability_k(len(seen), k)
        if len(seen) < need:
            tally.too_few_repetitions += 1
        else:
            tally.add("recall_k_of_n", case, int(sum(seen) >= need), 1, cls, severity)


def _rename_stability(tally: ConditionTally, cases: dict[str, CaseInfo],
                      outcomes: dict[tuple[str, int], RunOutcome]) -> None:  # fmt: skip
    """Of the defects the original identified in repetition r, those its variant also identified in r."""
    for (case_id, rep), variant in outcomes.items():
        case = cases[case_id]
        if not case.variant:
            continue
        original = outcomes.get((case.cluster, rep))
        if original is None:
            continue
        for i, found in enumerate(original.identified[: len(variant.identified)]):
            if found:
                cls, severity = _defect_tags(cases[case.cluster].defects[i])
                tally.add("rename_stability", case, int(variant.identified[i]), 1, cls, severity)


def latency_summary(values: list[float]) -> dict[str, Any]:
    """Median (``value``), IQR (``lo``, ``hi``), ``min`` and ``max`` over completed runs."""
    if not values:
        return {"value": None, "num": None, "den": 0, "lo": None, "hi": None, "min": None, "max": None}
    ordered = sorted(values)
    q = statistics.quantiles(ordered, n=4, method="inclusive") if len(ordered) > 1 else [ordered[0]] * 3
    return {"value": round(statistics.median(ordered), 4), "num": None, "den": len(ordered),
            "lo": round(q[0], 4), "hi": round(q[2], 4), "min": round(ordered[0], 4),
            "max": round(ordered[-1], 4)}  # fmt: skip


def fp_distribution(fps: list[int]) -> dict[str, Any]:
    """False positives per completed clean-case run: the 0/1/2/3+ buckets, median, IQR
    (``q1``, ``q3``: inclusive quartiles, as latency's) and max."""
    buckets = Counter(min(n, 3) for n in fps)
    ordered = sorted(fps)
    q = statistics.quantiles(ordered, n=4, method="inclusive") if len(ordered) > 1 else [*ordered] * 3
    return {
        "0": buckets[0], "1": buckets[1], "2": buckets[2], "3+": buckets[3],
        "median": statistics.median(fps) if fps else None,
        "q1": _number(q[0]) if fps else None, "q3": _number(q[2]) if fps else None,
        "max": max(fps) if fps else None,
        "runs": len(fps),
    }  # fmt: skip


def _number(x: float) -> int | float:
    return int(x) if float(x).is_integer() else round(float(x), 6)


def hit_sequences(found: dict[tuple[str, int, int], bool], cases: dict[str, CaseInfo],
                  repetitions: int) -> dict[str, dict[str, str]]:  # fmt: skip
    """Per case, per defect id, its repetitions in order as one string: ``1`` identified,
    ``0`` missed, ``-`` not counted (no run, or one that did not complete, in the completed
    analysis): ``"10-"``."""
    out: dict[str, dict[str, list[str]]] = {}
    for (case_id, index, rep), hit in found.items():
        defect = cases[case_id].defects[index].defect_id
        cells = out.setdefault(case_id, {}).setdefault(defect, ["-"] * repetitions)
        if rep < repetitions:
            cells[rep] = "1" if hit else "0"
    return {case: {d: "".join(cells) for d, cells in sorted(per.items())} for case, per in sorted(out.items())}
