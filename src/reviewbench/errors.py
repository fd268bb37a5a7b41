"""The exception tree of reviewbench.

Every error the tool raises on purpose derives from :class:`ReviewbenchError`; the CLI
turns each into one line on stderr and a non-zero exit, never a traceback::

    ReviewbenchError
    ├── UsageError            bad option values or configuration (exit 2)
    ├── GitError              git failed or the repository is unusable
    │   ├── NotAGitRepository
    │   └── EmptyRepository
    ├── NoMatchingCommits     nothing in history matched the fix patterns
    ├── NoCases               commits matched, but none made a valid case
    ├── OutputExists          refusing to overwrite a non-empty output directory
    ├── RunDirectoryBusy      another process is running into the same run directory
    ├── Interrupted           a child (git) was killed by SIGINT/SIGTERM: exit 130/143
    └── CorpusError           a corpus on disk is missing or damaged
"""

from __future__ import annotations

__all__ = [
    "CorpusError",
    "EmptyRepository",
    "GitError",
    "Interrupted",
    "NoCases",
    "NoMatchingCommits",
    "NotAGitRepository",
    "OutputExists",
    "ReviewbenchError",
    "RunDirectoryBusy",
    "UsageError",
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


class Interrupted(ReviewbenchError):
    """A child process died of Ctrl-C (SIGINT) or SIGTERM: the user stopped the tool.

    The terminal sends Ctrl-C to every process of the foreground group, so git often dies
    before Python raises ``KeyboardInterrupt``; that is an interruption, not a git failure.
    """

    def __init__(self, signum: int) -> None:
        import signal

        terminated = signum == signal.SIGTERM
        super().__init__("terminated" if terminated else "interrupted")
        self.exit_code = 143 if terminated else 130


class RunDirectoryBusy(ReviewbenchError):
    """Another process holds the run directory's lock."""


class CorpusError(ReviewbenchError):
    """A corpus directory is missing, incomplete or damaged."""
