"""The one place that talks to git."""

from .repo import Repository, open_repository

__all__ = ["Repository", "open_repository"]
