"""The registered protocol in words: one line per field, for the terminal and the page.

``score`` prints a one-line summary on the scoreboard and every field with ``--details``;
the report shows every field. Both read :func:`protocol_lines`, so the two say the same.
A field the ``[registration]`` table left empty reads "not stated", never nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._text import printable

if TYPE_CHECKING:
    from ..score.result import RegisteredProtocol, RegistrationSummary

__all__ = ["NOT_FROZEN", "protocol_lines", "protocol_summary"]

NOT_STATED = "not stated"
#: What a registration made before the table existed says.
NOT_FROZEN = "not frozen: registered before reviewbench froze the [registration] table"


def _plain(text: str) -> str:
    """One line of printable text (the file is the user's, but a terminal must not act on it)."""
    return " ".join(printable(text).split())


def _retry(p: RegisteredProtocol) -> str:
    rule = p.retry_rule
    on = f"on {', '.join(rule.retry_on)}" if rule.retry_on else "on any failure code"
    return f"at most {rule.max_retries} retr{'y' if rule.max_retries == 1 else 'ies'} per run, {on}; every " \
        "earlier attempt stays a missing review"


def _severity(p: RegisteredProtocol) -> str:
    policy = p.severity_policy
    if policy is None:
        return NOT_STATED
    source = f"file {policy.file}" if policy.file else "text"
    levels = "; ".join(f"{level} = {meaning}" for level, meaning in policy.levels.items())
    return f"{source}, SHA-256 {policy.sha256[:12]}…; levels: {levels}"


def protocol_lines(registration: RegistrationSummary) -> tuple[tuple[str, str], ...]:
    """(field, text) for every field of the registered protocol, in the table's order; the
    owner is the version's (``register --owner`` or the table's)."""
    owner = registration.owner or "NOT STATED: no one owns the decisions"
    p = registration.protocol
    if p is None:
        return (("owner", _plain(owner)), ("protocol", NOT_FROZEN))
    hypotheses = "; ".join(f"{h.id}: {h.statement} (gates: {', '.join(h.gates)})" for h in p.hypotheses)
    approvals = "; ".join(f"{a.role}: {a.name}" for a in p.approvals)
    data = p.data_controls
    controls = (f"account {data.account_type}; workspace {data.workspace}; data settings {data.data_settings}; "
                f"retention {data.retention}; raw outputs read by {', '.join(data.raw_output_readers)}"
                if data else NOT_STATED)  # fmt: skip
    lines = (
        ("owner", owner),
        ("hypotheses", hypotheses or NOT_STATED),
        ("severity policy", _severity(p)),
        ("exclusion policy", p.exclusion_policy or NOT_STATED),
        ("stop conditions", "; ".join(p.stop_conditions) or NOT_STATED),
        ("retry rule", _retry(p)),
        ("completion", p.completion or NOT_STATED),
        ("product surface", p.product_surface or NOT_STATED),
        ("approvals", approvals or NOT_STATED),
        ("data controls", controls),
    )
    return tuple((field, _plain(text)) for field, text in lines)


def protocol_summary(registration: RegistrationSummary) -> str:
    """One line: the owner, how many hypotheses and approvals, and the fields not stated."""
    lines = dict(protocol_lines(registration))
    p = registration.protocol
    owner = f"owner {_plain(registration.owner)}" if registration.owner else "NO DECISION OWNER"
    if p is None:
        return f"protocol: {owner}; {NOT_FROZEN}"
    unstated = [field for field, text in lines.items() if text == NOT_STATED]
    counts = f"{len(p.hypotheses)} hypothes{'is' if len(p.hypotheses) == 1 else 'es'}, " \
        f"{len(p.approvals)} approval{'' if len(p.approvals) == 1 else 's'}"
    tail = f"; not stated: {', '.join(unstated)}" if unstated else "; every field stated"
    return f"protocol: {owner}; {counts}{tail} (--details)"
