"""The Python environment: which packages a piece of code imports and which of them are missing."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import site
import sys
import sysconfig
from functools import cache
from pathlib import Path

from deployments.llm.replies import SCHEMA_TYPES, SCHEMA_WORDS

__all__ = ["imported_packages", "module_names", "missing_packages", "library_roots"]

_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# JSON-Schema vocabulary: a package name only when such a module is installed.
_SCHEMA_NAMES = SCHEMA_WORDS | SCHEMA_TYPES


def imported_packages(code: str) -> list[str]:
    """Top-level non-stdlib modules that ``code`` imports (empty if it does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return sorted(n for n in names if n not in sys.stdlib_module_names and n != "__future__")


def module_names(names: list[str]) -> list[str]:
    """The valid top-level non-stdlib module names among ``names`` (a model may put prose, dotted paths or schema words there).

    A JSON-Schema keyword or type name (``items``, ``type``, ``description``, ``object``) comes from a reply that
    echoed its schema and is dropped, unless it is a module importable here (``pattern`` is on PyPI; ``string``,
    ``enum``, ``array`` are stdlib and left out like every stdlib module). Only those few words are looked up.

    >>> module_names(["items", "type", "numpy", "ase.build", "json", "the numpy package"])
    ['ase', 'numpy']
    """
    tops = {n.strip().split(".")[0] for n in names}
    valid = (n for n in tops if _MODULE.fullmatch(n) and n not in sys.stdlib_module_names)
    return sorted(n for n in valid if n not in _SCHEMA_NAMES or _importable(n))


def _importable(module: str) -> bool:
    """Whether ``module`` is found here (never raises: a broken finder counts as not found)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_packages(modules: list[str]) -> list[str]:
    """The modules among ``modules`` that cannot be imported here."""
    return [module for module in module_names(modules) if not _importable(module)]


@cache
def library_roots() -> tuple[Path, ...]:
    """The folders installed packages live in, resolved: every site-packages folder and the standard library."""
    paths = sysconfig.get_paths()
    folders = [*site.getsitepackages(), paths["purelib"], paths["platlib"], paths["stdlib"], paths["platstdlib"]]
    return tuple(sorted({Path(p).resolve() for p in folders if Path(p).is_dir()}))
