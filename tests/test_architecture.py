"""The import graph follows the pipeline: no package-level cycle, and no stage imports a
later one (docs/ARCHITECTURE.md). Walks every module's imports, lazy ones included."""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

import reviewbench

ROOT = Path(reviewbench.__file__).parent

#: Stages in pipeline order; a unit may import its own stage and any earlier one.
STAGES: tuple[tuple[str, ...], ...] = (
    ("_version", "_lazy", "_text", "errors", "records", "config"),  # shared records and configurations
    ("git", "store", "sandbox"),  # infrastructure every stage may use
    ("mine",),
    ("validate",),
    ("engine",),  # the run engine: reviews and fix tasks are jobs it drives
    ("reviewers",),
    ("review",),
    ("evidence",),  # people's and a judge's labels, which the score reads
    ("score",),  # score/registration.py freezes what the score will judge by
    ("report",),
    ("label",),
    ("tasks",),  # fix-task mode reuses mining, validation, the engine and scoring
    ("demo",),
    ("cli", "__main__", "__init__"),
)
RANK = {unit: rank for rank, units in enumerate(STAGES) for unit in units}
#: Every module of the package, by dotted name (a package by its own name).
MODULES = {".".join(p.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")
           for p in ROOT.rglob("*.py")}  # fmt: skip


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


@cache
def module_imports() -> tuple[tuple[str, str], ...]:
    """(importing module, imported module) for every import in the package, lazy ones included
    (parsed once: every test here reads the same tree)."""
    pairs: list[tuple[str, str]] = []
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        package = parts[:-1]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        source = ".".join(parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                # from . import x / from reviewbench.pkg import x: x may be a module
                targets = [target, *(f"{target}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            pairs.extend((source, t) for t in targets if t.startswith("reviewbench"))
    return tuple(pairs)


@cache
def import_graph() -> dict[str, set[str]]:
    """unit -> units it imports (top-level modules and subpackages of reviewbench)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for source, target in module_imports():
        if target not in MODULES and target.rsplit(".", 1)[0] in MODULES and target.count(".") > 1:
            continue  # a name imported from a module, not a module
        if target.startswith("reviewbench.") and _unit(target) != _unit(source):
            edges[_unit(source)].add(_unit(target))
    return edges


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_a_private_module_is_imported_only_inside_its_package():
    """A leading underscore means private to the package (docs/ARCHITECTURE.md, "Public API"):
    other packages use what the package exports, or a module without one."""
    crossing = sorted(f"{source} -> {target}" for source, target in module_imports() if target in MODULES
                      and (private := next((i for i, part in enumerate(target.split(".")) if part.startswith("_")
                                           and not part.startswith("__") and part != "_version"), None)) is not None
                      and not _inside(source, ".".join(target.split(".")[:private])))  # fmt: skip
    assert crossing == []


def test_every_unit_has_a_stage():
    units = set(import_graph()) | {u for targets in import_graph().values() for u in targets}
    assert units - set(RANK) == set()
    assert set(RANK) - units == set()  # no stale entry either


def test_no_stage_imports_a_later_one():
    later = sorted(
        f"{source} -> {target}"
        for source, targets in import_graph().items()
        for target in targets
        if target in RANK and source in RANK and RANK[target] > RANK[source]
    )
    assert later == []


def test_no_import_cycle_between_units():
    """No cycle between any two units, those of one stage included."""
    graph = {s: set(ts) for s, ts in import_graph().items()}
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


def test_no_scoring_function_reaches_80_lines():
    """Scoring stays readable in pieces (``score/``: the longest function under 80 lines)."""
    long = []
    for path in (ROOT / "score").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size >= 80:
                    long.append(f"{path.name}:{node.name} ({size} lines)")
    assert long == []


def test_code_docs_and_help_cite_no_document_outside_the_repository():
    """Docs and help are self-contained: no "SPEC n", "seed 00n" or STYLE.md (documents
    this repository does not hold); a reference names a docs/ page or says the idea."""
    import re

    pattern = re.compile(r"SPEC [0-9]|seed 00[0-9]|STYLE\.md", re.IGNORECASE)
    top = ROOT.parent.parent
    paths = [*ROOT.rglob("*"), *(top / "docs").rglob("*.md"), top / "README.md"]
    hits = [f"{p.relative_to(top)}:{n}" for p in paths if p.is_file() and p.suffix in {".py", ".md", ".html", ".j2", ".toml", ".txt"}
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]  # fmt: skip
    assert hits == []
