"""The import graph follows the pipeline: no package-level cycle, and no stage imports a
later one (docs/ARCHITECTURE.md). Walks every module's imports, lazy ones included."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import reviewbench

ROOT = Path(reviewbench.__file__).parent

#: Stages in pipeline order; a unit may import its own stage and any earlier one.
STAGES: tuple[tuple[str, ...], ...] = (
    ("_version", "_startup", "errors", "records", "config"),  # shared records and configurations
    ("git", "store", "sandbox"),  # infrastructure every stage may use
    ("mine",),
    ("validate",),
    ("engine",),  # the run engine: reviews and fix tasks are jobs it drives
    ("reviewers",),
    ("review",),
    ("registration", "score"),  # registration freezes what score will judge by
    ("report",),
    ("label",),
    ("tasks",),  # fix-task mode reuses mining, validation, the engine and scoring
    ("demo",),
    ("cli", "__main__", "__init__"),
)
RANK = {unit: rank for rank, units in enumerate(STAGES) for unit in units}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def import_graph() -> dict[str, set[str]]:
    """unit -> units it imports (top-level modules and subpackages of reviewbench)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        source = _unit(".".join(parts))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                if target == "reviewbench":  # from . import x / from reviewbench import x
                    targets = [f"reviewbench.{a.name}" for a in node.names]
                else:
                    targets = [target]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                if target.startswith("reviewbench.") and _unit(target) != source:
                    edges[source].add(_unit(target))
    return edges


def test_every_unit_has_a_stage():
    units = set(import_graph()) | {u for targets in import_graph().values() for u in targets}
    assert units - set(RANK) == set()


def test_no_stage_imports_a_later_one():
    later = sorted(
        f"{source} -> {target}"
        for source, targets in import_graph().items()
        for target in targets
        if target in RANK and source in RANK and RANK[target] > RANK[source]
    )
    assert later == []


def test_no_import_cycle_between_stages():
    graph = {s: {t for t in ts if RANK.get(t) != RANK.get(s)} for s, ts in import_graph().items()}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, path: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle.extend([*path, node, nxt])
                return True
            if nxt not in state and visit(nxt, [*path, node]):
                return True
        state[node] = 2
        return False

    for node in sorted(graph):
        if node not in state and visit(node, []):
            break
    assert cycle == []
