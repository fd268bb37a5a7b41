"""Validating one case in a reusable scratch tree.

A scratch tree is a scratch clone (``git/scratch.py``) of the user's repository, reused
case after case by a forced checkout, so one clone serves a worker for the whole run.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..config import Network, ValidateConfig
from ..git.scratch import ScratchClone
from ..records import Validation, ValidationStatus
from ..sandbox import RunOutcome, Sandbox
from ..store.scratch import remove_tree
from .environment import test_file_patterns
from .node import load_failure, node_error_line, tree_relative
from .node_coverage import COVERAGE_DIR, read_coverage, runs_as_script
from .probe import first_error_line, install_plugin, read_probe, shadowing, tree_files
from .products import SetupProducts
from .testcmd import PYTEST_NO_TESTS, TestCommand, Verdict, VerdictKind, node_id
from .warm import WarmPytest, parse_launch, warm_enabled

__all__ = [
    "ADAPTIVE_CPU_FLOOR_S",
    "ADAPTIVE_FACTOR",
    "ADAPTIVE_FLOOR_S",
    "Bounds",
    "CaseJob",
    "ScratchTree",
    "note_carried",
    "as_node_ids",
    "run_selection",
    "validate_case",
]

SELECTION_FIX_TESTS = "fix_tests"
SELECTION_SUITE = "suite"
#: Once the whole suite has passed at a shared base, a run at that base is stopped after
#: this many times the suite's duration (when that is sooner than ``--timeout``): a mutant
#: that loops forever otherwise burns the full timeout of CPU.
ADAPTIVE_FACTOR = 5.0
#: ... but never sooner than this many seconds (start-up, a loaded machine).
ADAPTIVE_FLOOR_S = 5.0
#: Warm runs also get a CPU limit, the same factor times the suite's CPU seconds (whole
#: seconds, as ``RLIMIT_CPU`` counts them), at least this: a loaded machine stretches
#: wall-clock time, not CPU time.
ADAPTIVE_CPU_FLOOR_S = 1
#: pytest's traceback style in patched runs, whose failures are the evidence and whose
#: first error line never becomes a reason that fails fast or names a remedy: Python's own
#: rendering (pytest's explanation of a failed ``assert`` included) costs a failing run on
#: pytoolz/toolz 67 ms of CPU against 82 ms for pytest's, which parses every module of the
#: traceback to show whole statements. Runs at the base keep the command's style.
PATCHED_TRACEBACKS = "native"


@dataclass(frozen=True)
class Bounds:
    """How long a run may take: wall-clock seconds (None: ``--timeout``) and CPU seconds
    (None: no CPU limit; warm runs only)."""

    wall_s: float | None = None
    cpu_s: int | None = None


@dataclass(frozen=True)
class CaseJob:
    """Everything a worker needs to validate one case (picklable, for Ray)."""

    case_id: str
    base: str
    patch: Path
    test_paths: tuple[str, ...]
    log: Path
    shared_base: bool = False
    """Other cases of the run have the same base: its suite runs once, up front."""
    overlays: tuple[Path, ...] = ()
    """Patches applied right after every checkout of ``base``, before anything runs: part of
    the base as validation sees it (a natural case's test patch)."""

    @property
    def base_key(self) -> str:
        """What base results are cached under: the base commit, plus its overlays if any."""
        return self.base if not self.overlays else self.base + "+" + "+".join(str(p) for p in self.overlays)
    paths: tuple[str, ...] = ()
    """Files the patch changes: a case none of whose Python files (scripts, under a Node
    runner) any run imported (loaded) from the tree is ``not_exercised``."""
    products: Path | None = None
    """The ``--setup`` environment's copy of the project: files its setup generated there
    (a version file) are copied into the tree after each checkout (``products.py``)."""
    bounds_base: str | None = None
    """A rename variant's original base: its suite time, once known, bounds this case's
    runs too (a rename changes names, not running time), although no case shares the
    variant's own base."""
    node_modules: Path | None = None
    """The corpus's installed ``node_modules`` (``npm.py``): linked into the tree, read-only."""
    patched_base: str | None = None
    """A mirror's: its patch undoes its overlays, so its patched tree is this commit exactly
    (the base of the defect case it mirrors). That commit's whole suite, run once per run
    whichever case needs it first, decides the mirror when it passes there."""


#: Marks a tree's ``node_modules`` as the links :meth:`ScratchTree.use_node_modules` made.
_LINKED = ".reviewbench-linked"


class ScratchTree(ScratchClone):
    """One private clone of the repository for a worker, checked out at a case's base on
    demand, with the sandbox its tests run in."""

    def __init__(self, repo: Path, path: Path, config: ValidateConfig) -> None:
        self.config = config
        self.home = path.parent / f"{path.name}-home"
        # Tests may change their tree and its HOME/TMPDIR, nothing else of the host.
        self.sandbox = Sandbox(config.network, config.memory_mb, self.home, writable=(path,),
                               env_allow=config.env_allow, file_mb=config.max_file_mb, env_set=config.env_set)  # fmt: skip
        self.plugin_dir = install_plugin(self.home)
        self._set_up = False
        self._products: dict[str, SetupProducts] = {}
        self._warm: dict[str, WarmPytest | None] = {}
        self._node_modules: Path | None = None
        self._node_box: Sandbox | None = None
        super().__init__(repo, path)

    def use_node_modules(self, modules: Path | None) -> None:
        """Give the tree the installed ``modules`` (after every checkout too), read-only;
        the clone's own exclude file ignores them, so the tree still reads as pristine."""
        if modules is None or self._node_modules == modules:
            return
        self._node_modules = modules
        exclude = self.git_dir / "info" / "exclude"
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a", encoding="utf-8") as handle:
            handle.write("/node_modules\n")
        self._link_node_modules()

    def _link_node_modules(self) -> None:
        """The tree's own ``node_modules`` folder of links, one per installed entry: the
        packages stay shared and read-only, while tools that write ``node_modules/.cache``
        (nyc, babel, vite) write into the tree. Their cache is emptied at every checkout."""
        modules = self._node_modules
        if modules is None:
            return
        own = self.path / "node_modules"
        if os.path.lexists(own) and (own.is_symlink() or not (own / _LINKED).is_file()):
            return  # the commit has a node_modules of its own: leave it
        if not os.path.lexists(own):
            own.mkdir()
            for entry in sorted(os.listdir(modules)):
                if entry != ".cache":
                    (own / entry).symlink_to(modules / entry)
            (own / _LINKED).write_text(f"{modules}\n", encoding="utf-8")
        remove_tree(own / ".cache")

    def use_products(self, project: Path | None) -> None:
        """Carry the files the ``--setup`` command generated in ``project`` into this tree."""
        if project is not None and "setup" not in self._products:
            self._products["setup"] = SetupProducts.of(ScratchClone.existing(project))

    def checkout(self, rev: str) -> None:
        """Reset the tree to ``rev`` exactly, then copy in the setup's generated files that
        the commit ignores and lacks (``products.py``)."""
        super().checkout(rev)
        for products in self._products.values():
            products.restore(self)
        self._link_node_modules()

    @property
    def carried(self) -> list[str]:
        """The setup's generated files the tree now holds (copied in, now or before)."""
        return sorted({f for products in self._products.values() for f in products.present(self.path)})

    def pristine(self) -> bool:
        """Whether the tree is exactly its checked-out commit: no tracked file changed,
        nothing untracked (ignored files aside)."""
        status = self.git("status", "--porcelain", "--untracked-files=all", check=False)
        return status.returncode == 0 and not status.stdout.strip()

    def applies(self, patch: Path) -> bool:
        return self.git("apply", "--check", str(patch), check=False).returncode == 0

    def apply(self, patch: Path, log: Path | None = None) -> bool:
        """Apply ``patch``; when it cannot be, say why in ``log`` (if given)."""
        if not patch.is_file():
            if log is not None:
                _note(log, f"the patch file {patch} is missing: nothing to apply")
            return False
        proc = self.git("apply", "--whitespace=nowarn", str(patch), check=False)
        if proc.returncode != 0 and log is not None:
            _note(log, f"the patch does not apply: {proc.stderr.decode('utf-8', 'replace').strip()}")
        return proc.returncode == 0

    def run_tests(
        self, command: TestCommand, shell: str, log: Path, bounds: Bounds = Bounds()
    ) -> tuple[RunOutcome, bool]:
        """Run one test command line (``command.shell(...)``) in the sandbox: in a fork of
        the tree's warm pytest server when the command allows it, else as a fresh process.
        Returns the outcome and whether it ran warm."""
        timeout = bounds.wall_s or self.config.timeout
        warm = self._warm_server(command)
        if warm is not None:
            launch = parse_launch(shell, self.path, self.config.env_set.get("PATH"))
            if launch is not None and launch.python == warm.launch.python and launch.env == warm.launch.env:
                outcome = warm.run(list(launch.args), timeout, log, bounds.cpu_s)
                if outcome is not None:
                    return self._file_limit_note(outcome, log), True
                _note(log, f"warm pytest unavailable ({warm.broken}); running cold")
        box = self.sandbox
        if command.runner is not None:  # Node: memory limited as data, not address space
            if self._node_box is None:
                self._node_box = Sandbox(self.config.network, self.config.memory_mb, self.home, writable=(self.path,),
                                         env_allow=self.config.env_allow, file_mb=self.config.max_file_mb,
                                         env_set=self.config.env_set, data_limit=True)  # fmt: skip
            box = self._node_box
        return self._file_limit_note(box.run(shell, self.path, timeout, log), log), False

    def _file_limit_note(self, outcome: RunOutcome, log: Path) -> RunOutcome:
        """Say in the log when a run hit the file-size limit: killed by SIGXFSZ (directly, or
        as a shell's 128 + signal), or its log reached the limit (Python ignores SIGXFSZ, so
        its writes fail with "File too large" instead)."""
        limit = self.config.max_file_mb
        full = log.is_file() and log.stat().st_size >= limit * 1024 * 1024 if limit else False
        if limit and (full or outcome.exit_code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ)):
            _note(log, f"the run wrote past the file-size limit ({limit} MiB; max_file_mb) and was stopped")
        return outcome

    def _warm_server(self, command: TestCommand) -> WarmPytest | None:
        if not command.is_pytest or not warm_enabled():
            return None
        if command.command not in self._warm:
            launch = parse_launch(command.prefixed(self.plugin_dir) or command.command, self.path,
                                  self.config.env_set.get("PATH"))
            self._warm[command.command] = (
                WarmPytest(self.sandbox, self.path, launch, self.home) if launch else None
            )
        return self._warm[command.command]

    def close(self) -> None:
        """Stop the tree's warm servers (they also stop when the tree is collected)."""
        for warm in self._warm.values():
            if warm is not None:
                warm.close()
        self._warm.clear()

    def setup(self, log: Path) -> None:
        """Run the setup command once per tree (with network: installs need it)."""
        if self._set_up or not self.config.setup_cmd:
            return
        _note(log, f"setup: {self.config.setup_cmd}")
        setup_box = Sandbox(Network.ALLOW, self.config.memory_mb, self.home, writable=(self.path,),
                            env_allow=self.config.env_allow, env_set=self.config.env_set)  # fmt: skip
        before = frozenset(SetupProducts.of(self).files)
        setup_box.run(self.config.setup_cmd, self.path, self.config.timeout, log)
        self._set_up = True
        # What it generated: kept aside, since a later checkout may clean it (``products.py``).
        made = SetupProducts.of(self, before)
        if made.files:
            self._products["setup_cmd"] = made.stash(self.path.parent / f"{self.path.name}-products")


