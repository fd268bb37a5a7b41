"""The Python environment tests run in: the user's own, or one built per corpus.

By default the tests run in the user's active environment (``$VIRTUAL_ENV``, else
``python3`` on ``PATH``), never reviewbench's own interpreter: a pipx or venv install of
reviewbench must not test the project against reviewbench's dependencies.

``validate --setup CMD`` builds an isolated environment instead, once per corpus: a fresh
virtual environment (``uv venv``; ``python -m venv`` when uv is unavailable), then CMD run
inside it (``VIRTUAL_ENV`` set, its ``bin`` first on ``PATH``, network allowed) in a
scratch copy of the repository at the mined HEAD. ``--setup auto`` installs the project
editable with its test extras, dependency groups or test requirements files, and pytest.
The environment lives under ``CORPUS/envs/KEY/``, KEY the hash of CMD, the base
interpreter and the dependency files at that HEAD: a second run with the same inputs
reuses it. ``environment.json`` there is written last and marks it complete. Every test
run then happens inside it as well (``VIRTUAL_ENV`` and ``PATH``: :func:`activation`), so
that a ``--test-cmd`` saying ``python`` runs the environment's interpreter.
"""

from __future__ import annotations

import configparser
import fcntl
import glob
import hashlib
import os
import shlex
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..config import Network
from ..errors import GitError, PrerequisiteError, SetupFailed, UsageError
from ..git.repo import GIT, git_output
from ..git.scratch import ScratchClone
from ..records import TestEnvironment
from ..sandbox import Sandbox, probe_output
from .warm import parse_launch, split_command

__all__ = [
    "AUTO",
    "ENV_DIR",
    "BuiltEnvironment",
    "PYTEST_MAJORS",
    "auto_setup_command",
    "build_environment",
    "DEFAULT_TEST_FILES",
    "cache_home",
    "chosen_python",
    "default_python",
    "describe_interpreter",
    "interpreter_of",
    "pytest_for",
    "pytest_settings",
    "require_supported",
    "test_file_patterns",
    "locale_of_runs",
    "src_layout",
]

#: The oldest Python the tests may run under: the probe plugin, the warm server and the
#: package listing are written for it (old commits need old interpreters).
OLDEST_PYTHON = (3, 7)

AUTO = "auto"
ENV_DIR = "envs"
MARKER = "environment.json"
#: Seconds the setup command may take (dependency installs can be slow).
SETUP_TIMEOUT_S = 1800.0
_TEST_NAMES = ("test", "tests", "testing", "dev")
_REQUIREMENT_FILES = (
    "requirements-test.txt", "requirements-tests.txt", "requirements_test.txt", "test-requirements.txt",
    "test_requirements.txt", "requirements-dev.txt", "requirements_dev.txt", "dev-requirements.txt",
    "requirements/test.txt", "requirements/tests.txt", "requirements/testing.txt", "requirements/dev.txt",
    "tests/requirements.txt",
)  # fmt: skip
#: Version and distributions of an interpreter, on any Python from 3.7 (which lacks
#: ``importlib.metadata``: the ``importlib_metadata`` backport pytest brings, else
#: ``pkg_resources``).
_LIST_PACKAGES = (
    "import sys\n"
    "try:\n    import importlib.metadata as m\n"
    "except ImportError:\n"
    "    try:\n        import importlib_metadata as m\n"
    "    except ImportError:\n        m = None\n"
    "if m is not None:\n"
    "    names = sorted({(d.metadata['Name'] or '?').lower() + '==' + (d.version or '?') for d in m.distributions()})\n"
    "else:\n"
    "    import pkg_resources\n"
    "    names = sorted({d.project_name.lower() + '==' + d.version for d in pkg_resources.working_set})\n"
    "print(sys.version.split()[0]); print(*names, sep='\\n')"
)


def default_python() -> str:
    """The user's active environment: ``$VIRTUAL_ENV/bin/python``, else ``python3`` on PATH.

    Raises:
        UsageError: neither exists.
    """
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        candidate = Path(venv) / "bin" / "python"
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("python3")
    if found is None:
        raise UsageError(
            "no python3 on PATH and no active virtual environment: activate your project's "
            "environment, or pass --setup auto (or --test-cmd)"
        )
    return _real_interpreter(os.path.abspath(found))


