"""Imports every reviewer module so that each registers its kind."""

from . import anthropic, baselines, command, forge, openai, sarif  # noqa: F401
