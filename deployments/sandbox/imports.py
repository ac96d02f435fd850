"""The modules a run's code imports, read from its source (nothing of it runs), so a warm executor can hold them.

A warm executor whose imports cover a run's saves the run every import it has made before (``execute.py`` keys
executors by them). Only modules that exist here under the packages the warm executors import (their top-level
names, ``SandboxLimits.warm_packages``) count: code cannot make an executor import anything else. ``from a import b``
counts ``a.b`` where ``b`` is a module file of ``a`` (``from rdkit.Chem import Descriptors``), never a class
(``from pymatgen.core import Structure``); that is read from the package's folders, without importing it.

>>> code_imports("from rdkit.Chem import Descriptors\\nimport ase.eos as eos\\n", {"rdkit", "ase"})   # doctest: +SKIP
frozenset({'rdkit.Chem', 'rdkit.Chem.Descriptors', 'ase.eos'})
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

__all__ = ["MAX_IMPORTS", "code_imports", "roots_of"]

MAX_IMPORTS = 64  # more than this many, and the code's imports key no executor of their own
MAX_CODE_CHARS = 256_000  # longer code is not read (its run goes to the packages' executor)
_SUFFIXES = tuple(importlib.machinery.all_suffixes())
_NEVER = frozenset({"tests", "test", "testing", "conftest"})  # a package's own tests: nothing a run needs warm


def roots_of(packages: Iterable[str]) -> frozenset[str]:
    """The top-level package names of ``packages`` (``pymatgen.core`` → ``pymatgen``)."""
    return frozenset(name.split(".", 1)[0] for name in packages)


def code_imports(code: str, roots: Iterable[str]) -> frozenset[str]:
    """The modules under ``roots`` that ``code`` imports and that exist here: public names only (no ``_private`` or
    ``__main__`` part, no package's tests). Empty where the code does not parse or is longer than ``MAX_CODE_CHARS``."""
    if len(code) > MAX_CODE_CHARS:
        return frozenset()
    return _imports(code, frozenset(roots))


def _public(name: str) -> bool:
    return not any(part.startswith("_") or part in _NEVER for part in name.split("."))


@lru_cache(maxsize=64)
def _imports(code: str, roots: frozenset[str]) -> frozenset[str]:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            named.add(node.module)
            named.update(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")
    return frozenset(name for name in named if name.split(".", 1)[0] in roots and _public(name) and _exists(name))


@lru_cache(maxsize=4096)
def _exists(name: str) -> bool:
    """Whether module ``name`` is a file or package here: its top-level package found on the path (not imported), the rest
    looked up in its folders."""
    root, *parts = name.split(".")
    try:
        spec = importlib.util.find_spec(root)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    folders = [Path(p) for p in (spec.submodule_search_locations or [])]
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        packages = [folder / part for folder in folders if (folder / part).is_dir()]
        if last and (packages or any((folder / f"{part}{suffix}").is_file() for folder in folders for suffix in _SUFFIXES)):
            return True
        folders = packages
    return not parts
