"""What the command kinds share: the packet as JSON, the sandbox they run in, the output cap.

Running the command (process groups, the sandbox, reading output with a deadline) lives in
the shared ``reviewbench.sandbox`` package, with validation's test runs.
"""

from __future__ import annotations

from ..errors import OutputTooLarge
from ..records import ReviewPacket
from ..sandbox import AgentBox, ShellResult, exit_label, stderr_tail

__all__ = ["ShellResult", "agent_box", "capped_stdout", "exit_label", "failure_hint", "network_notes", "packet_json",
           "stderr_tail"]


def network_notes(result: ShellResult) -> tuple[str, ...]:
    """The run's note of connections the sandbox's network proxy refused (none: no note)."""
    if not result.refused:
        return ()
    shown = ", ".join(dict.fromkeys(result.refused))
    return (f"the sandbox refused network access to {shown} (not in the network list)",)


def failure_hint(returncode: int, box: AgentBox, stderr: bytes = b"", refused: tuple[str, ...] = ()) -> str:
    """What to try when a sandboxed command failed for want of what the sandbox withholds:
    the network (none, or hosts not listed), a program it hides, or a write to the
    read-only tree (an analyser's cache)."""
    if not box.sandbox or returncode == 0:
        return ""
    if refused:
        return (f" (the sandbox refused network access to {', '.join(dict.fromkeys(refused))}: list the hosts "
                "it needs in network = [\"host:port\", ...])")
    if returncode in (126, 127):
        return (" (the sandbox hides homes and temporary folders: if the program or its interpreter lives "
                "there, list its folder in the reviewer's expose = [...])")
    if b"Read-only file system" in stderr:
        return (" (the sandbox keeps the tree read-only: turn off the program's cache or output files there, "
                "e.g. ruff --no-cache)")
    return ""


def agent_box(config: object, label: str) -> AgentBox:
    """The sandbox of a command config (``env``, ``network``: none, ``host:port`` pairs or
    true, ``sandbox``, ``expose``, ``hide``, ``max_output_bytes``)."""
    return AgentBox(
        label=label,
        env=tuple(config.env),  # type: ignore[attr-defined]
        network=config.network,  # type: ignore[attr-defined]
        sandbox=config.sandbox,  # type: ignore[attr-defined]
        expose=tuple(config.expose),  # type: ignore[attr-defined]
        hide=tuple(config.hide),  # type: ignore[attr-defined]
        max_output=config.max_output_bytes,  # type: ignore[attr-defined]
    )


def capped_stdout(result: ShellResult, box: AgentBox, where: str = "") -> None:
    """Refuse output cut at the box's cap, before the exit code is looked at (the cut killed it).

    Raises:
        OutputTooLarge: stdout went past ``max_output_bytes``; ``head`` holds what was kept.
    """
    if result.stdout_overflow:
        raise OutputTooLarge(
            f"{box.label} printed more than {box.max_output} bytes on stdout{where} (its max_output_bytes): "
            "killed there; the first bytes are kept as the raw output",
            head=result.stdout.decode("utf-8", "replace"),
        )


def packet_json(packet: ReviewPacket) -> dict[str, object]:
    """The packet as the command kind sends it on stdin; ``tree_note`` with a tree."""
    out: dict[str, object] = {
        "case_id": packet.case_id,
        "title": packet.title,
        "diff": packet.diff,
        "paths": list(packet.paths),
        "prompt": packet.prompt,
        "guidance": packet.guidance,
        "files": dict(packet.files),
    }
    if packet.tree_note is not None:
        out["tree_note"] = packet.tree_note
    return out
