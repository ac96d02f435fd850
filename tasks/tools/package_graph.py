"""``parse_local_package``: an installed package's API as a knowledge graph, parsed from source, never imported.

(Compiled extension modules have no source: they are described by a probe that imports them in the sandbox.)

Every module becomes a ``PackageModule`` document (classes with bases and methods, functions,
parameters with annotations and defaults, imports), cached in the store and re-parsed only
when its file changes. Parsing is bounded by a time budget: an unfinished package is marked
incomplete and the next call continues where this one stopped.
"""

from __future__ import annotations

import ast
import difflib
import importlib.metadata
import importlib.util
import time
from pathlib import Path

from deployments.packages import library_roots
from deployments.secret_paths import is_inside
from deployments.settings import Settings
from skills.documents import ClassInfo, FunctionInfo, PackageGraph, PackageModule, Param
from skills.store import SkillStore
from tasks.tools.errors import ToolError
from tasks.tools.extension_modules import (
    EXTENSION_SUFFIXES,
    extension_module_name,
    parse_extension_modules,
)

__all__ = ["package_roots", "package_files", "parse_module", "parse_local_package", "load_modules", "installed_top_level"]

_MAX_FILE_BYTES = 2_000_000
_SKIPPED_DIRS = {"test", "tests", "testing", "__pycache__"}
_DOC_CHARS = 400


def installed_top_level() -> list[str]:
    """Importable top-level names of the installed distributions."""
    return sorted(name for name in importlib.metadata.packages_distributions() if name.isidentifier())


def package_roots(package: str) -> list[Path]:
    """Folders (or the single file) of ``package`` without importing it, resolved; a clear error when it is not a
    dotted name of an installed package, or when its files lie outside the installed packages and the standard library."""
    if not all(part.isidentifier() for part in package.split(".")):
        raise ToolError(f"{package!r} is not a dotted Python name such as 'pymatgen.symmetry'.", "check_installed_packages lists what is installed.")
    top = package.split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        close = difflib.get_close_matches(top, installed_top_level(), n=3, cutoff=0.6)
        raise ToolError(
            f"no installed package named {top!r}" + (f"; did you mean {close}?" if close else "."),
            "call check_installed_packages to list what is installed.",
        )
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] or ([Path(spec.origin)] if spec.origin else [])
    sub = package.split(".")[1:]
    if sub:
        roots = [r.joinpath(*sub) for r in roots if r.is_dir()]
        roots = [r for r in roots if r.is_dir()] or [r.with_suffix(".py") for r in roots if r.with_suffix(".py").is_file()]
        if not roots:
            raise ToolError(f"{package!r} is not a subpackage or module of {top!r}.", f"parse_local_package({top!r}) parses all of it.")
    installed = [root.resolve() for root in roots if is_inside(root.resolve(), library_roots())]
    if not installed:
        raise ToolError(f"{package!r} is not an installed package (its files are outside site-packages and the standard library).",
                        "call check_installed_packages to list what is installed.")  # fmt: skip
    return installed


def package_files(package: str) -> list[tuple[str, Path]]:
    """``(module name, file)`` for every Python source file and compiled extension of ``package`` (test folders left out)."""
    found: list[tuple[str, Path]] = []
    for root in package_roots(package):
        if root.is_file():
            found.append((package, root))
            continue
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", *EXTENSION_SUFFIXES) and is_inside(p.resolve(), library_roots())):
            parts = list(path.relative_to(root).parts)
            parts[-1] = extension_module_name(path) if path.suffix in EXTENSION_SUFFIXES else path.stem
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if all(p.isidentifier() for p in parts) and not _SKIPPED_DIRS & set(parts[:-1]):
                found.append((".".join([package, *parts]), path))
    return found


