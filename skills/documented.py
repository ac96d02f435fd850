"""What the functions a skill's code calls say they compute: the first sentence of each one's docstring.

RDKit's ``Descriptors.MolWt`` is "The average molecular weight of the molecule" and ``Crippen.MolLogP`` the
"Wildman-Crippen LogP value": a skill that calls them explains "average" and "Wildman" though its verified
question never said them. Only the installed scientific packages of ``DOCUMENTED`` are looked up, by import,
never the skill's own code (which is not run here).

>>> documented_words("from rdkit.Chem import Descriptors\\nprint(Descriptors.MolWt(mol))")
'The average molecular weight of the molecule'
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import lru_cache
from typing import Any

from skills.disclosure import imported_names

__all__ = ["DOCUMENTED", "documented_words"]

DOCUMENTED = frozenset({"rdkit", "pymatgen", "ase", "spglib", "smact"})
"""Packages whose functions' docstrings may explain a skill's words (imported here only to read them)."""

_SIGNATURE = re.compile(r"^\s*\w+\s*\(.*?\)\s*->\s*[\w.]+\s*:\s*", re.S)  # Boost.Python's "CalcTPSA( (Mol)mol …) -> float :"


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name → dotted path, for the code's imports from the documented packages."""
    return {name: path for name, path in imported_names(tree).items() if path.split(".")[0] in DOCUMENTED}


def _resolve(path: str) -> Any:
    """The object a dotted path names (module, then attributes), or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # noqa: BLE001  # not a module at this depth, or it fails to import: try a shorter one
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute, None)
            if found is None:
                return None
        return found
    return None


def _chains(tree: ast.Module) -> set[str]:
    """Dotted names the code uses: ``Descriptors.MolWt``, ``Composition``, ``smact_validity``."""
    chains = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            parts: list[str] = []
            current: ast.expr = node
            while isinstance(current, ast.Attribute):
                parts.append(current.attr)
                current = current.value
            if isinstance(current, ast.Name):
                chains.add(".".join([current.id, *reversed(parts)]))
    return chains


def _first_sentence(doc: str) -> str:
    """The docstring's first sentence, less a Boost.Python signature, examples and the C++ signature."""
    paragraph = re.split(r"\n\s*\n|>>>|C\+\+ signature", _SIGNATURE.sub("", doc.strip()).strip(), maxsplit=1)[0]
    return re.split(r"(?<=[.!?])\s", " ".join(paragraph.split()), maxsplit=1)[0].rstrip(".")


@lru_cache(maxsize=256)
def documented_words(code: str) -> str:
    """The first sentence of the docstring of each documented-package function or class the code names, joined."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    imports = _imports(tree)
    sentences = []
    for chain in sorted(_chains(tree)):
        head, _, rest = chain.partition(".")
        if head not in imports:
            continue
        found = _resolve(f"{imports[head]}.{rest}" if rest else imports[head])
        if not callable(found) or isinstance(found, type(importlib)):
            continue  # a module's docstring describes the module, a constant's its type: neither what the code computes
        doc = getattr(found, "__doc__", None)
        if isinstance(doc, str) and doc.strip():
            sentences.append(_first_sentence(doc))
    return "; ".join(dict.fromkeys(s for s in sentences if s))
