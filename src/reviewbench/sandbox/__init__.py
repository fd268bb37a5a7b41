"""One sandbox for everything reviewbench runs that it did not write.

Test runs of validation and grading (:class:`Sandbox`), command reviewers, solvers and
analysers (:class:`AgentBox`) share the mechanism (``_layout``: user, mount, PID and network
namespaces through ``unshare``, or bubblewrap), the environment rules (``_env``) and the
process-group clean-up (``_procs``, ``_shell``). ``docs/SANDBOX.md`` says what each sees.
"""

from ._agent import AgentBox, hidden_paths, protect
from ._env import SECRET_PATTERNS, minimal_env, scrubbed_env
from ._layout import Layout, mechanism, prefix
from ._leaks import LEAK_PATTERNS, find_leak, key_values
from ._procs import (
    Cancelled,
    RunOutcome,
    Sandbox,
    cancelled,
    isolation_prefix,
    kill_all,
    probe_output,
    reset_cancel,
)
from ._shell import ShellResult, exit_label, run_shell, stderr_tail

__all__ = [
    "LEAK_PATTERNS",
    "SECRET_PATTERNS",
    "AgentBox",
    "Cancelled",
    "Layout",
    "RunOutcome",
    "Sandbox",
    "ShellResult",
    "cancelled",
    "exit_label",
    "find_leak",
    "hidden_paths",
    "isolation_prefix",
    "key_values",
    "kill_all",
    "probe_output",
    "mechanism",
    "minimal_env",
    "prefix",
    "protect",
    "reset_cancel",
    "run_shell",
    "scrubbed_env",
    "stderr_tail",
]