def _real_interpreter(found: str) -> str:
    """What ``found`` runs: a pyenv or asdf shim is a shell script, not an interpreter."""
    real, _ = _run_interpreter(found)
    return real or found


def _run_interpreter(found: str) -> tuple[str | None, str]:
    """(the executable ``found`` runs, or None; why not, in one line)."""
    try:
        proc = subprocess.run([found, "-c", "import sys; print(sys.executable)"], capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        return None, str(getattr(exc, "strerror", None) or exc)
    real = proc.stdout.strip()
    if proc.returncode == 0 and real and os.path.isabs(real):
        return real, ""
    said = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    return None, said[0] if said else f"exit {proc.returncode}"


def chosen_python(value: str) -> str:
    """The interpreter ``--python`` names (a path, or a name on ``PATH`` such as
    ``python3.7``), as the executable it runs (a pyenv shim resolved).

    Raises:
        UsageError: there is no such interpreter, or it does not run.
    """
    found = value if os.sep in value else shutil.which(value)
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise UsageError(f"--python {value}: no such interpreter (a path, or a name on PATH such as python3.7)")
    real, why = _run_interpreter(os.path.abspath(found))
    if real is None:
        # A pyenv shim of a version that is not the active one: name the interpreter it has.
        root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
        named = sorted(glob.glob(os.path.join(glob.escape(root), "versions", "*", "bin", glob.escape(os.path.basename(value)))))
        there = f"; pyenv has {named[-1]}: pass that path" if os.sep not in value and named else ""
        raise UsageError(f"--python {value} does not run: {why}{there}")
    return real


def src_layout(root: Path) -> bool:
    """Whether the project keeps its package under ``src/`` (``src/PKG/__init__.py``)."""
    src = root / "src"
    return src.is_dir() and not src.is_symlink() and any(
        (entry / "__init__.py").is_file() for entry in src.iterdir() if entry.is_dir() and not entry.is_symlink()
    )


def describe_interpreter(python: str, *, setup: str | None = None, key: str | None = None) -> TestEnvironment | None:
    """Version and installed distributions of ``python``; None when it cannot be run."""
    output = probe_output([python, "-I", "-c", _LIST_PACKAGES], timeout=120)  # never on the host
    if not output:
        return None
    version, *packages = output.splitlines()
    pytest = next((p.split("==", 1)[1] for p in packages if p.startswith("pytest==")), None)
    return TestEnvironment(
        interpreter=python,
        python_version=version,
        packages=len(packages),
        freeze_sha256=hashlib.sha256("\n".join(packages).encode()).hexdigest(),
        setup=setup,
        key=key,
        pytest=pytest,
    )


def locale_of_runs(env_set: dict[str, str], base: dict[str, str] | None = None) -> str | None:
    """The locale test runs get: the first of LC_ALL, LC_CTYPE and LANG set (by ``env_set``,
    ``[validate] env``, else inherited), as ``NAME=VALUE``; None when none is."""
    source = {**(os.environ if base is None else base), **env_set}
    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        if source.get(name):
            return f"{name}={source[name]}"
    return None


def require_supported(environment: TestEnvironment | None) -> None:
    """Refuse, up front, an interpreter older than :data:`OLDEST_PYTHON`: every case would
    fail for reasons of reviewbench's own, not the project's.

    Raises:
        PrerequisiteError: the tests' interpreter is too old.
    """
    if environment is None:
        return
    try:
        version = tuple(int(p) for p in environment.python_version.split(".")[:2])
    except ValueError:
        return
    if version < OLDEST_PYTHON:
        oldest = ".".join(map(str, OLDEST_PYTHON))
        raise PrerequisiteError(f"{environment.interpreter} is Python {environment.python_version}: validation "
                                f"needs Python {oldest} or later; use an environment of {oldest}+ (--setup, or activate one)")


def activation(python: str) -> tuple[str, ...]:
    """``NAME=VALUE`` entries that run a command inside the environment of ``python``:
    ``VIRTUAL_ENV``, and its ``bin`` first on ``PATH``, so that a ``--test-cmd`` saying
    ``python`` or ``pytest`` runs the environment's, not the host's."""
    bin_dir = os.path.dirname(python)
    path = os.environ.get("PATH", os.defpath)
    return (f"VIRTUAL_ENV={os.path.dirname(bin_dir)}", f"PATH={bin_dir}{os.pathsep}{path}")


def interpreter_of(command: str, cwd: Path, path: str | None = None) -> str | None:
    """The interpreter a plain pytest command runs, when it can be told (``PYTHON -m
    pytest`` names it even when that interpreter lacks pytest, or is a pytest too old to
    run warm); ``path``: the runs' ``PATH``."""
    launch = parse_launch(command, cwd, path)
    if launch:
        return launch.python
    split = split_command(command, cwd, path)
    if split is not None and split[3][:2] in (["-m", "pytest"], ["-m", "py.test"]):
        return split[2]
    if split is None and (words := _words(command)) and words[1:3] in (["-m", "pytest"], ["-m", "py.test"]) \
            and "/" in words[0]:  # fmt: skip
        return os.path.abspath(os.path.join(cwd, words[0]))  # named by its path, not (yet) there
    return None


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return []


def _uv() -> str | None:
    """The uv binary installed with reviewbench (or on PATH); None when there is none."""
    try:
        import uv

        return uv.find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


#: When each major version of pytest came out (9.0: November 2025, the day approximate).
#: A commit's tests were written for the pytest of its day: ``--setup auto`` installs one
#: older than the next major (old conftests broke under pytest 8: "Marks cannot be applied
#: to fixtures", under 4: "'Function' object has no attribute 'get_marker'").
PYTEST_MAJORS: tuple[tuple[int, str], ...] = (
    (4, "2018-11-13"), (5, "2019-06-28"), (6, "2020-07-28"), (7, "2022-02-03"), (8, "2024-01-27"), (9, "2025-11-01"),
)  # fmt: skip


def pytest_for(date: str | None) -> str:
    """The pytest requirement of a commit dated ``date`` (ISO 8601): below the first major
    released after it (``pytest<8`` for January 2024); plain ``pytest`` when none was, or
    the date is unknown."""
    if date:
        day = date[:10]
        for major, released in PYTEST_MAJORS:
            if day < released:
                return f"pytest<{major}"
    return "pytest"


def auto_setup_command(project: Path, uv: str | None, date: str | None = None) -> str:
    """What ``--setup auto`` runs in ``project``: pytest (the one of ``date``, the commit's,
    see :func:`pytest_for`) with the plugins its configuration needs (:func:`pytest_plugins`),
    and the project editable with its test extras, test dependency groups (uv only) and test
    requirements files."""
    words: list[str] = []
    extras: list[str] = []
    groups: list[str] = []
    data = _read_toml(project / "pyproject.toml")
    optional = data.get("project", {}).get("optional-dependencies", {})
    extras = [name for name in optional if isinstance(optional, dict) and name.lower() in _TEST_NAMES]
    declared_groups = data.get("dependency-groups", {})
    if uv and isinstance(declared_groups, dict):
        groups = [name for name in declared_groups if name.lower() in _TEST_NAMES]
    if not extras:
        extras = [n for n in _read_ini(project / "setup.cfg", "options.extras_require") if n.lower() in _TEST_NAMES]
    if any((project / name).is_file() for name in ("pyproject.toml", "setup.py", "setup.cfg")):
        words += ["-e", "." + (f"[{','.join(extras)}]" if extras else "")]
    for name in _REQUIREMENT_FILES:
        if (project / name).is_file() and not (project / name).is_symlink():
            words += ["-r", name]
    for group in groups:
        words += ["--group", group]
    words.append(pytest_for(date))
    words += pytest_plugins(project)
    installer = [uv, "pip", "install"] if uv else ["python", "-m", "pip", "install", "--disable-pip-version-check"]
    return shlex.join([*installer, *words])


#: Plugins a pytest configuration needs, by the setting or option that needs it: without
#: them pytest stops at once ("unrecognized arguments: --asyncio-mode=strict").
_PLUGIN_KEYS = {"asyncio_mode": "pytest-asyncio", "asyncio_default_fixture_loop_scope": "pytest-asyncio",
                "timeout": "pytest-timeout"}  # fmt: skip
_PLUGIN_OPTIONS = {"--asyncio-mode": "pytest-asyncio", "--timeout": "pytest-timeout", "--cov": "pytest-cov",
                   "-n": "pytest-xdist", "--numprocesses": "pytest-xdist", "--dist": "pytest-xdist"}  # fmt: skip
#: Where pytest reads its configuration from an ini file: (file, section).
_PYTEST_INI = (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))


