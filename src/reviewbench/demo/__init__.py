"""The offline demo on an embedded sample project."""

from ._api import DemoResult, run_demo
from .sample import build_sample_repository

__all__ = ["DemoResult", "build_sample_repository", "run_demo"]
