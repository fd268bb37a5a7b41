"""Validation's view of the shared sandbox (``reviewbench.sandbox``), kept for its importers."""

from ..sandbox import (
    Cancelled,
    RunOutcome,
    Sandbox,
    cancelled,
    isolation_prefix,
    kill_all,
    reset_cancel,
)

__all__ = ["Cancelled", "RunOutcome", "Sandbox", "cancelled", "isolation_prefix", "kill_all", "reset_cancel"]
