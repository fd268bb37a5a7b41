"""``reviewbench rerun``: the registered experiment of a run directory, again, into a new one.

The cadence the articles ask for ("re-run the audit after any prompt edit, whenever the
endpoint's model string changes, and once per quarter") as one command: the experiment
file as it is now (edited prompts and all), on the same corpus, registered afresh in the
new directory with the same gates, bootstrap seed and analysis rules, then run; ready for
``compare`` and ``gate`` against the old one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import click

from ._output import console, err_console

__all__ = ["rerun_command"]


def _sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@click.command("rerun")
@click.argument("rundir", type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="The new run directory (registered there, then run).")
@click.option("--owner", help="Who owns the new registration (recorded).")
@click.option("--carry-labels", is_flag=True,
              help="Then carry RUNDIR's human labels to OUT's identical claims ('label carry').")
@click.option("--json", "as_json", is_flag=True, help="Print the run summary as JSON.")
def rerun_command(rundir: Path, out: Path, owner: str | None, carry_labels: bool, as_json: bool) -> None:
    """Repeat the registered experiment of RUNDIR into OUT: the experiment file as it is now
    (a prompt edit, a new model string), on the same corpus, registered in OUT with the same
    gates, bootstrap seed and rules as RUNDIR's latest version, then run. Refused when
    RUNDIR is not registered, or when its corpus or gates changed since. Then:
    'reviewbench gate OUT --baseline RUNDIR'. With --carry-labels, people's labels of
    RUNDIR's claims are carried to OUT's identical claims once the runs are in."""
    from ..errors import UsageError
    from ..evidence.store import LABELS_DB
    from ..review.experiment import load_experiment
    from ..score.gates import load_gates
    from ..score.registration import latest_version, register
    from ..score.registry import corpus_names
    from ..store.corpus import read_corpus
    from .run import run_loaded

    if carry_labels and not (rundir / LABELS_DB).is_file():
        raise UsageError(f"{rundir} has no labels ({LABELS_DB}) to carry; rerun without --carry-labels")
    version = latest_version(rundir)
    if version is None:
        raise UsageError(f"{rundir} is not registered: rerun repeats a registered experiment "
                         "('reviewbench register' it, or 'reviewbench run' anew)")  # fmt: skip
    frozen = version["frozen"]
    experiment_path = Path(frozen["experiment"]["path"])
    if not experiment_path.is_file():
        raise UsageError(f"{rundir} was registered from {experiment_path}, which is gone; restore it")
    experiment = load_experiment(experiment_path)
    corpus = read_corpus(experiment.corpus_path)
    if corpus.meta.gold_sha256 != frozen["corpus"]["gold_sha256"]:
        raise UsageError(f"the corpus {corpus.path} changed since {rundir} was registered (gold "
                         f"{frozen['corpus']['gold_sha256'][:12]}… then, {corpus.meta.gold_sha256[:12]}… now): a "
                         "rerun repeats the experiment on the same cases")  # fmt: skip
    gates = None if frozen["gates"]["path"] == "built-in" else Path(frozen["gates"]["path"])
    if gates is not None and _sha(gates) is None:
        raise UsageError(f"{rundir}'s gates {gates} are gone; restore them")
    _, _, gates_sha = load_gates(gates, strata=corpus_names(corpus.gold))
    if gates_sha != frozen["gates"]["sha256"]:
        raise UsageError(f"the gates {frozen['gates']['path']} changed since {rundir} was registered: a rerun keeps "
                         "the same gates")  # fmt: skip
    data = register(experiment, out, gates, frozen["seeds"]["bootstrap"], rules=dict(frozen["rules"]), owner=owner)
    now = data["versions"][-1]["frozen"]
    edited = [] if now["experiment"]["sha256"] == frozen["experiment"]["sha256"] else [f"experiment {experiment_path}"]
    edited += [f"prompt {name}" for name, sha in now["prompts"].items() if frozen["prompts"].get(name) != sha]
    edited += [f"guidance {name}" for name, sha in now["guidance"].items() if frozen["guidance"].get(name) != sha]
    if not as_json:
        console.print(f"rerun of {rundir} (version {version['version']} of {version['registered_at']}) registered "
                      f"in {out}; changed since: {', '.join(edited) or 'nothing'}", markup=False)  # fmt: skip
    run_loaded(experiment, out, as_json=as_json)
    if carry_labels:
        from ..label.carry import carry_labels as carry

        result = carry(rundir, out)
        # Beside JSON on stdout, the line goes to stderr, unwrapped either way.
        (err_console if as_json else console).print(
            f"carried {result.written} labels of {rundir} to {result.claims} of {result.target_claims} claims of "
            f"{out}; {result.unlabelled} claims have none ('reviewbench label carry' says more)",
            markup=False, soft_wrap=True)  # fmt: skip
    elif (rundir / LABELS_DB).is_file() and not as_json:
        console.print(f"labels: reviewbench label carry {rundir} {out}   # people's labels of identical claims",
                      markup=False)  # fmt: skip
    if not as_json:
        console.print(f"next: reviewbench gate {out} --baseline {rundir}", markup=False)
