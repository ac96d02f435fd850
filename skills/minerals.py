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

from skills.chemistry import prototype_table, resolve_name, same_formula

__all__ = ["names_formula", "prototype_groups", "prototype_names"]


def prototype_names() -> frozenset[str]:
    """The one-word mineral and prototype names the AFLOW library knows (lowercase)."""
    return frozenset(prototype_table())


def prototype_groups(word: str) -> frozenset[int]:
    """The space-group numbers the AFLOW library builds a mineral of this name in (empty when it does not know it)."""
    return prototype_table().get(word.lower(), (frozenset(), frozenset()))[1]


def _formulas(word: str) -> set[str]:
    """Every formula ``word`` can name: the prototype library's and the name database's."""
    found = set(prototype_table().get(word.lower(), (frozenset(), frozenset()))[0])
    named = resolve_name(word)
    return found | {named.formula} if named is not None and named.formula else found


def names_formula(word: str, formula: str) -> bool:
    """Whether ``word`` (a mineral or chemical name) can name a substance of ``formula``."""
    return any(same_formula(candidate, formula) for candidate in _formulas(word))
