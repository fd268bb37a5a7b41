"""The analysis rules a registration freezes and scoring applies, with their defaults."""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_RULES"]

#: Line tolerance of a location match, whether unvalidated cases count, bootstrap resamples.
DEFAULT_RULES: Final = {"tolerance": 3, "include_unvalidated": False, "bootstrap": 10_000}
