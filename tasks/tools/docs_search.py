"""``search``: find documentation and examples for a task.

Providers share one interface. The offline default indexes what the installed packages ship:
docstrings and signatures (from the package knowledge graph, so nothing is imported), and
README/docs files, example scripts and notebooks found in their folders. A web provider
(Tavily) is used when ``EVOSKILL_TAVILY_API_KEY`` is set, with the local index as fallback.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from pathlib import Path
from typing import Literal, Protocol

import httpx
from pydantic import BaseModel

from deployments.progress import report
from deployments.settings import Settings
from skills.documents import ClassInfo, FunctionInfo, PackageModule
from skills.retrieval import TextIndex, split_name
from skills.store import SkillStore
from tasks.tools.errors import ToolError
from tasks.tools.package_graph import load_modules, package_roots, parse_local_package

__all__ = ["SearchHit", "SearchProvider", "LocalDocsSearch", "TavilySearch", "search_provider", "search"]

log = logging.getLogger(__name__)

_DOC_SUFFIXES = {".md", ".rst", ".txt", ".ipynb"}
_SECTION_CHARS = 1500


class SearchHit(BaseModel):
    """One search result: where it is, and a snippet of it."""

    title: str
    location: str
    snippet: str
    kind: Literal["api", "doc", "example", "web"]
    score: float = 0.0

    def __str__(self) -> str:
        return f"[{self.kind}] {self.title} — {self.location}\n  {self.snippet[:300]}"


class SearchProvider(Protocol):
    name: str

    def search(self, query: str, k: int = 5) -> list[SearchHit]: ...


def _doc_sections(path: Path) -> list[tuple[str, str]]:
    """(title, text) sections of a docs file: headings for Markdown/reST, cells for notebooks."""
    try:
        raw = path.read_text(errors="replace")
    except OSError:
        return []
    if path.suffix == ".ipynb":
        try:
            cells = json.loads(raw).get("cells", [])
        except (json.JSONDecodeError, AttributeError):
            return []
        text = "\n".join("".join(c.get("source", "")) for c in cells if isinstance(c, dict))
        return [(path.stem, text[: _SECTION_CHARS * 2])]
    parts = re.split(r"\n(?=#{1,3} )|\n(?=[^\n]+\n[=\-~]{3,}\n)", raw)
    return [(p.strip().splitlines()[0].lstrip("# ")[:80] if p.strip() else path.stem, p[:_SECTION_CHARS]) for p in parts if p.strip()]


def _class_text(cls: ClassInfo) -> tuple[str, str]:
    """A class's doc (its ``__init__``'s when the class has none) and its constructor signature."""
    init = next((m for m in cls.methods if m.name == "__init__"), None)
    doc = cls.doc or (init.doc if init else "")
    signature = FunctionInfo(name=cls.name, qualname=cls.qualname, params=init.params[1:]).signature() if init else ""
    return doc, signature


def _api_entries(module: PackageModule) -> list[tuple[SearchHit, str]]:
    """A module, its classes, functions and public methods, each as (hit, text to index); undocumented ones left out."""
    items = [(module.module, module.doc, "")] + [(c.qualname, *_class_text(c)) for c in module.classes]
    items += [(f.qualname, f.doc, f.signature()) for f in module.functions]
    items += [(m.qualname, m.doc, m.signature()) for c in module.classes for m in c.methods if not m.name.startswith("_")]
    entries = []
    for qualname, doc, signature in items:
        if doc or signature:
            leaf = split_name(qualname.split(".")[-1])
            hit = SearchHit(title=qualname, location=module.path, snippet=(signature + "  " + doc).strip(), kind="api")
            entries.append((hit, f"{leaf} {leaf} {split_name(qualname)} {doc}"))  # the name's own words count twice
    return entries


def _doc_entries(root: Path) -> list[tuple[SearchHit, str]]:
    """Sections of the docs files, notebooks and example scripts shipped in a package folder."""
    entries = []
    for path in sorted(root.rglob("*")) if root.is_dir() else []:
        example = path.suffix == ".py" and "example" in str(path.relative_to(root)).lower()
        if (path.suffix.lower() not in _DOC_SUFFIXES and not example) or (path.suffix == ".txt" and not path.stem.lower().startswith("readme")):
            continue
        kind: Literal["doc", "example"] = "example" if example or path.suffix == ".ipynb" else "doc"
        sections = [(path.stem, path.read_text(errors="replace")[:_SECTION_CHARS])] if example else _doc_sections(path)
        for title, text in sections:
            entries.append((SearchHit(title=title, location=str(path), snippet=" ".join(text.split())[:600], kind=kind), f"{title} {text}"))
    return entries


class LocalDocsSearch:
    """Offline search over the installed packages' APIs, docs files, examples and notebooks."""

    name = "local"

    def __init__(self, packages: list[str], cache: SkillStore, settings: Settings, parse_budget_s: float = 120.0):
        self.packages = packages
        self._cache = cache
        self._settings = settings  # extension modules are described in its sandbox
        self._budget = parse_budget_s
        self._entries: list[SearchHit] = []
        self._index: TextIndex | None = None
        self._lock = threading.Lock()

    def _build(self) -> None:
        entries: list[tuple[SearchHit, str]] = []
        for package in self.packages:
            report("search", "progress", f"indexing {package} for offline search (parsed once per cache, then reused)")
            try:
                parse_local_package(package, self._cache, self._settings, self._budget)
                roots = package_roots(package)
            except ToolError as exc:
                log.warning("search index: %s", exc)
                continue
            for module in load_modules(self._cache, package):
                entries += _api_entries(module)
            for root in roots:
                entries += _doc_entries(root)
        self._entries = [hit for hit, _ in entries]
        self._index = TextIndex([text for _, text in entries])

    def search(self, query: str, k: int = 5) -> list[SearchHit]:
        with self._lock:
            if self._index is None:
                self._build()
        assert self._index is not None
        return [self._entries[h.position].model_copy(update={"score": round(h.similarity, 3)}) for h in self._index.rank(query, k)]