def _note(log: Path, text: str) -> None:
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"\n=== {text}\n")


def run_selection(
    tree: ScratchTree,
    command: TestCommand,
    selection: list[str],
    label: str,
    log: Path,
    bounds: Bounds = Bounds(),
    tracebacks: str | None = None,
) -> Verdict:
    """Run ``selection`` (paths or node ids; empty: the whole suite) in the tree as it is,
    sandboxed (warm when possible), and grade it from exit code and JUnit XML;
    ``tracebacks``: pytest's ``--tb`` style (see :data:`PATCHED_TRACEBACKS`)."""
    junit, probe, coverage = tree.home / "junit.xml", tree.home / "probe.json", tree.home / COVERAGE_DIR
    junit.unlink(missing_ok=True)
    probe.unlink(missing_ok=True)
    node_probed = command.node_probed
    if node_probed:
        remove_tree(coverage)
        coverage.mkdir(parents=True)
    shell = command.shell(selection, junit, probe, coverage if node_probed else None, tracebacks)
    _note(log, f"{label}: {shell}")
    start = log.stat().st_size
    outcome, warm = tree.run_tests(command, shell, log, bounds)
    with log.open("rb") as handle:
        handle.seek(start)
        output = handle.read(1 << 20).decode("utf-8", "replace")
    verdict = command.verdict(outcome, junit, output)
    error_line = None
    if verdict.kind not in (VerdictKind.PASS, VerdictKind.NO_TESTS):
        # A Node runner's report names the failing assertion; else the output's first error.
        error_line = first_error_line(verdict.error_line or (command.runner and node_error_line(output)) or output,
                                      tree.path)  # fmt: skip
    if command.runner is not None:
        failing = tree_relative(verdict.failing, tree.path)
        if verdict.kind is VerdictKind.FAIL and not failing and (crashed := load_failure(output, tree.path)):
            failing = frozenset({crashed})  # no report: the file whose loading threw, as pytest's collection errors
        verdict = dataclasses.replace(verdict, failing=failing, passed=tree_relative(verdict.passed, tree.path))
    modules = read_coverage(coverage, tree.path) if node_probed else read_probe(probe)
    if node_probed:
        remove_tree(coverage)  # a record per process: large suites write many megabytes
    verdict = dataclasses.replace(verdict, modules=modules, error_line=error_line)
    cpu = f", {verdict.cpu_s:.2f} CPU s" if verdict.cpu_s is not None else ""
    _note(log, f"{label}: {verdict.kind} (exit {verdict.exit_code}, {verdict.duration_s:.2f}s{cpu}{', warm' if warm else ''})"
               + (f", failing: {', '.join(sorted(verdict.failing))}" if verdict.failing else ""))  # fmt: skip
    return verdict


