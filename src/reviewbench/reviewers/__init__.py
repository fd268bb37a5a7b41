"""Reviewer adapters, one module per kind, behind one protocol (``base.Reviewer``).

Only ``review/`` imports this package.
"""

from ..config.reviewers import ReviewerConfig
from .base import Reviewer, ReviewerError, ReviewReply, make_reviewer, register

__all__ = ["ReviewReply", "Reviewer", "ReviewerConfig", "ReviewerError", "make_reviewer", "register"]
