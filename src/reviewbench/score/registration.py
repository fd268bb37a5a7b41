"""Pre-registration: freeze what an experiment will be judged by, before any run.

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

Tamper evidence: the SHA-256 of ``registration.json`` itself is recorded in ``runs.sqlite``
(meta ``registration_sha256``) when the first run starts, or when ``register --late`` writes
the file beside runs; only reviewbench moves it (``--new-version``). ``run``, ``score`` and
``report`` refuse a file that no longer matches, and print the digest so it can be
published. A run directory whose runs began before the digest was recorded (an older
reviewbench) is never sealed after the fact: its digest reads "not recorded".
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._version import __version__
from ..config.gates import Gates
from ..config.registration import RegistrationPlan
from ..config.reviewers import network_policy
from ..config.rules import DEFAULT_RULES
from ..errors import IntegrityError, UsageError
from ..review.experiment import Experiment
from ..review.prompt import load_prompt
from ..review.runner import check_conditions, check_data_controls
from ..store.corpus import read_corpus
from ..store.runs import REGISTRATION_FILE, REGISTRATION_SHA256, RUNS_DB, RunStore
from .gates import load_gates
from .registry import corpus_names

__all__ = ["DEFAULT_RULES", "REGISTRATION_FILE", "SEAL_KEY", "check_registration", "fingerprint", "latest_version",
           "protocol_record", "register", "registered_summary", "registered_versions", "version_summary"]

#: The ``runs.sqlite`` meta key holding the SHA-256 of ``registration.json``.
SEAL_KEY = REGISTRATION_SHA256


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint(experiment: Experiment, gates_path: Path | None, bootstrap_seed: int,
                rules: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """Everything a registration freezes, as hashes (and the seeds and rules themselves)."""
    prompts, guidance = {}, {}
    for condition in experiment.config.condition:
        prompts[condition.prompt] = load_prompt(condition.prompt, experiment.base).sha256
        named = [condition.guidance] if condition.guidance else []
        named += [g.file for g in getattr(condition, "guidance_files", ())]  # the treatment's files too
        for name in named:
            path = (experiment.base / name).resolve()
            try:
                guidance[name] = _sha(path.read_bytes())
            except OSError as exc:
                raise UsageError(f"guidance file {path} cannot be read: {exc}") from None
    corpus = read_corpus(experiment.corpus_path)
    gates, gates_text, gates_sha = load_gates(gates_path, strata=corpus_names(corpus.gold))
    return {
        "experiment": {"path": str(experiment.path), "sha256": _sha(experiment.path.read_bytes())},
        "prompts": prompts,
        "guidance": guidance,
        # The table itself too: a version is scored by it after the file, or the built-in
        # table of a later reviewbench, has changed.
        "gates": {"path": str(gates_path.resolve()) if gates_path else "built-in", "sha256": gates_sha,
                  "text": gates_text},
        "seeds": {"experiment": experiment.config.seed, "bootstrap": bootstrap_seed},
        "corpus": {"path": str(corpus.path), "gold_sha256": corpus.meta.gold_sha256},
        "rules": {**DEFAULT_RULES, **(rules or {})},
        "rubric": _rubric(experiment),
        # What each command condition may reach (the experiment's hash covers it; this says it):
        # none, an allowlist of host:port pairs, or unrestricted (network = true, the opt-out).
        "network": {c.name: policy for c in experiment.config.condition
                    if (policy := network_policy(c.reviewer)) is not None},
        "protocol": protocol_record(experiment, gates),
    }


def protocol_record(experiment: Experiment, gates: Gates) -> dict[str, Any]:
    """The experiment's ``[registration]`` table as the record freezes it: every field, null
    or empty where the table says nothing (so a reader sees what was not stated), the retry
    rule from the experiment, and the severity policy's SHA-256 (its file's, read now).

    Raises:
        UsageError: a hypothesis names a gate the gates file does not hold, or the severity
            policy's file cannot be read.
    """
    plan = experiment.config.registration or RegistrationPlan()
    known = {t.name for t in (*gates.tier, *gates.veto, gates.fallback)} | {c.name for c in gates.compare}
    for hypothesis in plan.hypotheses:
        unknown = [g for g in hypothesis.gates if g not in known]
        if unknown:
            raise UsageError(f"{experiment.path}: hypothesis {hypothesis.id}: no gate named {', '.join(unknown)} in "
                             f"the gates (tiers, vetoes, comparisons: {', '.join(sorted(known))})")  # fmt: skip
    out = plan.model_dump(mode="json")
    policy = plan.severity_policy
    if policy is not None:
        if policy.file is not None:
            path = (experiment.base / policy.file).resolve()
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise UsageError(f"severity policy file {path} cannot be read: {exc.strerror or exc}") from None
        else:
            data = (policy.text or "").encode()
        out["severity_policy"] = {**out["severity_policy"], "sha256": _sha(data)}
    config = experiment.config
    out["retry_rule"] = {"max_retries": config.max_retries, "retry_on": config.retry_on}
    return out


def _rubric(experiment: Experiment) -> dict[str, Any]:
    """The labelling rubric the experiment names (its file's SHA-256 and version), or the built-in one."""
    from ..evidence.rubric import rubric_fingerprint

    return rubric_fingerprint(experiment.base, experiment.config.rubric)


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


def _read(path: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        _Registration.model_validate(data)
    except (OSError, ValueError, ValidationError) as exc:
        detail = ""
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            detail = f" ({'.'.join(str(p) for p in first['loc'])}: {first['msg']})"
        raise UsageError(f"{path} is not a readable registration{detail}; restore it or register anew") from None
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".registration.", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _store_state(rundir: Path) -> tuple[int, str | None]:
    """How many runs ``rundir`` holds, and the registration digest its store recorded."""
    if not (rundir / RUNS_DB).is_file():
        return 0, None
    store = RunStore(rundir / RUNS_DB)
    try:
        return sum(store.state_counts().values()), store.get_meta(SEAL_KEY)
    finally:
        store.close()


def _seal(rundir: Path, digest: str) -> None:
    """Record ``digest`` as the registration's in ``rundir``'s store (created if need be)."""
    store = RunStore(rundir / RUNS_DB, create=True)
    try:
        store.set_meta({SEAL_KEY: digest})
    finally:
        store.close()


def _check_seal(path: Path, recorded: str | None) -> str | None:
    """The SHA-256 of the registration at ``path`` (None: absent), refused if it differs
    from the one the store ``recorded``.

    Raises:
        IntegrityError: the file changed, or is missing, since its digest was recorded.
    """
    if not path.exists():
        if recorded:
            raise IntegrityError(f"{path} is missing, but the runs beside it recorded a registration (SHA-256 "
                                 f"{recorded}); restore it")  # fmt: skip
        return None
    try:
        digest = _sha(path.read_bytes())
    except OSError as exc:
        raise UsageError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if recorded and digest != recorded:
        raise IntegrityError(f"{path} changed since the runs recorded it (SHA-256 {recorded[:12]}… recorded, "
                             f"{digest[:12]}… now); a registration is never edited by hand: restore it")  # fmt: skip
    return digest


def _latest(rundir: Path) -> tuple[Path, dict[str, Any], str, str | None] | None:
    """(file, latest version, its digest, the digest the store recorded), the file verified."""
    found = _verified(rundir)
    return (found[0], found[1][-1], found[2], found[3]) if found else None


def _verified(rundir: Path) -> tuple[Path, list[dict[str, Any]], str, str | None] | None:
    path = rundir / REGISTRATION_FILE
    _, sealed = _store_state(rundir)
    digest = _check_seal(path, sealed)
    if digest is None:
        return None
    return path, _read(path)["versions"], digest, sealed


def registered_versions(rundir: Path) -> list[dict[str, Any]]:
    """Every registered version of ``rundir``, oldest first ([] when not registered), once
    the file is verified to be the one its runs recorded.

    Raises:
        IntegrityError: the file changed or went missing since the runs recorded it.
        UsageError: the file is not a readable registration.
    """
    found = _verified(rundir)
    return found[1] if found else []


def latest_version(rundir: Path) -> dict[str, Any] | None:
    """The latest registered version of ``rundir`` (None: not registered), verified as
    :func:`registered_versions`: what ``rerun`` repeats."""
    versions = registered_versions(rundir)
    return versions[-1] if versions else None


def register(experiment: Experiment, rundir: Path, gates_path: Path | None, bootstrap_seed: int = 0,
             new_version: bool = False, *, rules: dict[str, Any] | None = None, late: bool = False,
             owner: str | None = None, approver: str | None = None) -> dict[str, Any]:  # fmt: skip
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
        IntegrityError: the existing registration is not the file the runs recorded.
    """
    if bootstrap_seed < 0:
        raise UsageError(f"the bootstrap seed must be 0 or more, not {bootstrap_seed}")
    # Nothing is frozen that `run` would refuse (but keys belong to the machine that runs).
    check_conditions(experiment.path, [(c.name, c.reviewer, c.context) for c in experiment.config.condition],
                     keys=False)  # fmt: skip
    check_data_controls(experiment)
    owner = _owner(experiment, owner)
    path = rundir / REGISTRATION_FILE
    data: dict[str, Any] = {"versions": []}
    held, sealed = _store_state(rundir)
    existed = _check_seal(path, sealed) is not None  # an edited file gets no new version on top
    if existed:
        if not new_version:
            raise UsageError(f"{path} exists: the experiment is already registered (pass --new-version to "
                             "register a new benchmark version)")  # fmt: skip
        data = _read(path)
    if held and not late:
        raise UsageError(f"{rundir} already holds {held} runs: registering now would not be pre-registration "
                         "(pass --late to record it as registered after runs)")  # fmt: skip
    pre_registered = held == 0  # a version registered after runs were seen is not pre-registration
    version = {
        "version": len(data["versions"]) + 1,
        # Milliseconds, as runs' started_at: which runs a version may score is read from them.
        "registered_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
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
    # Beside a store, the file is sealed now: a seal moves with the tool's own writes, and a
    # first registration beside runs (--late) is sealed as written. A file of an older
    # store that was never sealed stays so (its earlier versions cannot be vouched for).
    if sealed or (not existed and (rundir / RUNS_DB).is_file()):
        _seal(rundir, _sha(path.read_bytes()))
    return data


def _owner(experiment: Experiment, given: str | None) -> str | None:
    """The decision owner: ``--owner`` or the table's, which must agree when both are given.

    Raises:
        UsageError: both are given and differ.
    """
    plan = experiment.config.registration
    table = plan.owner if plan is not None else None
    if given and table and given != table:
        raise UsageError(f"--owner {given!r} is not the owner {experiment.path} registers ({table!r}): give one")
    return given or table


def check_registration(experiment: Experiment, rundir: Path, gates_path: Path | None = None,
                       bootstrap_seed: int | None = None, new_version: bool = False,
                       rules: dict[str, Any] | None = None) -> dict[str, Any] | None:  # fmt: skip
    """Verify the file, then the current inputs against the latest registered version, if any.

    Returns the registration summary for the record (None when the run is unregistered),
    with the file's ``sha256`` and whether the store recorded it (``sha256_recorded``).
    ``gates_path``/``bootstrap_seed`` None, and a rule absent from ``rules`` or None, mean
    "as registered".

    Raises:
        IntegrityError: ``registration.json`` is not the file whose digest the store
            recorded (edited by hand, or deleted).
        UsageError: something registered changed (names what), unless ``new_version``,
            which registers the current inputs as a new version instead.
    """
    path = rundir / REGISTRATION_FILE
    _, sealed = _store_state(rundir)
    digest = _check_seal(path, sealed)
    if digest is None:
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
    changed += _rubric_changed(current, frozen)
    changed += [f"{k} ({registered_rules[k]} registered, {wanted[k]} asked)" for k in DEFAULT_RULES
                if wanted[k] != registered_rules[k]]  # fmt: skip
    if "protocol" in frozen and _policy_sha(current) != _policy_sha(frozen):  # the experiment's hash covers the rest
        changed.append("severity policy file")
    if changed:
        if not new_version:
            raise UsageError(f"{', '.join(changed)} changed since registration (version {latest['version']} in "
                             f"{path}); results would not be comparable: restore it, or pass --new-version")  # fmt: skip
        plan = experiment.config.registration
        kept = None if plan is not None and plan.owner else latest.get("owner")  # the owner stays the owner
        data = register(experiment, rundir, gates_path, seed, new_version=True, rules=wanted, late=True, owner=kept)
        latest = data["versions"][-1]
        _, sealed = _store_state(rundir)
        digest = _sha(path.read_bytes())
    return _summary(path, latest, digest, sealed)


def _policy_sha(frozen: dict[str, Any]) -> str | None:
    policy = (frozen.get("protocol") or {}).get("severity_policy")
    return policy.get("sha256") if policy else None


def _people_and_protocol(version: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """``out`` with the version's owner, approver and registered protocol, when it has them."""
    for who in ("owner", "approver"):
        if version.get(who):
            out[who] = version[who]
    if "protocol" in version["frozen"]:  # registrations before the [registration] table did not say
        out["protocol"] = version["frozen"]["protocol"]
    return out


def _rubric_changed(current: dict[str, Any], frozen: dict[str, Any]) -> list[str]:
    """``["rubric"]`` when the labelling rubric differs from the registered one (a version
    registered before rubrics were registered had the built-in one)."""
    from ..evidence.rubric import BUILT_IN

    registered = frozen.get("rubric") or BUILT_IN.as_dict()
    return ["rubric"] if current["rubric"].get("sha256") != registered.get("sha256") else []


def _summary(path: Path, latest: dict[str, Any], digest: str, sealed: str | None) -> dict[str, Any]:
    out = {"file": str(path), "version": latest["version"], "registered_at": latest["registered_at"],
           "verified": True, "sha256": digest, "sha256_recorded": sealed is not None,
           "pre_registered": latest.get("pre_registered", True),
           "gates": latest["frozen"]["gates"], "seeds": latest["frozen"]["seeds"],
           "rules": {**DEFAULT_RULES, **latest["frozen"].get("rules", {})}}  # fmt: skip
    _people_and_protocol(latest, out)
    if "network" in latest["frozen"]:  # registrations before egress by allowlist did not say
        out["network"] = latest["frozen"]["network"]
    return out


def registered_summary(rundir: Path) -> dict[str, Any] | None:
    """The registration summary of ``rundir`` as :func:`check_registration` gives it, with
    the file verified but not today's inputs: for reading runs as history (``compare``,
    ``gate``), whose experiment file or prompts may have been edited since (a rerun after a
    prompt edit). ``inputs_checked`` is False.

    Raises:
        IntegrityError: the file changed or went missing since the runs recorded it.
        UsageError: the file is not a readable registration.
    """
    found = _latest(rundir)
    return {**_summary(*found), "inputs_checked": False} if found else None


def _comparable(value: dict[str, Any], key: str) -> object:
    # Paths may move with the checkout; what must not change is content.
    if key in ("experiment", "corpus"):
        return {k: v for k, v in value.items() if k != "path"}
    if key == "gates":
        return value["sha256"]
    return value


def version_summary(rundir: Path, number: int) -> dict[str, Any]:
    """The summary :func:`check_registration` gives, for version ``number`` read as history
    (``historical``): what the runs that ran under it are scored by. Today's experiment file
    is not compared: its runs recorded their prompts and guidance.

    Raises:
        UsageError: ``rundir`` is not registered, or has no version ``number``.
        IntegrityError: the file changed or went missing since the runs recorded it.
    """
    path = rundir / REGISTRATION_FILE
    _, sealed = _store_state(rundir)
    digest = _check_seal(path, sealed)
    if digest is None:
        raise UsageError(f"{rundir} is not registered: --version names a registered benchmark version")
    versions = _read(path)["versions"]
    found = [v for v in versions if v.get("version") == number]
    if not found:
        raise UsageError(f"{path} has no version {number} (versions 1 to {len(versions)})")
    chosen = found[0]
    out = {"file": str(path), "version": number, "registered_at": chosen["registered_at"], "verified": True,
           "sha256": digest, "sha256_recorded": sealed is not None, "historical": True,
           "latest": number == versions[-1].get("version"),
           "pre_registered": chosen.get("pre_registered", True), "gates": chosen["frozen"]["gates"],
           "seeds": chosen["frozen"]["seeds"], "rules": {**DEFAULT_RULES, **chosen["frozen"].get("rules", {})}}  # fmt: skip
    return _people_and_protocol(chosen, out)