def _stamp(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def _first_paragraph(doc: str | None) -> str:
    text = (doc or "").strip().split("\n\n")[0]
    return " ".join(text.split())[:_DOC_CHARS]


def _text(node: ast.AST | None) -> str | None:
    return ast.unparse(node) if node is not None else None


def _params(args: ast.arguments) -> list[Param]:
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = [Param(name=a.arg, annotation=_text(a.annotation), default=_text(d)) for a, d in zip(positional, defaults, strict=True)]
    if args.vararg:
        params.append(Param(name=args.vararg.arg, annotation=_text(args.vararg.annotation), kind="var_positional"))
    params += [
        Param(name=a.arg, annotation=_text(a.annotation), default=_text(d), kind="keyword") for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    if args.kwarg:
        params.append(Param(name=args.kwarg.arg, annotation=_text(args.kwarg.annotation), kind="var_keyword"))
    return params


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, owner: str) -> FunctionInfo:
    return FunctionInfo(
        name=node.name,
        qualname=f"{owner}.{node.name}",
        lineno=node.lineno,
        params=_params(node.args),
        returns=_text(node.returns),
        doc=_first_paragraph(ast.get_docstring(node)),
    )


def _imports(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    imports: dict[str, str] = {}
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imports[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            origin = node.module or ""
            if node.level:
                anchor = base[: len(base) - node.level + 1] if node.level > 1 else base
                origin = ".".join([*anchor, *([origin] if origin else [])])
            for alias in node.names:
                if alias.name != "*":
                    imports[alias.asname or alias.name] = f"{origin}.{alias.name}" if origin else alias.name
    return imports


def _resolve(expr: str, imports: dict[str, str], local: set[str], module: str) -> str:
    head, _, rest = expr.partition(".")
    if head in local:
        return f"{module}.{expr}"
    if head in imports:
        return imports[head] + (f".{rest}" if rest else "")
    return expr


def parse_module(package: str, module: str, path: Path) -> PackageModule:
    """One module's classes, functions and imports; a file that does not parse is kept with its error."""
    doc = PackageModule(package=package, module=module, path=str(path), stamp=_stamp(path))
    if path.stat().st_size > _MAX_FILE_BYTES:
        doc.error = f"skipped: larger than {_MAX_FILE_BYTES} bytes"
        return doc
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
        doc.error = f"does not parse: {type(exc).__name__}: {exc}"
        return doc
    doc.doc = _first_paragraph(ast.get_docstring(tree))
    doc.imports = _imports(tree, module, path.name == "__init__.py")
    local = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            doc.functions.append(_function(node, module))
        elif isinstance(node, ast.ClassDef):
            qualname = f"{module}.{node.name}"
            doc.classes.append(
                ClassInfo(
                    name=node.name,
                    qualname=qualname,
                    lineno=node.lineno,
                    bases=[_resolve(ast.unparse(b), doc.imports, local, module) for b in node.bases],
                    doc=_first_paragraph(ast.get_docstring(node)),
                    methods=[_function(m, qualname) for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))],
                )
            )
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            _assignment(node.targets[0], node.value, doc, module)
    return doc


def _assignment(target: ast.expr, value: ast.expr, doc: PackageModule, module: str) -> None:
    """Functions defined by assignment: ``MolWt = lambda *x: …`` and, later, ``MolWt.__doc__ = "…"``."""
    if isinstance(target, ast.Name) and isinstance(value, ast.Lambda):
        doc.functions.append(FunctionInfo(name=target.id, qualname=f"{module}.{target.id}", lineno=target.lineno, params=_params(value.args)))
    elif (
        isinstance(target, ast.Attribute) and target.attr == "__doc__" and isinstance(target.value, ast.Name)
        and isinstance(value, ast.Constant) and isinstance(value.value, str)
    ):  # fmt: skip
        for function in doc.functions:
            if function.name == target.value.id:
                function.doc = _first_paragraph(value.value)


def _version(package: str) -> str | None:
    top = package.split(".")[0]
    dists = importlib.metadata.packages_distributions().get(top, [])
    # a namespace package spans several distributions: prefer the one named like the package
    for dist in sorted(dists, key=lambda d: (d.lower().replace("_", "-") != top.lower(), d)):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def parse_local_package(package: str, cache: SkillStore, settings: Settings, budget_s: float = 60.0) -> PackageGraph:
    """Parse an installed package (e.g. ``"pymatgen"`` or ``"pymatgen.symmetry"``) into the knowledge graph in the package cache.

    Unchanged files are reused from earlier parses; new or changed ones are parsed until
    ``budget_s`` runs out (the result then says ``complete=False``: call again to continue).
    Query the result with ``query_knowledge_graph``.
    """
    started = time.perf_counter()
    files = package_files(package)
    if not files:
        raise ToolError(f"{package!r} has no Python source files to parse.", "check_package_version tells where it is installed.")
    known = {m.module: m.stamp for m in load_modules(cache, package)}
    fresh: list[PackageModule] = []
    parsed = changed = 0
    extensions: list[tuple[str, Path, str]] = []
    for module, path in files:
        if known.get(module) == _stamp(path):
            parsed += 1
            continue
        if time.perf_counter() - started > budget_s:
            break
        if path.suffix in EXTENSION_SUFFIXES:  # described together by one sandboxed probe below
            extensions.append((module, path, _stamp(path)))
            continue
        fresh.append(parse_module(package.split(".")[0], module, path))
        parsed += 1
        changed += 1
        if len(fresh) >= 200:  # write in batches: an interrupted parse keeps what it did
            cache.put_many(fresh)
            fresh = []
    cache.put_many(fresh)
    if extensions:
        remaining = budget_s - (time.perf_counter() - started)
        cache.put_many(parse_extension_modules(package.split(".")[0], extensions, remaining, settings))
        parsed += len(extensions)
        changed += len(extensions)
    graph = PackageGraph(
        id=package, version=_version(package), files_total=len(files), files_parsed=parsed,
        complete=parsed == len(files), parse_s=round(time.perf_counter() - started, 3),
    )  # fmt: skip
    previous = cache.get(PackageGraph, package)
    if previous is not None and not changed:  # nothing re-parsed: the graph built from it is still current
        graph.updated = previous.updated
    cache.put(graph, reindex=False)
    return graph


def load_modules(cache: SkillStore, package: str) -> list[PackageModule]:
    """The parsed modules of ``package`` (a top-level package or a subpackage) in the package cache."""
    top = package.split(".")[0]
    modules = cache.all(PackageModule, {"package": top})
    if package == top:
        return modules
    return [m for m in modules if m.module == package or m.module.startswith(package + ".")]
