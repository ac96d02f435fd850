"""``query_knowledge_graph``: questions about a parsed package's API, answered from its knowledge graph.

The graph (networkx) has a node per module, class, function and method; edges say which
module defines what, which class has which method, and which class inherits from which.
"""

from __future__ import annotations

import difflib
import re

import networkx as nx
from pydantic import BaseModel, Field

from skills.documents import FunctionInfo, PackageGraph, PackageModule
from skills.store import SkillStore
from tasks.tools.errors import ToolError
from tasks.tools.package_graph import load_modules

__all__ = ["GraphAnswer", "build_graph", "query_knowledge_graph", "QUERY_FORMS"]

QUERY_FORMS = [
    "classes with method NAME",
    "signature of NAME",
    "subclasses of NAME",
    "methods of CLASS",
    "where is NAME",
    "find NAME (fuzzy search over every name)",
]


class GraphAnswer(BaseModel):
    """What a graph query found."""

    query: str
    results: list[str] = Field(default_factory=list)
    note: str = ""

    def __str__(self) -> str:
        lines = self.results or ["(nothing found)"]
        return "\n".join(lines + ([self.note] if self.note else []))


def build_graph(modules: list[PackageModule]) -> nx.DiGraph:
    """The knowledge graph of parsed modules."""
    graph = nx.DiGraph()
    for module in modules:
        graph.add_node(module.module, kind="module", doc=module.doc, path=module.path)
        for function in module.functions:
            graph.add_node(function.qualname, kind="function", info=function, path=module.path)
            graph.add_edge(module.module, function.qualname, rel="defines")
        for cls in module.classes:
            graph.add_node(cls.qualname, kind="class", info=cls, path=module.path)
            graph.add_edge(module.module, cls.qualname, rel="defines")
            for method in cls.methods:
                graph.add_node(method.qualname, kind="method", info=method, path=module.path)
                graph.add_edge(cls.qualname, method.qualname, rel="has_method")
            for base in cls.bases:
                graph.add_edge(cls.qualname, base, rel="inherits")
    return graph


def _named(graph: nx.DiGraph, name: str, kinds: tuple[str, ...]) -> list[str]:
    """Nodes of ``kinds`` whose qualified name is ``name`` or ends with ``.name``."""
    return sorted(n for n, d in graph.nodes(data=True) if d.get("kind") in kinds and (n == name or n.endswith("." + name)))


def _signature(graph: nx.DiGraph, node: str) -> str:
    data = graph.nodes[node]
    if data["kind"] == "class":
        init = next((m for m in data["info"].methods if m.name == "__init__"), None)
        params = [p for p in init.params[1:]] if init else []
        return FunctionInfo(name=data["info"].name, qualname=node, params=params).signature() + f"  [class] {data['info'].doc}"
    info = data["info"]
    return f"{info.signature()}  {info.doc}".rstrip()


def _subclasses(graph: nx.DiGraph, name: str) -> list[str]:
    """Classes deriving from ``name`` directly or indirectly (bases matched by their last name component)."""
    leaf = name.split(".")[-1]
    found: set[str] = set()
    frontier = {leaf}
    while frontier:
        new = {
            child
            for child, base, d in graph.edges(data=True)
            if d.get("rel") == "inherits" and base.split(".")[-1] in frontier and child not in found
        }
        found |= new
        frontier = {c.split(".")[-1] for c in new}
    return sorted(found)


def _fuzzy(graph: nx.DiGraph, name: str, n: int = 8) -> list[str]:
    leaves: dict[str, list[str]] = {}
    for node, data in graph.nodes(data=True):
        if data.get("kind") in ("class", "function", "method"):
            leaves.setdefault(node.split(".")[-1], []).append(node)
    close = difflib.get_close_matches(name, list(leaves), n=n, cutoff=0.6)
    close += [leaf for leaf in leaves if name.lower() in leaf.lower() and leaf not in close]
    return [q for leaf in close[:n] for q in sorted(leaves[leaf])[:3]]


_FORMS = [
    (re.compile(r"^(?:which )?classes (?:with|that define|defining|having) (?:the )?method\s+(\w+)", re.I), "with_method"),
    (re.compile(r"^(?:which classes define)\s+(\w+)", re.I), "with_method"),
    (re.compile(r"^signature of\s+([\w.]+)", re.I), "signature"),
    (re.compile(r"^subclasses of\s+([\w.]+)", re.I), "subclasses"),
    (re.compile(r"^methods of\s+([\w.]+)", re.I), "methods"),
    (re.compile(r"^where is\s+([\w.]+)(?: defined)?", re.I), "where"),
    (re.compile(r"^find\s+([\w.]+)", re.I), "find"),
]


_GRAPHS: dict[tuple[int, str], tuple[str, nx.DiGraph]] = {}


def _graph(cache: SkillStore, package: str) -> nx.DiGraph:
    """The package's graph, rebuilt only after a parse of the package (or one of its subpackages) changed it."""
    top = package.split(".")[0]
    stamp = str(sorted((g.id, g.updated.isoformat()) for g in cache.all(PackageGraph) if g.id.split(".")[0] == top))
    cached = _GRAPHS.get((id(cache), package))
    if cached is None or cached[0] != stamp:
        modules = load_modules(cache, package)
        if not modules:
            raise ToolError(f"{package!r} has not been parsed yet.", f"call parse_local_package({package!r}) first, then ask again.")
        cached = (stamp, build_graph(modules))
        _GRAPHS[(id(cache), package)] = cached
    return cached[1]


def query_knowledge_graph(package: str, query: str, cache: SkillStore) -> GraphAnswer:
    """Answer ``query`` about ``package``'s API from its knowledge graph.

    Query forms: "classes with method NAME", "signature of NAME", "subclasses of NAME",
    "methods of CLASS", "where is NAME", "find NAME". Run ``parse_local_package`` first.
    """
    graph = _graph(cache, package)
    text = query.strip().rstrip("?")
    found = next(((m.group(1), form) for pattern, form in _FORMS if (m := pattern.match(text))), None)
    if found is None:
        raise ToolError(f"cannot read the query {query!r}.", "use one of: " + "; ".join(QUERY_FORMS) + ".")
    name, form = found
    answer = GraphAnswer(query=query)
    if form == "with_method":
        answer.results = sorted({m.rsplit(".", 1)[0] for m in _named(graph, name, ("method",))})
    elif form == "signature":
        answer.results = [_signature(graph, n) for n in _named(graph, name, ("class", "function", "method"))]
    elif form == "subclasses":
        answer.results = _subclasses(graph, name)
    elif form == "methods":
        answer.results = [
            _signature(graph, m) for c in _named(graph, name, ("class",)) for m in sorted(graph.successors(c)) if graph.edges[c, m]["rel"] == "has_method"
        ]
    elif form == "where":
        answer.results = [f"{n}  ({graph.nodes[n]['kind']}, {graph.nodes[n]['path']}:{graph.nodes[n]['info'].lineno})" for n in _named(graph, name, ("class", "function", "method"))]
    else:
        answer.results = _fuzzy(graph, name)
    if not answer.results and form != "find":
        close = _fuzzy(graph, name.split(".")[-1], n=5)
        answer.note = f"no exact match for {name!r}" + (f"; close names: {close}" if close else "") + "."
    return answer
