"""Imports every reviewer module so that each registers its kind."""

from . import baselines  # noqa: F401
