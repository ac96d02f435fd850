"""Minerals and structure prototypes by name: the formulas a name can stand for and the space groups it is built in.

A question often names its substance twice, by mineral and by formula ("cuprite (Cu2O)", "chalcopyrite, CuFeS2",
"Periclase (MgO)"). The name then says nothing a skill must explain: it is the formula's other name. The names come from
pymatgen's AFLOW prototype library (``aflow_prototypes.json.gz``: "Cuprite", "Zincblende, Sphalerite", each with its
prototype structure) and from the name database, whose formula is also read from its common name where it writes one
("magnetite (Fe3O4)").

>>> names_formula("cuprite", "Cu2O"), names_formula("chalcopyrite", "CuFeS2"), names_formula("magnetite", "Fe3O4")
(True, True, True)
>>> names_formula("anatase", "Cu2O"), sorted(prototype_groups("cuprite")), sorted(prototype_groups("periclase"))
(False, [224], [])
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from functools import cache
from importlib.util import find_spec
from pathlib import Path

from pymatgen.core import Composition

from skills.chemistry import formula_text, resolve_name, same_formula

__all__ = ["names_formula", "prototype_groups", "prototype_names"]

_NOT_NAMES = frozenset("alpha beta gamma delta high low red black white theoretical cubic hexagonal orthorhombic tetragonal".split())
"""Words of the library's labels that name no mineral ("alpha", "High Pressure …")."""


@cache
def _prototypes() -> dict[str, tuple[frozenset[str], frozenset[int]]]:
    """Each one-word mineral or prototype name (lowercase) of the AFLOW library: its formulas and space-group numbers."""
    spec = find_spec("pymatgen.analysis.prototypes")
    if spec is None or spec.origin is None:
        return {}
    path = Path(spec.origin).with_name("aflow_prototypes.json.gz")
    if not path.exists():
        return {}
    formulas: dict[str, set[str]] = {}
    groups: dict[str, set[int]] = {}
    for entry in json.loads(gzip.open(path).read()):
        tags = entry.get("tags", {})
        label = str(tags.get("aflow", "")).split("_")
        counts = Counter(species["element"] for site in entry["snl"]["sites"] for species in site["species"])
        try:
            formula = formula_text(Composition(dict(counts)).reduced_formula)
        except (ValueError, KeyError):
            continue
        for name in str(tags.get("mineral") or "").split(","):
            word = name.strip().lower()
            if re.fullmatch(r"[a-z]{4,}", word) and word not in _NOT_NAMES:
                formulas.setdefault(word, set()).add(formula)
                if len(label) > 2 and label[2].isdigit():
                    groups.setdefault(word, set()).add(int(label[2]))
    return {word: (frozenset(found), frozenset(groups.get(word, ()))) for word, found in formulas.items()}


def prototype_names() -> frozenset[str]:
    """The one-word mineral and prototype names the AFLOW library knows (lowercase)."""
    return frozenset(_prototypes())


def prototype_groups(word: str) -> frozenset[int]:
    """The space-group numbers the AFLOW library builds a mineral of this name in (empty when it does not know it)."""
    return _prototypes().get(word.lower(), (frozenset(), frozenset()))[1]


def _formulas(word: str) -> set[str]:
    """Every formula ``word`` can name: the library's, the name database's, the one its common name writes."""
    found = set(_prototypes().get(word.lower(), (frozenset(), frozenset()))[0])
    named = resolve_name(word)
    if named is not None and named.formula:
        found.add(named.formula)
        written = re.search(r"\(([A-Z][A-Za-z0-9]*)\)\s*$", named.name or "")  # "magnetite (Fe3O4)"
        if written:
            try:
                found.add(formula_text(written.group(1)))
            except (ValueError, KeyError):
                pass
    return found


def names_formula(word: str, formula: str) -> bool:
    """Whether ``word`` (a mineral or chemical name) can name a substance of ``formula``."""
    return any(same_formula(candidate, formula) for candidate in _formulas(word))
