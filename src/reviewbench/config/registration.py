"""The experiment file's ``[registration]`` table: what a decision is registered to rest on.

Beside the hashes ``register`` freezes (experiment, prompts, gates, gold), a defensible
decision needs the protocol itself written down before any run: who owns the decision,
the hypotheses and the gates that decide each, how severity is judged, what may be
excluded and why, when the experiment stops, what counts as a completed review, which
product surface is measured, who approved it in which role, and where the reviewed code
and the raw outputs go (``data_controls``). ``register`` freezes the table into the
registration record (``protocol``); ``score`` and the report print it.

``data_controls`` is required by ``run`` (and ``register``) for conditions that send code
to a service: chat API kinds and forge kinds, unless every address they use is a
loopback one (a local model server, a test forge). See :func:`needs_data_controls`.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..records import Severity
from .reviewers import ReviewerConfig

__all__ = ["Approval", "DataControls", "Hypothesis", "RegistrationPlan", "SeverityPolicy", "needs_data_controls"]


class _Plan(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Hypothesis(_Plan):
    """One registered hypothesis and the gates that decide it."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,40}$", description="Short id, e.g. 'H1'.")
    statement: str = Field(min_length=1, description="What is claimed, e.g. 'B finds more defects than A'.")
    gates: list[str] = Field(min_length=1, description="Names of the gates file's tiers, vetoes or comparative "
                             "gates that decide it (checked against the registered gates).")


class SeverityPolicy(_Plan):
    """How a defect's severity is judged: a text or a file (hashed), naming every level."""

    text: str | None = Field(default=None, min_length=1, description="The policy itself.")
    file: str | None = Field(default=None, min_length=1, description="A file holding it, relative to the "
                             "experiment file; its SHA-256 is registered.")
    levels: dict[Literal["low", "med", "high"], str] = Field(description="What each gold severity level means (low, med, high), e.g. "
                                        "high = 'wrong money or data reaches a user'.")

    @model_validator(mode="after")
    def _one_source_every_level(self) -> SeverityPolicy:
        if (self.text is None) == (self.file is None):
            raise ValueError("give the severity policy as text or as file, one of them")
        missing = [s.value for s in Severity if s.value not in self.levels]
        if missing:
            raise ValueError(f"the severity policy must name every level: {', '.join(missing)} missing")
        return self


class Approval(_Plan):
    """One named approval of the registration, in a role."""

    role: str = Field(min_length=1, description="The role approving, e.g. 'security lead', 'decision owner'.")
    name: str = Field(min_length=1, description="Who approved.")


class DataControls(_Plan):
    """Where the reviewed code and the reviewers' outputs go, for conditions that send them out."""

    account_type: str = Field(min_length=1, description="The account the service is used under, e.g. "
                              "'enterprise API organisation', 'team plan seat'.")
    workspace: str = Field(min_length=1, description="The workspace, organisation or project the runs use.")
    data_settings: str = Field(min_length=1, description="Its data settings, e.g. 'training on our data off'.")
    retention: str = Field(min_length=1, description="How long the service and this run directory keep prompts, "
                           "code and outputs.")
    raw_output_readers: list[str] = Field(min_length=1, description="Who may read the raw outputs (names or "
                                          "roles).")


class RegistrationPlan(_Plan):
    """The ``[registration]`` table: the protocol a decision is registered to rest on."""

    owner: str | None = Field(default=None, min_length=1, description="Who owns the decision (register --owner "
                              "gives it too; they must agree). Without one, every decision line says so.")
    hypotheses: list[Hypothesis] = Field(default_factory=list, description="The hypotheses, each with its gates.")
    severity_policy: SeverityPolicy | None = Field(default=None, description="How severity is judged.")
    exclusion_policy: str | None = Field(default=None, min_length=1, description="What may be left out of the "
                                         "analysis (reviewbench exclude) and on what grounds, decided before runs.")
    stop_conditions: list[str] = Field(default_factory=list, description="When the experiment stops early (an "
                                       "outage, a safety stop, a budget), in words.")
    completion: str | None = Field(default=None, min_length=1, description="What counts as a completed review "
                                   "(e.g. 'the bot's first review in state COMMENTED within 30 minutes').")
    product_surface: str | None = Field(default=None, min_length=1, description="What is measured: the product, "
                                        "plan and entry point (e.g. 'Codex cloud review, @codex review on a PR').")
    approvals: list[Approval] = Field(default_factory=list, description="Named approvals, one per role.")
    data_controls: DataControls | None = Field(default=None, description="Required when a condition sends code to "
                                               "a service (chat API or forge kinds, not on loopback).")

    @model_validator(mode="after")
    def _unique(self) -> RegistrationPlan:
        ids = [h.id for h in self.hypotheses]
        roles = [a.role for a in self.approvals]
        for what, names in (("hypothesis id", ids), ("approval role", roles)):
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise ValueError(f"each {what} once; repeated: {', '.join(repeated)}")
        return self


#: The gold severity levels, as TOML keys (strict: a table's keys are strings).
assert {s.value for s in Severity} == {"low", "med", "high"}

#: ``git@host:owner/name.git``: a git address in scp form.
_SCP = re.compile(r"^[^/@:]+@(?P<host>[^/:]+):")


def _host(address: str) -> str | None:
    """The host an address reaches (None: a local path or ``file://``)."""
    scp = _SCP.match(address)
    if scp:
        return scp.group("host")
    parts = urlsplit(address)
    if parts.scheme in ("", "file"):
        return None
    return parts.hostname or ""


def _loopback(address: str) -> bool:
    host = _host(address)
    if host is None or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def needs_data_controls(reviewer: ReviewerConfig) -> Literal["api", "forge"] | None:
    """``api`` or ``forge`` when the reviewer sends code to a service off this machine: a chat
    kind whose ``base_url``, or a forge kind whose ``api_url`` or ``remote``, is not a loopback
    address; None otherwise (a local command, a baseline, a local model server)."""
    capabilities = reviewer.capabilities
    if capabilities.opens_pull_requests:
        addresses = [getattr(reviewer, "api_url", ""), getattr(reviewer, "remote", "")]
        return None if all(_loopback(a) for a in addresses) else "forge"
    if capabilities.chat:
        return None if _loopback(getattr(reviewer, "base_url", "")) else "api"
    return None