class TavilySearch:
    """Web search through Tavily's API (needs ``EVOSKILL_TAVILY_API_KEY`` and a network)."""

    name = "tavily"
    url = "https://api.tavily.com/search"

    def __init__(self, api_key: str, timeout_s: float = 10.0, transport: httpx.BaseTransport | None = None):
        self._client = httpx.Client(timeout=timeout_s, transport=transport)
        self._key = api_key

    def search(self, query: str, k: int = 5) -> list[SearchHit]:
        try:
            response = self._client.post(self.url, json={"query": query, "max_results": k}, headers={"Authorization": f"Bearer {self._key}"})
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise ToolError(f"web search failed ({type(exc).__name__}: {exc}).", "the local index still answers: search works offline.") from exc
        return [
            SearchHit(title=r.get("title", ""), location=r.get("url", ""), snippet=r.get("content", "")[:600], kind="web", score=r.get("score", 0.0))
            for r in response.json().get("results", [])
        ]


class _WithFallback:
    """The web provider, falling back to the local index when it fails or finds nothing."""

    def __init__(self, web: SearchProvider, local: SearchProvider):
        self.name = f"{web.name}+{local.name}"
        self._web, self._local = web, local

    def search(self, query: str, k: int = 5) -> list[SearchHit]:
        try:
            return self._web.search(query, k) or self._local.search(query, k)
        except ToolError as exc:
            log.warning("%s", exc)
            return self._local.search(query, k)


_LOCAL: dict[tuple, LocalDocsSearch] = {}
_LOCAL_LOCK = threading.Lock()


def search_provider(settings: Settings, cache: SkillStore) -> SearchProvider:
    """The provider the settings choose (one local index per process and package cache)."""
    key = (tuple(settings.search_packages), id(cache))
    with _LOCAL_LOCK:
        if key not in _LOCAL:
            _LOCAL[key] = LocalDocsSearch(settings.search_packages, cache, settings, settings.graph_parse_budget_s)
        local = _LOCAL[key]
    if settings.tavily_api_key is not None and settings.search_provider in ("auto", "tavily"):
        return _WithFallback(TavilySearch(settings.tavily_api_key.get_secret_value(), settings.fetch_timeout_s), local)
    return local


def search(query: str, settings: Settings, cache: SkillStore, k: int = 5) -> list[SearchHit]:
    """Search documentation and examples: the installed packages' docstrings, docs files, example
    scripts and notebooks offline, the web too when a web search key is configured."""
    if not query.strip():
        raise ToolError("the query is empty.", "describe what you need, e.g. 'equation of state fit' or 'space group number'.")
    return search_provider(settings, cache).search(query, k)
