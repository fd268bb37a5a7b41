"""Everything a score reads, read once: :func:`load_inputs` is the only code of scoring that
opens files (the run store, the corpus, the registration, the gates, the exclusion log and
people's labels); :func:`reviewbench.score.score` computes from the typed record alone.

Reading the labels here, below the decision, is what makes the library and the CLI agree:
``score_run(rundir)``, ``reviewbench score``, the report and the demo all score with the
labels of ``RUNDIR/labels.sqlite`` unless told otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..config.prices import PriceTable
from ..config.rules import DEFAULT_RULES
from ..evidence.records import VerdictOverride
from ..store.corpus import Corpus, read_recorded_corpus
from ..store.exclusions import Exclusion, read_exclusions
from ..store.runs import RUNS_DB, RunRow, RunStore, read_allocation
from .completion import PlannedRun
from .exclusions import excluded_ids
from .gates import Gates, load_gates
from .recorded import RecordedExperiment
from .registry import corpus_names
from .result import LabelFigures, RegistrationSummary
from .versions import check_past_version, registered_gates, scoped_runs

__all__ = ["ScoreOptions", "ScoringInputs", "load_inputs"]


@dataclass(frozen=True)
class ScoreOptions:
    tolerance: int | None = None
    """None: the registered tolerance, or 3."""
    bootstrap: int | None = None
    """None: the registered resample count, or 10,000."""
    seed: int | None = None
    """None: the registered bootstrap seed, or 0."""
    gates: Path | None = None
    """None: the registered gates, or the built-in table."""
    include_unvalidated: bool | None = None
    """None: as registered, or False."""
    new_version: bool = False
    """Register changed inputs as a new benchmark version instead of refusing."""
    overrides: Mapping[str, VerdictOverride] | None = None
    """Judge or human labels by comment_id; they replace automatic verdicts (docs/SCORING.md).
    None: those of ``RUNDIR/labels.sqlite`` (none without the file); ``{}``: no labels."""
    cutoff: str | None = None
    """Contamination cut-off (YYYY-MM-DD); None: the experiment's registered ``cutoff``, if any."""
    labels: Mapping[str, LabelFigures] | None = None
    """People's figures by condition (actionability, triage minutes): the gates may read
    them, and each condition carries them; a condition without is "not scored" on them.
    None: those of ``RUNDIR/labels.sqlite``; ``{}``: none."""
    prices: PriceTable | None = None
    """A price table (``score --prices``): each condition's cost per run and per identified
    defect (``score/cost.py``), apart from the token usage; None: no cost."""
    historical: bool = False
    """Read the runs as history (``compare``, ``gate``): the registration file is verified and
    its rules apply, but today's experiment file, prompts, guidance and gates need not match
    it (a rerun after a prompt edit changed them); the gates are not applied (built-in)."""
    version: int | None = None
    """A registered benchmark version to score (None: the latest); each scores only the runs
    started under it (``score/versions.py``)."""
    exclusions: bool = True
    """Apply ``RUNDIR/exclusions.jsonl`` (and score without it beside); False: leave nothing out."""


@dataclass(frozen=True)
class ScoringInputs:
    """A run directory as scoring reads it: runs, corpus, rules, gates, labels."""

    rundir: Path
    runs: list[RunRow]
    """The runs scored: the version's, less the exclusion log's."""
    corpus: Corpus
    experiment: RecordedExperiment
    """The experiment the runs recorded (``runs.sqlite`` meta)."""
    registration: RegistrationSummary | None
    gates: Gates
    gates_path: Path | None
    gates_sha: str
    seed: int
    tolerance: int
    bootstrap: int
    include_unvalidated: bool
    excluded_cases: frozenset[str] = frozenset()
    """Cases the exclusion log leaves out (their runs are out of ``runs`` already)."""
    history: list[RunRow] = field(default_factory=list)
    """Earlier attempts that ``run --retry-failed`` replaced (they count in completion)."""
    overrides: Mapping[str, VerdictOverride] = field(default_factory=dict)
    labels: Mapping[str, LabelFigures] = field(default_factory=dict)
    raters: Mapping[str, Any] | None = None
    """The raters in aggregate (``evidence.people.raters_figure``), read with the labels."""
    prices: PriceTable | None = None
    cutoff: str | None = None
    """The contamination cut-off asked for, else the experiment's."""
    exclusion_log: tuple[Exclusion, ...] = ()
    """The exclusion log applied (empty when nothing is left out)."""
    unexcluded: list[RunRow] = field(default_factory=list)
    """The version's runs before the exclusion log: the figures shown beside."""
    planned: tuple[PlannedRun, ...] | None = None
    """Every run the plan held (``allocation.jsonl``); None without a recorded plan."""
    recorded: frozenset[str] = frozenset()
    """Every run id of the run store, whatever version it ran under or exclusion it has."""

    def condition_order(self) -> list[str]:
        """Condition names in the experiment's order."""
        return self.experiment.names()

    def without_exclusions(self) -> ScoringInputs:
        """The same inputs with nothing left out (the figures shown beside the excluded ones)."""
        return replace(self, runs=list(self.unexcluded), excluded_cases=frozenset(), exclusion_log=())


