"""The exception tree of reviewbench.

Every error the tool raises on purpose derives from :class:`ReviewbenchError`; the CLI
turns each into one line on stderr and a non-zero exit, never a traceback::

    ReviewbenchError                     exit 1 unless noted
    ├── UsageError            bad option values or configuration (exit 2)
    ├── GitError              git failed or the repository is unusable
    │   ├── NotAGitRepository
    │   └── EmptyRepository
    ├── NoMatchingCommits     nothing in history matched the fix patterns
    ├── NoCases               commits matched, but none made a valid case
    ├── OutputExists          refusing to overwrite a non-empty output directory
    ├── RunDirectoryBusy      another process is running into the same run directory
    ├── CorpusError           a corpus, task set or run directory is missing or damaged
    ├── IntegrityError        gold, tasks or a registration changed since they were frozen
    │   └── LabelChainBroken  a label row was edited, deleted or inserted by hand
    ├── PrerequisiteError     the machine lacks what a step needs (a sandbox, a tool)
    │   └── EndpointUnreachable  a reviewer's endpoint refuses, is not found, or rejects the key
    ├── SetupFailed           validate --setup could not build the test environment
    ├── ValidationStopped     the first bases all failed the same way (fail fast)
    ├── StoreError            the run store cannot be read or written (locked, disk full)
    ├── ReviewerError         no review (or solution) appeared; ``transient`` ones are retried
    │   └── OutputTooLarge    a command printed more than its max_output_bytes (run ``invalid``)
    │       └── TooManyFindings  a review held more than its max_findings (run ``invalid``)
    ├── PatchRejected         a solver's patch cannot be applied safely (outside the tree…)
    ├── SafetyStop            a run left the review-only boundary: the experiment stops
    └── Cancelled             the step is being stopped; no new command may start (exit 130)

:data:`EXIT_CODES` maps each class to its exit code; a test checks that every class the
package raises is in this tree.

Outside the tree, :class:`Terminated` is a ``KeyboardInterrupt``: SIGTERM (exit 143), or a
child such as git killed by it, unwinds every stage exactly as Ctrl-C does (exit 130).
"""

from __future__ import annotations

__all__ = [
    "Cancelled",
    "CorpusError",
    "EXIT_CODES",
    "EmptyRepository",
    "EndpointUnreachable",
    "GitError",
    "IntegrityError",
    "LabelChainBroken",
    "NoCases",
    "NoMatchingCommits",
    "NotAGitRepository",
    "OutputExists",
    "OutputTooLarge",
    "PatchRejected",
    "PrerequisiteError",
    "ReviewbenchError",
    "ReviewerError",
    "RunDirectoryBusy",
    "SafetyStop",
    "StoreError",
    "SetupFailed",
    "Terminated",
    "TooManyFindings",
    "UsageError",
    "ValidationStopped",
]


class ReviewbenchError(Exception):
    """Root of every error reviewbench raises on purpose."""

    exit_code = 1


class UsageError(ReviewbenchError):
    """An option or configuration value cannot be used."""

    exit_code = 2


class GitError(ReviewbenchError):
    """A git command failed or the repository cannot be read."""


class NotAGitRepository(GitError):
    """The path is not inside a git work tree or repository."""


class EmptyRepository(GitError):
    """The repository has no commits yet."""


class NoMatchingCommits(ReviewbenchError):
    """No commit message matched the fix patterns."""


class NoCases(ReviewbenchError):
    """Commits matched, but every one was dropped."""


class OutputExists(ReviewbenchError):
    """The output directory exists and is not empty."""


class RunDirectoryBusy(ReviewbenchError):
    """Another process holds the run directory's lock."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be: every stage already cleans up after that
    (scratch trees removed, test processes killed, nothing half-recorded). Not a
    :class:`ReviewbenchError`: like Ctrl-C it must pass every ``except ReviewbenchError``."""


class CorpusError(ReviewbenchError):
    """A corpus directory is missing, incomplete or damaged."""


class IntegrityError(ReviewbenchError):
    """Frozen inputs changed: gold, a task set or a registration no longer match their hash."""


class LabelChainBroken(IntegrityError):
    """``labels.sqlite``'s SHA-256 chain of rows is broken: a row was edited, deleted or inserted."""


class PrerequisiteError(ReviewbenchError):
    """The machine lacks what the step needs: a sandbox, a tool, a service."""


class EndpointUnreachable(PrerequisiteError):
    """A reviewer's endpoint cannot be used: the connection is refused, the host is not found,
    or the key is rejected (HTTP 401) — found by ``run``'s check before planning, or by a run
    of consecutive connection failures that stopped a condition."""


class StoreError(ReviewbenchError):
    """The run store cannot be read or written (locked too long, disk full, damaged)."""


class SafetyStop(ReviewbenchError):
    """A run crossed the review-only boundary: a pull request merged or approved by the bot,
    or a credential in a reviewer's output. The run is recorded ``failed`` (``safety_stop``),
    nothing of its output kept, and the experiment stops at once."""


class ReviewerError(ReviewbenchError):
    """No review appeared. The message must never contain a secret.

    ``transient`` asks the engine to retry (429, 5xx, connection errors), honouring
    ``retry_after`` when the endpoint gave one. ``sent=False`` says the request never left
    (no key, an unsendable header, the host refused the connection): it is not counted as
    a request sent. ``code`` says why, for the run's ``failure_code``. ``connection`` says no
    connection could be made at all.
    """

    def __init__(self, message: str, *, transient: bool = False, retry_after: float | None = None,
                 sent: bool = True, code: str | None = None,
                 connection: bool = False) -> None:  # fmt: skip
        super().__init__(message)
        self.connection = connection
        """No connection could be made (refused, host not found, connect timeout): counted
        towards the condition's ``stop_after_connection_failures``."""
        self.transient = transient
        self.retry_after = retry_after
        self.sent = sent
        self.code = code
        """The run's ``failure_code`` (a ``records.FailureCode`` value); None: ``endpoint_error``."""


class OutputTooLarge(ReviewerError):
    """A command (reviewer, solver, analyser, judge) printed more than its ``max_output_bytes``.

    Not the reviewer's silence but no review either: the run is ``invalid``, with this
    message as its note and ``head`` (the first ``max_output_bytes``, decoded) as its raw
    output. The command was killed at the cap.
    """

    def __init__(self, message: str, *, head: str) -> None:
        super().__init__(message)
        self.head = head


class TooManyFindings(OutputTooLarge):
    """A review inside the byte cap held more findings than its reviewer's ``max_findings``.

    Tens of thousands of claims for one case are no review a rater can label: the run is
    ``invalid`` as for the byte cap, with ``head`` the whole answer (already within
    ``max_output_bytes``) and no finding recorded.
    """


class PatchRejected(ReviewbenchError):
    """A patch that must not be applied: a path outside the tree, into ``.git``, unreadable."""


class Cancelled(ReviewbenchError):
    """The step is being stopped (Ctrl-C or SIGTERM); no new command may start."""

    exit_code = 130


class SetupFailed(ReviewbenchError):
    """The command building the test environment failed (its log is named)."""


class ValidationStopped(ReviewbenchError):
    """Validation stopped early: the first bases all failed with the same error line."""


def _tree(root: type[ReviewbenchError]) -> list[type[ReviewbenchError]]:
    return [root, *(c for sub in root.__subclasses__() for c in _tree(sub))]


EXIT_CODES: dict[type[ReviewbenchError], int] = {cls: cls.exit_code for cls in _tree(ReviewbenchError)}
"""Every error class and the exit code the CLI gives it."""