def _read_toml(path: Path) -> dict:
    """A project's TOML file, or {} when it is missing, a link or unreadable."""
    if not path.is_file() or path.is_symlink():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8", errors="replace"))
    except tomllib.TOMLDecodeError:
        return {}


def _read_ini(path: Path, section: str) -> dict[str, str]:
    """One section of a project's ini file, or {} when it is missing, a link or unreadable."""
    if not path.is_file() or path.is_symlink():
        return {}
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except configparser.Error:
        return {}
    return dict(parser[section]) if parser.has_section(section) else {}


def pytest_settings(project: Path) -> dict[str, object]:
    """``project``'s pytest settings, from every file pytest reads them from (a later file
    of :data:`_PYTEST_INI` wins, as the first one found does for pytest: close enough for
    the settings read here)."""
    settings: dict[str, object] = {}
    options = _read_toml(project / "pyproject.toml").get("tool", {}).get("pytest", {}).get("ini_options", {})
    settings.update(options if isinstance(options, dict) else {})
    for name, section in _PYTEST_INI:
        settings.update(_read_ini(project / name, section))
    return settings


#: pytest's default ``python_files``.
DEFAULT_TEST_FILES = ("test_*.py", "*_test.py")


def ini_overrides(command: str) -> dict[str, str]:
    """pytest's ``-o NAME=VALUE`` (``--override-ini``) settings on a command line: they
    win over the configuration files."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    found: dict[str, str] = {}
    for index, word in enumerate(words):
        value = None
        if word in ("-o", "--override-ini") and index + 1 < len(words):
            value = words[index + 1]
        elif word.startswith("--override-ini="):
            value = word.split("=", 1)[1]
        elif word.startswith("-o") and not word.startswith("-o-") and len(word) > 2:
            value = word[2:]
        if value and "=" in value:
            name, _, setting = value.partition("=")
            found[name.strip()] = setting
    return found


def test_file_patterns(project: Path, command: str = "") -> tuple[str, ...]:
    """The file-name patterns of ``project``'s test modules (pytest's ``python_files``, as
    the test ``command`` may override it)."""
    value = ini_overrides(command).get("python_files") or pytest_settings(project).get("python_files")
    patterns = value.split() if isinstance(value, str) else [str(v) for v in value] if isinstance(value, list) else []
    return tuple(patterns) or DEFAULT_TEST_FILES


def pytest_plugins(project: Path) -> list[str]:
    """The pytest plugins that ``project``'s pytest configuration names (``addopts`` options
    such as ``--asyncio-mode`` or ``-n 2``, settings such as ``timeout = 30``): an editable
    install with the test extras leaves them out when the project lists them elsewhere."""
    settings = pytest_settings(project)
    addopts = settings.get("addopts", "")
    text = " ".join(map(str, addopts)) if isinstance(addopts, list) else str(addopts)
    try:
        options = shlex.split(text)
    except ValueError:
        options = text.split()
    found = {plugin for key, plugin in _PLUGIN_KEYS.items() if key in settings}
    for option in options:
        name = option.split("=", 1)[0]
        if name.startswith("-n") and name != "-n" and (name[2:].isdigit() or name[2:] == "auto"):
            name = "-n"  # "-n2", "-nauto"
        if name.startswith("--cov"):
            name = "--cov"  # --cov-report, --cov-fail-under …
        if name in _PLUGIN_OPTIONS:
            found.add(_PLUGIN_OPTIONS[name])
    return sorted(found)


_DEPENDENCY_NAMES = ("pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "Pipfile", "Pipfile.lock", "uv.lock",
                     "poetry.lock", "pdm.lock")  # fmt: skip


def _dependency_blobs(repo: Path, head: str) -> list[tuple[str, str]]:
    """(path, blob id) of the dependency files at ``head``: their content, by hash."""
    proc = subprocess.run([*GIT, "-C", str(repo), "ls-tree", "-r", "-z", head], capture_output=True, check=False)
    if proc.returncode != 0:
        raise SetupFailed(f"cannot read the tree of {head[:12]} in {repo}")
    found = []
    for entry in proc.stdout.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.decode("utf-8", "surrogateescape").partition("\t")
        name = path.rsplit("/", 1)[-1]
        depth = path.count("/")
        if (depth == 0 and (name in _DEPENDENCY_NAMES or ("requirements" in name and name.endswith(".txt")))) or (
            path in _REQUIREMENT_FILES or (path.startswith("requirements/") and depth == 1 and name.endswith(".txt"))
        ):  # fmt: skip
            found.append((path, meta.split()[2]))
    return sorted(found)


@dataclass(frozen=True)
class BuiltEnvironment:
    """A test environment of a corpus, built now or earlier."""

    python: str
    """Its interpreter."""
    record: TestEnvironment
    built: bool
    """Built by this call (False: reused from the cache)."""
    note: str | None = None
    """Something the user should hear (e.g. uv was unavailable)."""
    project: Path | None = None
    """The copy of the project the setup command ran in (its generated files go to every
    scratch tree: ``products.py``)."""


def cache_home() -> Path:
    """Where fix-task mining and grading keep built environments (a task set's folder is
    replaced whole when written): ``$XDG_CACHE_HOME/reviewbench/envs``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "reviewbench" / ENV_DIR