def _stored(rundir: Path) -> tuple[list[RunRow], list[RunRow], Corpus, RecordedExperiment, str | None, bool]:
    store = RunStore(rundir / RUNS_DB)
    try:
        runs = list(store.runs())
        history = store.history()
        corpus_path = store.get_meta("corpus_path")
        recorded_gold = store.get_meta("gold_sha256")
        experiment = RecordedExperiment.model_validate(json.loads(store.get_meta("experiment") or "{}"))
        experiment_file = store.get_meta("experiment_path")
        sealed = store.get_meta("registration_sha256")  # a registration the runs recorded
    finally:
        store.close()
    corpus = read_recorded_corpus(rundir, corpus_path, recorded_gold, "scoring")
    return runs, history, corpus, experiment, experiment_file, bool(sealed)


def _registration(rundir: Path, options: ScoreOptions, experiment_file: str | None, sealed: bool,
                  asked: dict[str, Any]) -> dict[str, Any] | None:  # fmt: skip
    from ..review.experiment import load_experiment
    from .registration import (
        REGISTRATION_FILE,
        check_registration,
        registered_summary,
        version_summary,
    )

    if options.historical:
        return registered_summary(rundir)
    if options.version is not None:  # a version as history: its own gates and rules, its own runs
        check_past_version(options.version, asked, options.seed, options.new_version)
        return version_summary(rundir, options.version)
    # Also when the file is gone but the runs recorded one: check_registration refuses that.
    if experiment_file and ((rundir / REGISTRATION_FILE).exists() or sealed):
        return check_registration(load_experiment(Path(experiment_file)), rundir, options.gates, options.seed,
                                  new_version=options.new_version, rules=asked)  # fmt: skip
    return None


def _labels(rundir: Path, options: ScoreOptions) -> tuple[Mapping[str, VerdictOverride], Mapping[str, LabelFigures]]:
    overrides, labels = options.overrides, options.labels
    if overrides is None:
        from ..evidence.overrides import score_overrides

        overrides = score_overrides(rundir)
    if labels is None:
        from ..evidence.summary import label_figures

        labels = {name: LabelFigures.model_validate(figures) for name, figures in label_figures(rundir).items()}
    return overrides, labels


def _raters(rundir: Path) -> Mapping[str, Any] | None:
    from ..evidence.people import raters_figure

    return raters_figure(rundir)


def load_inputs(rundir: Path, options: ScoreOptions = ScoreOptions()) -> ScoringInputs:
    """Read ``rundir`` as scoring needs it.

    Raises:
        CorpusError: the run directory or its corpus is missing.
        UsageError: the corpus's gold changed since the runs, registered rules or inputs
            changed, or the gates are invalid.
    """
    runs, history, corpus, experiment, experiment_file, sealed = _stored(rundir)
    everything = list(runs)
    asked = {"tolerance": options.tolerance, "bootstrap": options.bootstrap,
             "include_unvalidated": options.include_unvalidated}  # fmt: skip
    found = _registration(rundir, options, experiment_file, sealed, asked)
    registration = None
    if found:
        runs, registration = scoped_runs(runs, rundir, found)
    rules = {k: (v if v is not None else DEFAULT_RULES[k]) for k, v in asked.items()}
    gates_path = options.gates
    seed = options.seed if options.seed is not None else 0
    if registration:
        if gates_path is None and registration.gates.path != "built-in" and not options.historical:
            gates_path = Path(registration.gates.path)
        seed = registration.seeds.bootstrap if options.seed is None else options.seed
        rules = registration.rules.model_dump()
    strata = corpus_names(corpus.gold)
    if registration and registration.historical:
        gates, gates_sha = registered_gates(rundir, registration, options.gates, strata)
    else:
        gates, _, gates_sha = load_gates(gates_path, strata=strata)
    log = tuple(read_exclusions(rundir)) if options.exclusions else ()
    excluded_runs, excluded_cases = excluded_ids(list(log)) if log else ((), ())
    kept = [r for r in runs if r.run_id not in excluded_runs and r.case_id not in excluded_cases]
    overrides, labels = _labels(rundir, options)
    raters = _raters(rundir) if options.labels is None else None
    plan = read_allocation(rundir)
    planned = None if plan is None else tuple(PlannedRun(**p) for p in plan)
    return ScoringInputs(
        rundir=rundir, runs=kept, corpus=corpus, experiment=experiment, registration=registration,
        gates=gates, gates_path=gates_path, gates_sha=gates_sha, seed=seed, tolerance=int(rules["tolerance"]),
        bootstrap=int(rules["bootstrap"]), include_unvalidated=bool(rules["include_unvalidated"]),
        excluded_cases=frozenset(excluded_cases), history=history, overrides=overrides, labels=labels, raters=raters,
        prices=options.prices, cutoff=options.cutoff or experiment.cutoff, exclusion_log=log,
        unexcluded=runs, planned=planned, recorded=frozenset(r.run_id for r in everything),
    )  # fmt: skip
