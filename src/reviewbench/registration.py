"""Pre-registration (SPEC 9): freeze what an experiment will be judged by, before any run.

``reviewbench register EXPERIMENT.toml --out RUNDIR`` writes ``RUNDIR/registration.json``:
the SHA-256 of the experiment file, of every prompt and guidance file, of the gates (which
hold the minimum controls and the evidence rules), the seeds, the corpus's
``gold_sha256`` and the analysis rules (tolerance, eligibility, bootstrap count). ``run``
and ``score`` recompute them and refuse to go on when any differs, unless told
``--new-version``, which appends a new benchmark version to the file instead of silently
mixing two.

Registration that cannot be gamed: a run directory that already holds runs is refused
(``--late`` records it as *not* pre-registered, and score and report say so), and a gates
file that grants approval, merge rights or security sign-off is refused at load.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._version import __version__
from .errors import UsageError
from .review.experiment import Experiment
from .review.prompt import load_prompt
from .review.runner import check_conditions
from .score.gates import load_gates
from .store.corpus import read_corpus
from .store.runs import RUNS_DB, RunStore

__all__ = ["DEFAULT_RULES", "REGISTRATION_FILE", "check_registration", "fingerprint", "register"]

REGISTRATION_FILE = "registration.json"
#: The analysis rules a registration freezes, with their defaults.
DEFAULT_RULES = {"tolerance": 3, "include_unvalidated": False, "bootstrap": 10_000}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint(experiment: Experiment, gates_path: Path | None, bootstrap_seed: int,
                rules: dict | None = None) -> dict:  # fmt: skip
    """Everything a registration freezes, as hashes (and the seeds and rules themselves)."""
    prompts, guidance = {}, {}
    for condition in experiment.config.condition:
        prompts[condition.prompt] = load_prompt(condition.prompt, experiment.base).sha256
        if condition.guidance:
            path = (experiment.base / condition.guidance).resolve()
            try:
                guidance[condition.guidance] = _sha(path.read_bytes())
            except OSError as exc:
                raise UsageError(f"guidance file {path} cannot be read: {exc}") from None
    corpus = read_corpus(experiment.corpus_path)
    _, _, gates_sha = load_gates(gates_path, strata={g.stratum for g in corpus.gold})
    return {
        "experiment": {"path": str(experiment.path), "sha256": _sha(experiment.path.read_bytes())},
        "prompts": prompts,
        "guidance": guidance,
        "gates": {"path": str(gates_path.resolve()) if gates_path else "built-in", "sha256": gates_sha},
        "seeds": {"experiment": experiment.config.seed, "bootstrap": bootstrap_seed},
        "corpus": {"path": str(corpus.path), "gold_sha256": corpus.meta.gold_sha256},
        "rules": {**DEFAULT_RULES, **(rules or {})},
    }


class _Checked(BaseModel):
    # Only checks the shape of a file a person may have edited; the dict is what is used.
    model_config = ConfigDict(extra="allow")


class _Hashed(_Checked):
    sha256: str


class _Gates(_Hashed):
    path: str


class _Seeds(_Checked):
    experiment: int
    bootstrap: int = Field(ge=0)


class _Corpus(_Checked):
    gold_sha256: str


class _Frozen(_Checked):
    experiment: _Hashed
    prompts: dict[str, str]
    guidance: dict[str, str]
    gates: _Gates
    seeds: _Seeds
    corpus: _Corpus


class _Version(_Checked):
    version: int
    registered_at: str
    frozen: _Frozen


class _Registration(_Checked):
    versions: list[_Version] = Field(min_length=1)


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        _Registration.model_validate(data)
    except (OSError, ValueError, ValidationError) as exc:
        detail = ""
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            detail = f" ({'.'.join(str(p) for p in first['loc'])}: {first['msg']})"
        raise UsageError(f"{path} is not a readable registration{detail}; restore it or register anew") from None
    return data


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".registration.", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _recorded_runs(rundir: Path) -> int:
    if not (rundir / RUNS_DB).is_file():
        return 0
    store = RunStore(rundir / RUNS_DB)
    try:
        return sum(1 for _ in store.runs())
    finally:
        store.close()


def register(experiment: Experiment, rundir: Path, gates_path: Path | None, bootstrap_seed: int = 0,
             new_version: bool = False, *, rules: dict | None = None, late: bool = False,
             owner: str | None = None, approver: str | None = None) -> dict:  # fmt: skip
    """Write (or extend, with ``new_version``) ``RUNDIR/registration.json``; return it.

    Args:
        rules: analysis rules to freeze (``DEFAULT_RULES`` keys); missing ones take the default.
        late: accept a run directory that already holds runs, recorded as not pre-registered.
        owner, approver: names recorded with the version, when given.

    Raises:
        UsageError: a condition could never run (sarif without the tree, a bad URL); a
            registration exists already and ``new_version`` is false; the run
            directory already holds runs and ``late`` is false; the bootstrap seed is
            negative.
    """
    if bootstrap_seed < 0:
        raise UsageError(f"the bootstrap seed must be 0 or more, not {bootstrap_seed}")
    # Nothing is frozen that `run` would refuse (but keys belong to the machine that runs).
    check_conditions(experiment.path, [(c.name, c.reviewer, c.context) for c in experiment.config.condition],
                     keys=False)  # fmt: skip
    path = rundir / REGISTRATION_FILE
    data = {"versions": []}
    if path.exists():
        if not new_version:
            raise UsageError(f"{path} exists: the experiment is already registered (pass --new-version to "
                             "register a new benchmark version)")  # fmt: skip
        data = _read(path)
    recorded = _recorded_runs(rundir)
    if recorded and not late:
        raise UsageError(f"{rundir} already holds {recorded} runs: registering now would not be pre-registration "
                         "(pass --late to record it as registered after runs)")  # fmt: skip
    pre_registered = recorded == 0  # a version registered after runs were seen is not pre-registration
    version = {
        "version": len(data["versions"]) + 1,
        "registered_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "tool_version": __version__,
        "pre_registered": pre_registered,
        "frozen": fingerprint(experiment, gates_path, bootstrap_seed, rules),
    }
    if owner:
        version["owner"] = owner
    if approver:
        version["approver"] = approver
    data["versions"].append(version)
    _write(path, data)
    return data


def check_registration(experiment: Experiment, rundir: Path, gates_path: Path | None = None,
                       bootstrap_seed: int | None = None, new_version: bool = False,
                       rules: dict | None = None) -> dict | None:  # fmt: skip
    """Verify the current inputs against the latest registered version, if any.

    Returns the registration summary for the record (None when the run is unregistered).
    ``gates_path``/``bootstrap_seed`` None, and a rule absent from ``rules`` or None, mean
    "as registered".

    Raises:
        UsageError: something registered changed (names what), unless ``new_version``,
            which registers the current inputs as a new version instead.
    """
    path = rundir / REGISTRATION_FILE
    if not path.exists():
        return None
    data = _read(path)
    latest = data["versions"][-1]
    frozen = latest["frozen"]
    if gates_path is None and frozen["gates"]["path"] != "built-in":
        gates_path = Path(frozen["gates"]["path"])
    seed = frozen["seeds"]["bootstrap"] if bootstrap_seed is None else bootstrap_seed
    registered_rules = {**DEFAULT_RULES, **frozen.get("rules", {})}
    wanted = {**registered_rules, **{k: v for k, v in (rules or {}).items() if v is not None}}
    current = fingerprint(experiment, gates_path, seed, wanted)
    changed = [key for key in ("experiment", "prompts", "guidance", "gates", "seeds", "corpus")
               if _comparable(current[key], key) != _comparable(frozen[key], key)]  # fmt: skip
    changed += [f"{k} ({registered_rules[k]} registered, {wanted[k]} asked)" for k in DEFAULT_RULES
                if wanted[k] != registered_rules[k]]  # fmt: skip
    if changed:
        if not new_version:
            raise UsageError(f"{', '.join(changed)} changed since registration (version {latest['version']} in "
                             f"{path}); results would not be comparable: restore it, or pass --new-version")  # fmt: skip
        data = register(experiment, rundir, gates_path, seed, new_version=True, rules=wanted, late=True)
        latest = data["versions"][-1]
    out = {"file": str(path), "version": latest["version"], "registered_at": latest["registered_at"],
           "verified": True, "pre_registered": latest.get("pre_registered", True),
           "gates": latest["frozen"]["gates"], "seeds": latest["frozen"]["seeds"],
           "rules": {**DEFAULT_RULES, **latest["frozen"].get("rules", {})}}  # fmt: skip
    for who in ("owner", "approver"):
        if latest.get(who):
            out[who] = latest[who]
    return out


def _comparable(value: dict, key: str) -> object:
    # Paths may move with the checkout; what must not change is content.
    if key in ("experiment", "corpus"):
        return {k: v for k, v in value.items() if k != "path"}
    if key == "gates":
        return value["sha256"]
    return value
