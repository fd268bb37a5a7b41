"""Every configuration in one place: typed, frozen records of what the user asked for.

``pipeline`` holds mining's and validation's (and ``reviewbench.toml``), ``reviewers`` the
reviewer kinds' tables, ``experiment`` the experiment file and the one TOML reader all
configuration files share, ``gates`` the gates file. They import nothing of the stages,
so any stage may use them.
"""

from .experiment import ConditionConfig, ExperimentConfig, LoadedFile, read_config, unique_names
from .gates import Compare, Condition, Gates, Tier
from .pipeline import (
    DEFAULT_FIX_PATTERN,
    DEFAULT_SELECT,
    DEFAULT_TEST_PATTERNS,
    MineConfig,
    MutationOperator,
    Network,
    ValidateConfig,
    load_repo_settings,
    resolve_test_settings,
)
from .reviewers import ReviewerConfig

__all__ = [
    "DEFAULT_FIX_PATTERN",
    "DEFAULT_SELECT",
    "DEFAULT_TEST_PATTERNS",
    "Compare",
    "Condition",
    "ConditionConfig",
    "ExperimentConfig",
    "Gates",
    "LoadedFile",
    "MineConfig",
    "MutationOperator",
    "Network",
    "ReviewerConfig",
    "Tier",
    "ValidateConfig",
    "load_repo_settings",
    "read_config",
    "resolve_test_settings",
    "unique_names",
]
