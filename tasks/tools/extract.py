"""``extract_code_from_url`` and ``retrieve_extracted_code``: collect code examples, then find them again.

Sources: public http(s) pages when reachable (Sphinx/MkDocs HTML, Markdown, notebooks; never a loopback
or private address: ``deployments/public_web.py``), and readable local files always — Markdown and reST
docs, notebooks, HTML pages, Python files (doctest examples in docstrings, or the whole of an example
script). Each example keeps the text around it. Extracted code is cached in the store as the caller's,
where ``retrieve_extracted_code`` searches that user's own.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from pathlib import Path

import httpx
from bs4 import BeautifulSoup
from markdown_it import MarkdownIt

from deployments.public_web import FetchRefused, fetch_public
from deployments.settings import Settings
from skills.documents import ExtractedCode
from skills.store import SkillStore
from tasks.tools.errors import ToolError
from tasks.tools.read_file import allowed_path

__all__ = ["code_blocks", "extract_code_from_url", "retrieve_extracted_code"]

_CONTEXT_CHARS = 400
_MAX_BYTES = 5_000_000


def _squash(text: str) -> str:
    return " ".join(text.split())[-_CONTEXT_CHARS:]


def _markdown(text: str) -> list[tuple[str, str]]:
    blocks, context = [], ""
    for token in MarkdownIt().parse(text):
        if token.type == "inline":
            context = token.content
        elif token.type in ("fence", "code_block") and token.content.strip():
            blocks.append((token.content, context))
    return blocks


_RST_DIRECTIVE = re.compile(r"^\.\. (?:code-block|code|sourcecode)::\s*(\w*)\s*$")


def _rst(text: str) -> list[tuple[str, str]]:
    lines, blocks, context, i = text.splitlines(), [], "", 0
    while i < len(lines):
        line = lines[i]
        directive = _RST_DIRECTIVE.match(line.strip())
        if directive or (line.rstrip().endswith("::") and not line.strip().startswith("..")):
            if not directive and line.strip() != "::":  # "Fit it::" introduces the block and reads "Fit it:"
                context = line.strip()[:-1]
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].strip().startswith(":")):
                i += 1
            body = []
            while i < len(lines) and (not lines[i].strip() or lines[i][:1].isspace()):
                body.append(lines[i])
                i += 1
            code = "\n".join(body).strip("\n")
            if code.strip():
                blocks.append((textwrap.dedent(code), context))
            continue
        if line.strip() and not re.fullmatch(r"[=\-~^*#`'\"]+", line.strip()):
            context = line.strip()
        i += 1
    return blocks + _doctests(text, "")


def _doctests(text: str, context: str) -> list[tuple[str, str]]:
    """Runs of ``>>>``/``...`` lines, as code."""
    blocks: list[tuple[str, str]] = []
    current: list[str] = []
    for line in text.splitlines() + [""]:
        stripped = line.strip()
        if stripped.startswith(">>>") or (current and stripped.startswith("...")):
            current.append(stripped[4:])
        elif current:
            blocks.append(("\n".join(current), context))
            current = []
    return blocks


def _notebook(text: str) -> list[tuple[str, str]]:
    try:
        cells = json.loads(text).get("cells", [])
    except (json.JSONDecodeError, AttributeError) as exc:
        raise ToolError("the notebook is not valid JSON.", "pass a .ipynb file saved by Jupyter.") from exc
    blocks, context = [], ""
    for cell in cells:
        source = "".join(cell.get("source", "")) if isinstance(cell, dict) else ""
        if cell.get("cell_type") == "markdown":
            context = source
        elif cell.get("cell_type") == "code" and source.strip():
            blocks.append((source, context))
    return blocks


def _html(text: str) -> list[tuple[str, str]]:
    soup = BeautifulSoup(text, "html.parser")
    blocks = []
    for pre in soup.find_all("pre"):
        previous = pre.find_previous(["p", "h1", "h2", "h3", "h4", "dt"])
        blocks.append((pre.get_text(), previous.get_text(" ") if previous else ""))
    return blocks


def _python(text: str, name: str) -> list[tuple[str, str]]:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ToolError(f"{name} is not valid Python ({exc.msg}, line {exc.lineno}).", "pass a .py file that parses.") from exc
    blocks = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node) or ""
            where = getattr(node, "name", name)
            blocks += _doctests(doc, f"{where}: {doc.strip().splitlines()[0] if doc.strip() else ''}")
    if not blocks and ("example" in name.lower() or "__main__" in text):  # an example script: the whole of it
        blocks.append((text, ast.get_docstring(tree) or name))
    return blocks


def code_blocks(text: str, kind: str, name: str = "") -> list[tuple[str, str]]:
    """``(code, context)`` pairs from a document of ``kind`` (md, rst, ipynb, html, py)."""
    parsers = {"md": _markdown, "rst": _rst, "txt": _rst, "ipynb": _notebook, "html": _html, "htm": _html}
    if kind == "py":
        return _python(text, name)
    if kind not in parsers:
        raise ToolError(f"cannot extract code from a .{kind} file.", "use Markdown, reST, notebooks, HTML pages or Python files.")
    return parsers[kind](text)


_OFFLINE = "search finds the documentation of installed packages offline; extract_code_from_url also takes local files."


def _fetch(url: str, timeout_s: float) -> tuple[str, str]:
    try:
        page = fetch_public(url, timeout_s, _MAX_BYTES)
    except FetchRefused as exc:
        raise ToolError(f"cannot fetch {url}: {exc}; only public web pages are fetched.", _OFFLINE) from exc
    except httpx.HTTPError as exc:
        raise ToolError(f"cannot fetch {url} ({type(exc).__name__}: {exc or 'no detail'}); the network may be unreachable.", _OFFLINE) from exc
    path = page.url.split("#")[0].split("?")[0].lower()
    return page.text, next((k for k in ("ipynb", "md", "rst", "py") if path.endswith("." + k)), "html")


def extract_code_from_url(url: str, store: SkillStore, settings: Settings, user: str) -> list[ExtractedCode]:
    """Extract the code examples (with the text around each) from a web page or a local file, and cache them.

    ``url``: a public http(s) address, or a path to a local docs file, notebook or Python file of
    an installed package. Later, ``retrieve_extracted_code`` finds them by topic. The examples are
    kept as ``user``'s (the caller's, bound by the toolbox): no other user retrieves them.
    """
    if url.startswith(("http://", "https://")):
        text, kind = _fetch(url, settings.fetch_timeout_s)
    elif "://" in url:
        raise ToolError(f"{url} is neither an http(s) address nor a file path.", "pass https://… or a path such as site-packages/ase/eos.py.")
    else:
        path = allowed_path(url.removeprefix("file:"), settings)
        if not path.is_file():
            raise ToolError(f"{url} is not a file.", "search lists documentation files of the installed packages.")
        if path.stat().st_size > _MAX_BYTES:
            raise ToolError(f"{url} is larger than {_MAX_BYTES} bytes.", "read parts of it with read_file.")
        raw = path.read_bytes()
        if b"\x00" in raw[:8192]:
            raise ToolError(f"{url} is a binary file.", "extract from docs, notebooks or .py sources.")
        text, kind = raw.decode("utf-8", errors="replace"), path.suffix.lower().lstrip(".")
    examples = [
        ExtractedCode(source=url, user=user, code=code.strip("\n"), context=_squash(context))
        for code, context in code_blocks(text, kind, Path(url).name)
        if code.strip()
    ]
    store.put_many(examples)
    return examples


def retrieve_extracted_code(query: str, store: SkillStore, user: str, k: int = 3) -> list[ExtractedCode]:
    """The ``k`` extracted code examples most similar to ``query`` (run extract_code_from_url first); ``user``'s own only."""
    if store.count("extracted_code", {"user": user}) == 0:
        raise ToolError("no code has been extracted yet.", "call extract_code_from_url on a page or docs file first (search finds them).")
    return [example for example, _ in store.search_extracted_code(query, k, user=user)]
