"""The house rule (docs/architecture.md): every package imports only the floors below it, and no module circle.

Read from the code's own imports (``ast``), function-local and ``TYPE_CHECKING`` ones included.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("flows", "tasks", "benchmarks", "skills", "deployments")
# What each floor may import besides itself (tasks and benchmarks share a floor and do not import each other).
ALLOWED = {
    "deployments": set(),
    "skills": {"deployments"},
    "tasks": {"skills", "deployments"},
    "benchmarks": {"skills", "deployments"},
    "flows": {"tasks", "benchmarks", "skills", "deployments"},
}
DOORS = "flows.interfaces"


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def _imports(path: Path, known: set[str]) -> set[str]:
    """The project modules ``path`` imports (``from a.b import c`` counts ``a.b.c`` where that is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in known}
    return {name for name in found if name in known}


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    modules = _modules()
    g = nx.DiGraph()
    g.add_nodes_from(modules)
    for name, path in modules.items():
        g.add_edges_from((name, target) for target in _imports(path, set(modules)) if target != name)
    return g


def test_the_import_graph_is_read(graph: nx.DiGraph) -> None:
    # A reader that found nothing would pass every rule below.
    assert graph.number_of_nodes() > 100
    assert graph.has_edge("skills.store", "deployments.settings")
    assert graph.has_edge("flows.solve", "tasks.models")


def test_no_import_points_up(graph: nx.DiGraph) -> None:
    upward = sorted(
        f"{a} -> {b}"
        for a, b in graph.edges
        if a.split(".")[0] != b.split(".")[0] and b.split(".")[0] not in ALLOWED[a.split(".")[0]]
    )
    assert upward == []


def test_the_flows_never_import_the_doors(graph: nx.DiGraph) -> None:
    into_doors = sorted(f"{a} -> {b}" for a, b in graph.edges if b.startswith(DOORS) and not a.startswith(DOORS))
    assert into_doors == []


def test_no_module_circle(graph: nx.DiGraph) -> None:
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert circles == []


def test_a_skill_runs_without_the_agent() -> None:
    """``evoskill skills run``, a batch and an exported workflow load no agent stage and no benchmark."""
    program = (
        "import sys, flows.run_skill, flows.run_skill_batch, skills.transfer, skills.maker\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tasks', 'benchmarks')))"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