class BaseResults:
    """Test ids seen passing and failing in the base runs of one validation run, per
    (base, test command), shared by all its scratch trees.

    A case's failing tests need no reference run of their own when they already passed
    at the same base in this run, and never failed there: every mutation case shares
    HEAD as its base, and many fail the same tests. Only pass/fail runs count (JUnit ids;
    pytest only); a test seen both passing and failing gets a reference run of its own,
    which then decides between ``base_failing`` and ``flaky`` as before.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
        self._gates: dict[tuple[str, str], threading.Lock] = {}
        self._suite_ran: set[tuple[str, str]] = set()
        self._suite: dict[tuple[str, str], tuple[float, float | None]] = {}
        self._suite_verdicts: dict[tuple[str, str], tuple[Verdict, Path]] = {}

    def suite_once(self, base: str, command: TestCommand, run: Callable[[], Verdict], root: Path) -> bool:
        """Run the whole suite at ``base`` with ``run`` in the tree at ``root`` unless this
        run already did (other trees wait for the one running it); True when it ran here."""
        key = (base, command.command)
        with self._lock:
            gate = self._gates.setdefault(key, threading.Lock())
        with gate:
            if key in self._suite_ran:
                return False
            verdict = run()
            self.record(base, command, verdict)
            self.record_suite(base, command, verdict)
            with self._lock:
                self._suite_ran.add(key)
                self._suite_verdicts[key] = (verdict, root)
            return True

    def suite_verdict(self, base: str, command: TestCommand) -> tuple[Verdict, Path] | None:
        """The verdict of :meth:`suite_once` at ``base``, and the tree it ran in (the files
        its modules name lie there)."""
        with self._lock:
            return self._suite_verdicts.get((base, command.command))

    def record_suite(self, base: str, command: TestCommand, verdict: Verdict) -> None:
        """A whole-suite run at ``base`` (or on a patch of it): the fastest that passed
        sets the bounds of later runs there."""
        if verdict.kind is not VerdictKind.PASS:
            return
        key = (base, command.command)
        with self._lock:
            wall, cpu = self._suite.get(key, (verdict.duration_s, verdict.cpu_s))
            wall = min(wall, verdict.duration_s)
            if verdict.cpu_s is not None:
                cpu = verdict.cpu_s if cpu is None else min(cpu, verdict.cpu_s)
            self._suite[key] = (wall, cpu)

    def bounds(self, base: str, command: TestCommand, timeout: float) -> tuple[Bounds, str] | None:
        """The bounds of a run at ``base`` and why, once a whole suite passed there."""
        with self._lock:
            suite = self._suite.get((base, command.command))
        if suite is None:
            return None
        wall, cpu = suite
        wall_s = max(ADAPTIVE_FLOOR_S, round(ADAPTIVE_FACTOR * wall, 1))
        cpu_s = max(ADAPTIVE_CPU_FLOOR_S, math.ceil(ADAPTIVE_FACTOR * cpu)) if cpu is not None else None
        bounds = Bounds(wall_s if wall_s < timeout else None, cpu_s if cpu_s is not None and cpu_s < timeout else None)
        why = (f"runs at this base stop after {bounds.wall_s or timeout:g}s"
               + (f" and after {bounds.cpu_s} CPU s when warm" if bounds.cpu_s else "")
               + f" ({ADAPTIVE_FACTOR:g} × the fastest passing suite there, {wall:.2f}s"
               + (f" and {cpu:.2f} CPU s" if cpu is not None else "")
               + f"; at least {ADAPTIVE_FLOOR_S:g}s and {ADAPTIVE_CPU_FLOOR_S} CPU s; --timeout {timeout:g}s)")  # fmt: skip
        return bounds, why

    def record(self, base: str, command: TestCommand, verdict: Verdict) -> None:
        if not command.is_pytest or verdict.kind not in (VerdictKind.PASS, VerdictKind.FAIL):
            return
        with self._lock:
            passed, failed = self._seen.setdefault((base, command.command), (set(), set()))
            passed |= verdict.passed
            failed |= verdict.failing

    def pass_at(self, base: str, command: TestCommand, ids: frozenset[str]) -> bool:
        """Whether every one of ``ids`` passed at ``base`` and none ever failed there. A
        collection error is reported under its module's (or package's) id: it passed when
        tests inside it ran at base and none of them failed."""
        with self._lock:
            passed, failed = self._seen.get((base, command.command), (set(), set()))
            return bool(ids) and all(_passed(i, passed, failed) for i in ids)


def _passed(test_id: str, passed: set[str], failed: set[str]) -> bool:
    if test_id in failed:
        return False
    if test_id in passed:
        return True
    inside = (test_id + "::", test_id + ".")
    return any(p.startswith(inside) for p in passed) and not any(f.startswith(inside) for f in failed)


_RUNS: dict[tuple[str, int, int], BaseResults] = {}
_RUNS_LOCK = threading.Lock()


def _base_results(tree: ScratchTree) -> BaseResults:
    """The base results of the validation run ``tree`` belongs to: its trees share the
    temporary folder they were cloned into (one per run and executor worker process)."""
    root = tree.path.parent
    info = root.stat()
    key = (str(root), info.st_dev, info.st_ino)
    with _RUNS_LOCK:
        if key not in _RUNS:
            if len(_RUNS) >= 16:
                _RUNS.pop(next(iter(_RUNS)))
            _RUNS[key] = BaseResults()
        return _RUNS[key]


def _collected(selection: str, patterns: tuple[str, ...]) -> bool:
    """Whether pytest would collect ``selection`` as a test module (a node id, or a ``.py``
    file named as the project's ``python_files`` ``patterns`` say): a fix's example script or
    helper under ``tests/``, named on the command line, would be imported as one (loguru's
    waited forever)."""
    path, sep, _ = selection.partition("::")
    if sep:
        return True
    name = PurePosixPath(path).name
    return path.endswith(".py") and any(fnmatch.fnmatch(path if "/" in p else name, p) for p in patterns)


def _present(root: Path, selection: str) -> bool:
    """A test path, or a pytest node id (``file::test``) whose file, exists in the tree."""
    path, sep, _ = selection.partition("::")
    return (root / path).is_file() if sep else (root / path).exists()


def as_node_ids(test_ids: frozenset[str] | set[str], root: Path) -> list[str]:
    """Test ids as pytest node ids (``tests/test_x.py::TestK::test_a``), the one form
    every stage records: JUnit's dotted ids are resolved against the tree (a collection
    error's module id becomes its file); an id that resolves to no file stays as it is."""
    nodes = []
    for test_id in test_ids:
        node = node_id(test_id, root) if "::" in test_id else None
        if node is None and "::" not in test_id and "/" not in test_id:
            module = test_id.replace(".", "/")
            node = next((p for p in (module + ".py", module) if (root / p).exists()), None)
        nodes.append(node or test_id)
    return sorted(nodes)


def _own(failing: frozenset[str], job: CaseJob, root: Path, selection: list[str]) -> frozenset[str]:
    """The fix's own tests among ``failing``: those of its test files (all of them when the
    selection was those files, or when the case has none: a mutation's tests are the suite)."""
    if selection or not job.test_paths:
        return failing
    files = set(job.test_paths)
    return frozenset(i for i in failing if (node := node_id(i, root)) and node.partition("::")[0] in files)


def _node_ids(failing: frozenset[str], root: Path) -> list[str] | None:
    """pytest node ids of failing JUnit ids; None when any cannot be resolved, so that
    the caller runs the whole selection."""
    nodes = [node_id(test_id, root) for test_id in sorted(failing)]
    if not nodes or None in nodes:
        return None
    return nodes  # type: ignore[return-value]


class _Shadowed(Exception):
    """A run imported the tree's package from elsewhere: nothing it said is about the tree."""

    def __init__(self, verdict: Verdict, reason: str) -> None:
        super().__init__(reason)
        self.verdict = verdict
        self.reason = reason


def validate_case(tree: ScratchTree, command: TestCommand, job: CaseJob) -> Validation:
    """Prove one case: the selected tests fail, every time, with the patch and pass without it.

    Every probed run (see ``probe.py``) must import the tree's own packages, or the case
    is an ``error`` naming the copy that shadowed them; a case none of whose changed
    Python files any run imported from the tree is ``not_exercised``, never
    ``not_observed`` — and likewise under a Node runner, for the scripts V8's coverage
    says no run loaded (``node_coverage.py``).

    Cheapest first: the fix's own test files, stopping at the first observed failure;
    the whole suite only when they do not observe it. Within a selection the patched run
    comes first and the reference run on the unpatched base only when the patched run
    failed: a reference that precedes a passing patched run decides nothing (on a real
    history that was over a quarter of all test time).
    """
    log = job.log
    log.write_text(f"case {job.case_id} at {job.base}\n", encoding="utf-8")
    spent = 0.0
    probed = False
    exercised: set[str] = set()

    def result(status: ValidationStatus, verdict: Verdict | None = None, selection: str | None = None,
               failing: frozenset[str] = frozenset(), reason: str | None = None,
               base_failures: frozenset[str] = frozenset()) -> Validation:  # fmt: skip
        if reason is None and verdict is not None and status not in _NO_REASON:
            reason = _reason(verdict)
        _note(log, f"status: {status}" + (f" ({reason})" if reason else ""))
        return Validation(
            status=status,
            test_cmd=command.command,
            exit_code=verdict.exit_code if verdict else None,
            failing_tests=as_node_ids(failing or (verdict.failing if verdict else frozenset()), tree.path),
            duration_s=round(spent, 3),
            selection=selection,
            reason=reason,
            base_failures=as_node_ids(base_failures, tree.path),
        )

    bounds = Bounds()

    tree.use_products(job.products)
    tree.use_node_modules(job.node_modules)
    noted: set[str] = set()

    def checkout() -> bool:
        """The base as validation sees it: the commit (and the setup's generated files),
        then its overlays."""
        tree.checkout(job.base)
        note_carried(tree, log, noted)
        return all(tree.apply(overlay) for overlay in job.overlays)

    if not checkout():  # a patch that does not apply is found below: `git apply` is atomic
        return result(ValidationStatus.APPLY_FAILED)
    set_up = tree._set_up
    tree.setup(log)
    fresh = tree._set_up == set_up  # still exactly the base: no setup command ran just now
    known = _base_results(tree)
    if job.shared_base:
        label = "reference (suite) whole suite at base, once per run"
        if known.suite_once(job.base_key, command, lambda: run_selection(tree, command, [], label, log), tree.path):
            fresh = False
        adaptive = known.bounds(job.base_key, command, tree.config.timeout)
        if adaptive:
            bounds = adaptive[0]
            _note(log, adaptive[1])
    elif job.bounds_base:
        adaptive = known.bounds(job.bounds_base, command, tree.config.timeout)
        if adaptive:
            bounds = adaptive[0]
            _note(log, f"{adaptive[1]}, measured at the original base {job.bounds_base[:12]} (renaming changes "
                       "names, not running time)")  # fmt: skip

    def run(selection: list[str], label: str, tracebacks: str | None = None) -> Verdict:
        nonlocal spent, probed
        verdict = run_selection(tree, command, selection, label, log, bounds, tracebacks)
        spent += verdict.duration_s
        if verdict.modules is not None:
            probed = True
            exercised.update(tree_files(verdict.modules, tree.path))
            shadowed = shadowing(verdict.modules, tree.path)
            if shadowed:
                raise _Shadowed(verdict, shadowed)
        if not selection and job.shared_base:
            known.record_suite(job.base_key, command, verdict)  # a passing patched suite: as good a measure
        return verdict

    def by_patched_base() -> Validation | None:
        """A mirror's patched tree is ``job.patched_base`` exactly: when that commit's whole
        suite passed in this run (run here or for the defect case), it is not observed."""
        nonlocal spent, probed
        base = job.patched_base
        if not base or not tree.apply(job.patch, log) or not tree.pristine():
            return None
        label = f"patched (suite) whole suite at {base[:12]}, which the patched tree is exactly; once per run"
        ran = known.suite_once(base, command, lambda: run_selection(tree, command, [], label, log), tree.path)
        suite = known.suite_verdict(base, command)
        if suite is None or suite[0].kind is not VerdictKind.PASS:
            return None
        verdict, root = suite
        if verdict.modules is not None:
            if shadowing(verdict.modules, root):
                return None  # the runs of this case's own will say so
            probed = True
            exercised.update(tree_files(verdict.modules, root))
        spent += verdict.duration_s if ran else 0.0
        _note(log, f"the patch undoes the base patch: the patched tree is {base[:12]} exactly, whose whole suite "
                   + ("passed here" if ran else "passed earlier in this run"))  # fmt: skip
        return result(ValidationStatus.NOT_OBSERVED, verdict, SELECTION_SUITE)

    try:
        validation = by_patched_base()
        if validation is None:
            validation = _decide(tree, command, job, known, fresh and not job.patched_base, run, result, checkout)
    except _Shadowed as shadowed:
        return result(ValidationStatus.ERROR, shadowed.verdict, reason=shadowed.reason)
    node = command.runner is not None
    sources = sorted(p for p in job.paths if _runs(p, node))
    verb = "loaded" if node else "imported"
    if validation.status is ValidationStatus.NOT_OBSERVED and probed and sources and not exercised & set(sources):
        _note(log, f"not exercised: no run {verb} {', '.join(sources)} from the tree")
        reason = f"no test {verb} {_few(sources)} from the tree"
        if command.is_pytest and validation.exit_code == PYTEST_NO_TESTS:
            reason = "the whole suite collects no test here (pytest exit 5)" + _uncollected(tree.path, job, command)
        return result(ValidationStatus.NOT_EXERCISED, selection=validation.selection, reason=reason)
    if validation.status is ValidationStatus.NOT_OBSERVED and sources:
        seen = sorted(exercised & set(sources))
        _note(log, f"{verb} from the tree: {_few(seen)}" if seen else
                   "imports unknown: no run left a probe record (a command reviewbench cannot probe)")  # fmt: skip
    return validation


def _uncollected(root: Path, job: CaseJob, command: TestCommand) -> str:
    """The fix's own test files that pytest's ``python_files`` leaves out (``tests.py``, the
    2010s' single test module), said after a suite that collected nothing."""
    patterns = test_file_patterns(root, command.command)
    missed = [p for p in job.test_paths if p.endswith(".py") and _present(root, p) and not _collected(p, patterns)]
    if not missed:
        return ""
    return (f"; {_few(missed)} {'is not a file' if len(missed) == 1 else 'are not files'} pytest collects "
            f"(python_files: {' '.join(patterns)})")


def _runs(path: str, node: bool) -> bool:
    """Whether ``path`` is code the test runs execute: Python files under pytest, scripts
    (declarations aside) under a Node runner."""
    if not node:
        return path.endswith(".py")
    return runs_as_script(path)


_NO_REASON = frozenset({ValidationStatus.OBSERVED, ValidationStatus.NOT_OBSERVED})


def _reason(verdict: Verdict) -> str | None:
    if verdict.kind is VerdictKind.TIMEOUT:
        return "timed out"
    return verdict.error_line


def note_carried(tree: ScratchTree, log: Path, noted: set[str]) -> None:
    """Say in ``log`` which files the ``--setup`` generated were copied into the tree after
    its last checkout (each once per ``noted``): a verdict may rest on them."""
    new = [f for f in tree.carried if f not in noted]
    if new:
        noted.update(new)
        _note(log, f"copied from the setup: {_few(new)} (generated, ignored by git, absent from the commit)")


def _few(paths: list[str]) -> str:
    return ", ".join(paths[:3]) + (f" (and {len(paths) - 3} more)" if len(paths) > 3 else "")


def _decide(tree: ScratchTree, command: TestCommand, job: CaseJob, known: BaseResults, fresh: bool,
            run: Callable[..., Verdict], result: Callable[..., Validation],
            checkout: Callable[[], bool]) -> Validation:  # fmt: skip
    """The selections of :func:`validate_case`, cheapest first; ``fresh``: the tree is
    still exactly the base; ``checkout`` restores it (the commit, then its overlays)."""
    log = job.log
    reruns = tree.config.reruns
    selections: list[tuple[str, list[str]]] = []
    # A Node runner is given the fix's test scripts only: not its fixtures (a JSON file
    # would be a filter that matches no test file) nor its type tests; pytest its Python
    # files and node ids in them only (a fixture named on pytest's command line is an
    # error, "found no collectors": 9 of 40 cases on cookiecutter, whose tests/ holds
    # templates and JSON).
    patterns = test_file_patterns(tree.path, command.command) if not command.runner else ()
    present = [p for p in job.test_paths
               if _present(tree.path, p) and (runs_as_script(p) if command.runner else _collected(p, patterns))]  # fmt: skip
    if present and command.selects:
        selections.append((SELECTION_FIX_TESTS, present))
    selections.append((SELECTION_SUITE, []))
    last: Verdict | None = None
    for name, selection in selections:
        base_failures: frozenset[str] = frozenset()
        if not fresh:
            checkout()
        fresh = False
        if not tree.apply(job.patch, job.log):
            return result(ValidationStatus.APPLY_FAILED)
        first = last = run(selection, f"patched ({name}) run 1", PATCHED_TRACEBACKS)
        if first.kind in (VerdictKind.NO_TESTS, VerdictKind.PASS):
            continue  # nothing observed here; a wider selection may
        if first.kind is VerdictKind.TIMEOUT:
            return result(ValidationStatus.TIMEOUT, first, name)
        if first.kind is VerdictKind.ERROR and name == SELECTION_FIX_TESTS and any("::" in p for p in selection):
            # pytest exits 4 on a node id it cannot find: this selection decides nothing.
            _note(log, f"patched ({name}): pytest could not run the selected node ids; trying the next selection")
            continue
        if first.kind is VerdictKind.ERROR:
            return result(ValidationStatus.ERROR, first, name)
        # The patched tests failed: they must pass on the base, reproducibly. Only the
        # failing tests need to run again (a whole suite costs minutes), unless their ids
        # cannot be turned back into pytest node ids.
        narrowed = _node_ids(first.failing, tree.path) if command.is_pytest else None
        again = narrowed or selection
        if not known.pass_at(job.base_key, command, first.failing):
            checkout()
        if command.selects and selection and not known.pass_at(job.base_key, command, first.failing):
            # A fix-test selection at the base, once per run: other cases on this base
            # (every mutation case) find their failing tests in it.
            known.record(job.base_key, command, run(selection, f"reference ({name}) whole selection at base"))
        if known.pass_at(job.base_key, command, first.failing):
            _note(log, f"reference ({name}): the failing tests pass at base {job.base[:12]} "
                       "(seen in this run's base runs)")  # fmt: skip
        else:
            references = []
            for attempt in range(reruns):
                reference = run(again, f"reference ({name}) run {attempt + 1}")
                if narrowed and reference.kind in (VerdictKind.NO_TESTS, VerdictKind.ERROR):
                    narrowed, again = None, selection  # the ids did not resolve: run it all
                    reference = run(again, f"reference ({name}) run {attempt + 1}, whole selection")
                references.append(reference)
                if reference.kind is not VerdictKind.FAIL:
                    break
            for reference in references:
                known.record(job.base_key, command, reference)
            kinds = {r.kind for r in references}
            if kinds == {VerdictKind.FAIL} and len({r.failing for r in references}) > 1:
                return result(ValidationStatus.FLAKY, references[-1], name, references[0].failing)  # the base flips
            if kinds == {VerdictKind.FAIL}:
                at_base = references[-1].failing
                new = first.failing - at_base
                if not new & _own(first.failing, job, tree.path, selection):
                    # The fix's own tests fail without the patch: they say nothing of it.
                    return result(ValidationStatus.BASE_FAILING, references[-1], name)
                base_failures = at_base
                _note(log, f"reference ({name}): {len(at_base)} test(s) fail at the base too, every time "
                           f"({_few(sorted(at_base))}); the patch makes {len(new)} more fail, the fix's own among them")  # fmt: skip
            elif VerdictKind.FAIL in kinds:
                return result(
                    ValidationStatus.FLAKY, references[-1], name, references[0].failing
                )  # the base flips
            elif (reference := references[-1]).kind is VerdictKind.TIMEOUT:
                return result(ValidationStatus.TIMEOUT, reference, name)
            elif reference.kind is not VerdictKind.PASS:
                return result(ValidationStatus.ERROR, reference, name)
        if reruns > 1:
            checkout()  # reruns start from a fresh patched tree
            if not tree.apply(job.patch, job.log):
                return result(ValidationStatus.APPLY_FAILED)
        runs = [first]
        for attempt in range(1, reruns):
            verdict = run(again, f"patched ({name}) run {attempt + 1}", PATCHED_TRACEBACKS)
            runs.append(verdict)
            if verdict.kind is not VerdictKind.FAIL:
                break
        last = runs[-1]
        if {v.kind for v in runs} == {VerdictKind.FAIL}:
            if len({v.failing for v in runs}) > 1:
                return result(ValidationStatus.FLAKY, last, name)  # a test flipped
            if base_failures:
                return result(ValidationStatus.OBSERVED, last, name, last.failing - base_failures,
                              base_failures=base_failures)  # fmt: skip
            return result(ValidationStatus.OBSERVED, last, name)
        # Failed, then passed (or hung) on a rerun: the failure does not reproduce.
        return result(ValidationStatus.FLAKY, last, name, first.failing)
    return result(ValidationStatus.NOT_OBSERVED, last, selections[-1][0])
