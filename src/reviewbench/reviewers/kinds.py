"""Imports every reviewer module so that each registers its kind."""

from . import anthropic, baselines, command, forge, openai, probe, sarif  # noqa: F401
