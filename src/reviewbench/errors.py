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
    ├── CorpusError           a corpus on disk is missing or damaged
    ├── SetupFailed           validate --setup could not build the test environment
    └── ValidationStopped     the first bases all failed the same way (fail fast)
"""

from __future__ import annotations

__all__ = [
    "CorpusError",
    "EmptyRepository",
    "GitError",
    "NoCases",
    "NoMatchingCommits",
    "NotAGitRepository",
    "OutputExists",
    "ReviewbenchError",
    "SetupFailed",
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


class CorpusError(ReviewbenchError):
    """A corpus directory is missing, incomplete or damaged."""


class SetupFailed(ReviewbenchError):
    """The command building the test environment failed (its log is named)."""


class ValidationStopped(ReviewbenchError):
    """Validation stopped early: the first bases all failed with the same error line."""
