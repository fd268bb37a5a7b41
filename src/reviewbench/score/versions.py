"""Which runs a benchmark version scores: the runs started under it, and no others.

Gates or rules changed after the results were seen make a new benchmark version
(``--new-version``), and a post-run rewrite needs new runs: a version scores only the runs
started after it was registered (and before the next one was), so lowered gates never grant
a tier on the runs that prompted them. The older runs keep the version they ran under
(``score --version N`` scores them by its gates and rules, from the registration's own
copy of the table when the file or the built-in table has changed since). The first
version also covers
the runs recorded before it (a late registration: they ran under none, and it says
"registered after runs"). A run's version is read from its ``started_at`` against each
version's ``registered_at``; a run with no start time counts as the oldest.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._text import printable
from ..config.gates import Gates
from ..errors import UsageError
from ..records import RunRow
from .gates import load_gates, parse_gates
from .result import RegistrationSummary

__all__ = ["check_past_version", "registered_gates", "scoped_runs", "version_of", "version_phrase", "version_runs"]


def _instant(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def version_of(started_at: str | None, versions: list[dict[str, Any]]) -> int:
    """The version a run started at ``started_at`` ran under (``versions`` oldest first)."""
    number = int(versions[0]["version"])
    if started_at is None:
        return number
    start = _instant(started_at)
    for version in versions[1:]:
        if _instant(version["registered_at"]) <= start:
            number = int(version["version"])
    return number


def scoped_runs(runs: list[RunRow], rundir: Path, registration: dict[str, Any]) -> tuple[list[RunRow], RegistrationSummary]:
    """The runs of the version ``registration`` (a summary as ``score/registration.py``
    gives it) names, and the summary, typed, with ``scored_runs`` (``version``, ``runs``,
    ``since``/``until`` its window, ``other_versions``: runs by the version they ran under
    instead)."""
    from .registration import registered_versions

    versions = registered_versions(rundir) or []
    number = registration["version"]
    by_version = Counter(version_of(r.started_at, versions) for r in runs)
    later = [v["registered_at"] for v in versions if v["version"] == number + 1]
    scoped = {
        "version": number,
        "runs": by_version.pop(number, 0),
        "since": registration["registered_at"] if number > versions[0]["version"] else None,
        "until": later[0] if later else None,
        "other_versions": {str(k): n for k, n in sorted(by_version.items())},
    }
    # The registered table's own copy stays in the file: the summary names it by path and hash.
    gates = {k: v for k, v in registration["gates"].items() if k != "text"}
    summary = RegistrationSummary.model_validate({**registration, "gates": gates, "scored_runs": scoped})
    return version_runs(runs, rundir, number), summary


def version_runs(runs: list[RunRow], rundir: Path, number: int) -> list[RunRow]:
    """The runs of ``runs`` that started under registered version ``number``."""
    from .registration import registered_versions

    versions = registered_versions(rundir) or []
    return [r for r in runs if version_of(r.started_at, versions) == number]


def check_past_version(number: int, asked: dict[str, Any], seed: int | None, new_version: bool) -> None:
    """Refuse what a version read as history cannot take: its seed and rules are fixed (its
    gates too: :func:`registered_gates` checks a ``--gates`` file against them).

    Raises:
        UsageError: ``--seed``, a rule or ``--new-version`` beside ``--version``.
    """
    given = [f"--{k.replace('_', '-')}" for k, v in asked.items() if v is not None]
    given += ["--seed"] if seed is not None else []
    if new_version:
        given.append("--new-version")
    if given:
        raise UsageError(f"version {number} is scored by its own registered gates and rules: drop "
                         f"{', '.join(given)} (a change is a new version, with runs of its own)")  # fmt: skip


def registered_gates(rundir: Path, registration: RegistrationSummary, given: Path | None,
                     strata: set[str]) -> tuple[Gates, str]:  # fmt: skip
    """The gates version ``registration`` registered, and their SHA-256: ``given`` (the
    ``--gates`` file), else the registered file or built-in table while it still hashes as
    registered, else the registration's own copy of the table (a later reviewbench's
    built-in table, or an edited file, is never read as the old one).

    Raises:
        UsageError: ``given`` is another table; or the table changed and the registration
            holds no copy of it (an older reviewbench's: pass the old table as --gates).
    """
    from .registration import registered_versions

    number, frozen = registration.version, registration.gates
    registered = frozen.sha256
    if given is not None:
        gates, _, sha = load_gates(given, strata=strata)
        if sha != registered:
            raise UsageError(f"--gates {given} is not the table version {number} registered (SHA-256 {sha[:12]}…, "
                             f"registered {registered[:12]}…): a version is scored by its own gates; a change is a "
                             "new version, with runs of its own")  # fmt: skip
        return gates, sha
    path = None if frozen.path == "built-in" else Path(frozen.path)
    try:
        gates, _, sha = load_gates(path, strata=strata)
    except UsageError:  # the file is gone: its copy may still be in the registration
        sha = ""
    if sha == registered:
        return gates, sha
    [version] = [v for v in registered_versions(rundir) or [] if v["version"] == number]
    text = version["frozen"]["gates"].get("text")
    if text is None or hashlib.sha256(text.encode()).hexdigest() != registered:
        raise UsageError(f"the gates {frozen.path} changed since version {number} was registered, and the "
                         "registration holds no copy: pass the registered table as --gates")  # fmt: skip
    return parse_gates(text, f"version {number}'s registered gates", strata), registered


def version_phrase(registration: RegistrationSummary | None) -> str:
    """"version 2, registered after runs, owner Ana" (or "not registered"): what a decision
    line says; a registration without a decision owner says so."""
    if registration is None:
        return "not registered"
    when = "pre-registered" if registration.pre_registered else "registered after runs"
    owner = f"owner {printable(registration.owner)}" if registration.owner else "no decision owner"
    return f"version {registration.version}, {when}, {owner}"