def build_environment(root: Path, repo: Path, head: str, setup: str,
                      log: Callable[[str], None] | None = None, base: str | None = None) -> BuiltEnvironment:  # fmt: skip
    """The environment for ``setup`` (a command, or ``auto``) under ``root`` (a corpus's
    ``envs/``, or :func:`cache_home`), built if needed on the interpreter ``base``
    (default: :func:`default_python`).

    Raises:
        SetupFailed: the environment could not be built; the message names its log.
        UsageError: no base interpreter.
    """
    base = base or default_python()
    uv = _uv()
    note = None if uv else "uv is unavailable: building the test environment with venv + pip (slower)"
    if note and log:
        log(note)
    auto = setup.strip() == AUTO
    with _checkout(repo, head, auto) as project:
        date = git_output(repo, "show", "-s", "--format=%cI", head).strip() if project is not None else None
        command = auto_setup_command(project, uv, date) if project is not None else setup
        digest = hashlib.sha256()
        for part in (command, base, *(f"{p}:{b}" for p, b in _dependency_blobs(repo, head))):
            digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
        key = digest.hexdigest()
        root = Path(os.path.abspath(root))
        root.mkdir(parents=True, exist_ok=True)
        folder = root / key[:16]
        with (root / ".lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            marker = folder / MARKER
            python = folder / "venv" / "bin" / "python"
            # An environment of a release that kept the project's git directory inside the
            # folder its setup could write is rebuilt (``git/scratch.py``).
            if marker.is_file() and python.is_file() and (folder / "project.git").is_dir():
                try:
                    record = TestEnvironment.model_validate_json(marker.read_text(encoding="utf-8"))
                except ValueError:
                    record = None
                if record is not None and record.key == key:
                    return BuiltEnvironment(str(python), record, built=False, note=note, project=folder / "project")
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir()
            record = _build(folder, repo, head, base, uv, command, setup, key, log, pip=not auto)
            marker.write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")
            return BuiltEnvironment(str(python), record, built=True, note=note, project=folder / "project")


class _checkout:
    """A scratch clone of ``repo`` at ``head`` to read what ``--setup auto`` should install
    (None when ``wanted`` is false); removed afterwards. The setup command runs in a copy of
    its own, in the environment folder."""

    def __init__(self, repo: Path, head: str, wanted: bool) -> None:
        self.repo, self.head, self.wanted = repo, head, wanted
        self.path: Path | None = None

    def __enter__(self) -> Path | None:
        import tempfile

        if not self.wanted:
            return None
        self.path = Path(tempfile.mkdtemp(prefix="reviewbench-setup-")) / "project"
        try:
            ScratchClone(self.repo, self.path).checkout(self.head)
        except GitError as exc:
            shutil.rmtree(self.path.parent, ignore_errors=True)
            raise SetupFailed(f"cannot prepare the setup copy: {exc}") from None
        return self.path

    def __exit__(self, *exc: object) -> None:
        if self.path is not None:
            shutil.rmtree(self.path.parent, ignore_errors=True)


def _build(folder: Path, repo: Path, head: str, base: str, uv: str | None, command: str, setup: str, key: str,
           log: Callable[[str], None] | None, pip: bool = True) -> TestEnvironment:  # fmt: skip
    """Build the environment in ``folder``: ``venv/``, and ``project/``, the copy of the
    repository at ``head`` the setup command ran in (kept: an editable install points there)."""
    setup_log = folder / "setup.log"
    venv = folder / "venv"
    project = folder / "project"
    try:
        ScratchClone(repo, project).checkout(head)
    except GitError as exc:
        raise SetupFailed(f"cannot prepare the project copy for the setup: {exc}") from None
    # No memory limit here: installing may build dependencies, which the per-test
    # address-space limit was not sized for; this is the user's own command, run once.
    # The sandbox keeps the host read-only: the venv, the project copy and uv's cache are
    # what it may write — not the project's git directory beside them (``git/scratch.py``).
    uv_cache = folder / "uv-cache"
    for made in (venv, uv_cache):
        made.mkdir()
    box = Sandbox(Network.ALLOW, None, folder / "home", writable=(venv, project, uv_cache))
    steps = []
    if uv:
        steps.append(shlex.join([uv, "venv", "--quiet", "--python", base, str(venv)]))
    if uv and pip:
        # pip inside the environment, offline from the interpreter's own bundle, so that
        # a setup command of the user's saying "pip install" installs here and nowhere else.
        steps.append(shlex.join([str(venv / "bin" / "python"), "-m", "ensurepip", "--default-pip"]))
    if not uv:
        steps.append(shlex.join([base, "-m", "venv", str(venv)]))
    activate = (f"export VIRTUAL_ENV={shlex.quote(str(venv))} UV_PYTHON_DOWNLOADS=never "
                f"PATH={shlex.quote(str(venv / 'bin'))}:\"$PATH\"; unset PYTHONHOME; ")  # fmt: skip
    steps.append(activate + command)
    if log:
        log(f"building the test environment in {folder}: {command}")
    cache = f"export UV_CACHE_DIR={shlex.quote(str(uv_cache))}; "
    for step in steps:
        with setup_log.open("a", encoding="utf-8") as handle:
            handle.write(f"\n=== {step}\n")
        outcome = box.run(cache + step, project, SETUP_TIMEOUT_S, setup_log)
        if outcome.timed_out or outcome.exit_code != 0:
            tail = [line for line in setup_log.read_text(errors="replace").splitlines() if line.strip()][-1:]
            why = "timed out" if outcome.timed_out else f"exit {outcome.exit_code}"
            raise SetupFailed(
                f"the setup command failed ({why}{': ' + tail[0].strip() if tail else ''}); "
                f"see {setup_log}" + ("" if uv else " (uv unavailable: venv + pip)")
            )
    record = describe_interpreter(str(venv / "bin" / "python"), setup=setup, key=key)
    if record is None:
        raise SetupFailed(f"the environment built in {venv} has no working interpreter; see {setup_log}")
    (folder / "setup-command.txt").write_text(command + "\n", encoding="utf-8")
    return record

