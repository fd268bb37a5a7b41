"""Stage 3: run reviewers on a corpus under recorded conditions."""

from .experiment import ConditionConfig, Experiment, ExperimentConfig, load_experiment
from .parse import ParsedReview, parse_review

__all__ = [
    "ConditionConfig",
    "Experiment",
    "ExperimentConfig",
    "ParsedReview",
    "load_experiment",
    "parse_review",
]
