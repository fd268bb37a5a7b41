"""One case, one tree: the pushed trees of a case must be the same under every condition.

Forge conditions may differ only by their treatment (the guidance files they place). Each
forge run records ``case_tree``, the git tree of the patched tree it pushed without those
files; a case whose recorded trees differ between conditions (or repetitions) was not
reviewed on equivalent pull requests, and is named here so that no comparison rests on it
unseen.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..records import RunRow

__all__ = ["tree_differences"]


def tree_differences(runs: Iterable[RunRow]) -> dict[str, dict[str, list[str]]]:
    """Cases whose forge runs pushed different trees: case id -> condition -> its trees."""
    seen: dict[str, dict[str, set[str]]] = {}
    for run in runs:
        tree = run.pull_request.case_tree if run.pull_request is not None else None
        if tree:
            seen.setdefault(run.case_id, {}).setdefault(run.condition, set()).add(tree)
    return {case: {name: sorted(trees) for name, trees in sorted(by.items())}
            for case, by in sorted(seen.items())
            if len(set().union(*by.values())) > 1}  # fmt: skip
