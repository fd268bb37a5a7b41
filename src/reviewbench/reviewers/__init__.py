"""Reviewer adapters, one module per kind, behind one protocol (``base.Reviewer``).

Only ``review/`` imports this package.
"""

from .base import Reviewer, ReviewerError, ReviewReply, make_reviewer, register
from .configs import ReviewerConfig

__all__ = ["Reviewer", "ReviewerConfig", "ReviewerError", "ReviewReply", "make_reviewer", "register"]
