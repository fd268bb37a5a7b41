"""The offline demo: the whole pipeline, end to end, on the embedded sample project.

Builds the sample repository, mines it, validates every case with its tests, audits the
matcher with the built-in probes, registers and runs an experiment with the built-in reviewers (``silent``, ``flag_all`` and ruff as a
real static analyser through ``sarif``), scores it and writes the report. Nothing leaves
the machine.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..config import MineConfig, ValidateConfig
from ..errors import OutputExists
from ..mine import mine_corpus
from ..review.experiment import load_experiment
from ..review.runner import run_experiment
from ..score import score_run
from ..score.audit import Audit
from ..score.audit_run import audit_corpus
from ..score.registration import register
from ..score.result import ScoreResult
from ..validate import validate_corpus
from .labels import LabelDemo, label_demo
from .sample import build_sample_repository

__all__ = ["DemoResult", "run_demo"]

MARKER = ".reviewbench-demo"
SEED = 7

EXPERIMENT = """\
# The demo's experiment: three built-in reviewers, three repetitions each.
corpus = "corpus"
repeats = 3
seed = {seed}
rename = true

[[condition]]
name = "silent"
reviewer = {{ kind = "silent" }}

[[condition]]
name = "flag_all"
reviewer = {{ kind = "flag_all" }}

[[condition]]
name = "ruff"
reviewer = {{ kind = "sarif", command = {ruff}, expose = {expose} }}
context = "tree"
concurrency = 2

# What the decision rests on, frozen by register and printed by score and the report.
[registration]
owner = "demo owner"
hypotheses = [
  {{ id = "H1", statement = "ruff is fit for triage of this project's changes", gates = ["triage"] }},
  {{ id = "H2", statement = "no baseline earns authority", gates = ["flags_everything", "none"] }},
]
severity_policy = {{ text = "Severity is the worst credible outcome once the change ships.", levels = {{ high = "wrong dates or totals reach a user", med = "a visible failure with a workaround", low = "cosmetic or internal only" }} }}
exclusion_policy = "Only runs the harness broke, each with its log line (reviewbench exclude)."
stop_conditions = ["a safety stop", "every run of a condition fails"]
completion = "the reviewer's answer (SARIF or NO_ISSUES) within timeout_s"
product_surface = "built-in baselines and ruff's SARIF output on the exported tree"
approvals = [{{ role = "decision owner", name = "demo owner" }}, {{ role = "reviewer of the protocol", name = "demo reviewer" }}]
data_controls = {{ account_type = "none: every reviewer runs on this machine", workspace = "the demo directory", data_settings = "nothing leaves the machine", retention = "until the demo directory is removed", raw_output_readers = ["whoever runs the demo"] }}
"""


@dataclass(frozen=True)
class DemoResult:
    out: Path
    corpus: Path
    rundir: Path
    score: ScoreResult
    report: Path
    labels: LabelDemo | None = None
    """Human labels of the demo's findings (scripted raters), agreement and judge calibration."""
    audit: Audit | None = None
    """The matcher audit of the corpus: the probes' figures and the shape separability."""


def _prepare(out: Path) -> None:
    if out.exists():
        if not (out / MARKER).exists() and any(out.iterdir()):
            raise OutputExists(f"{out} exists and is not a demo directory; choose another --out")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("written by reviewbench demo; safe to delete\n")


def _interpreter_paths() -> str:
    """This Python and its environment, shown read-only to the sandboxed analyser (they may
    live under a home folder, which the sandbox hides)."""
    paths = sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    return json.dumps(paths)


def _ruff_command() -> str:
    command = [sys.executable, "-m", "ruff", "check", "--output-format", "sarif", "--no-cache",
               "--exit-zero", "--isolated", "--select", "F,E9,B", "."]  # fmt: skip
    return json.dumps(" ".join(shlex.quote(part) for part in command))


def run_demo(out: Path, *, step: Callable[[str], None] = lambda _: None, jobs: int | None = None) -> DemoResult:
    """Run the demo into ``out`` (replaced if it holds an earlier demo)."""
    _prepare(out)
    step("building the sample repository")
    repo = build_sample_repository(out / "shelfkit")
    step("mining its history: fix reversals, mutations, clean controls, rename variants")
    corpus = out / "corpus"
    mine_corpus(MineConfig(repo=repo, seed=SEED, mutations=8, controls_ratio=0.5, rename=True), corpus)
    step("validating every case with the project's tests")
    validate_corpus(corpus, ValidateConfig.build(**({"jobs": jobs} if jobs else {}), timeout=120))
    step("auditing the matcher: the built-in probes (namer, quoter, shape) and the shape separability")
    audit = audit_corpus(corpus)
    experiment_path = out / "experiment.toml"
    experiment_path.write_text(EXPERIMENT.format(seed=SEED, ruff=_ruff_command(), expose=_interpreter_paths()), encoding="utf-8")
    experiment = load_experiment(experiment_path)
    rundir = out / "runs"
    step("registering the experiment")
    register(experiment, rundir, gates_path=None, bootstrap_seed=SEED)
    step("running the reviewers")
    run_experiment(experiment, rundir)
    step("labelling: two scripted raters, an adjudicator, a calibrated command judge")
    labels = label_demo(rundir, out / "labels")
    step("scoring")
    score = score_run(rundir)  # registered rules, people's labels
    (out / "score.json").write_text(json.dumps(score.as_json(), indent=2) + "\n", encoding="utf-8")
    report = _write_report(rundir, out / "report.html", score)
    return DemoResult(out=out, corpus=corpus, rundir=rundir, score=score, report=report, labels=labels, audit=audit)


def _write_report(rundir: Path, target: Path, score: ScoreResult) -> Path:
    """The HTML report, from the scores already computed (not scored a second time)."""
    from ..label.report import labels_section
    from ..report import build_report, write_html

    data = build_report(rundir, scored=score)
    write_html(data, target, labels_section(rundir, [c.name for c in data.conditions],
                                            unclear={c.name: c.unclear for c in data.conditions}))  # fmt: skip
    return target
