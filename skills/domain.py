"""What a skill was verified on: why parameter values lie outside it, one rule each, for binding and every door.

A skill answers only where it was verified. Each value must be of its parameter's kind (an element symbol, a
formula, a SMILES RDKit reads), within its bounds, a whole number for an integer, and of its default's make-up
where the code uses a formula's elements by position; and a skill whose code hides a constant that changes the
answer (``hidden_inputs``) answers only for its own substance. Binding (``skills/binding.py``) reads the values from a
question and adds its own rule for a question's silence; the doors (the CLI, MCP tools, the run-skill flows,
batches, jobflow jobs, the skills page) take them as given and call ``checked_params``; ``run_skill``
(``skills/runner.py``) refuses them too.

>>> from skills.documents import Skill, TestCase
>>> schema = {"properties": {"formula": {"type": "string", "default": "N2", "kind": "formula", "derives": "elements"}}}
>>> skill = Skill(name="atomization", code="def run(formula: str = 'N2'):\\n    return 1.0\\n", parameters=schema,
...               test_case=TestCase(expected=1.0))
>>> domain_problems(skill, {"formula": "O2"})
[]
>>> domain_problems(skill, {"formula": "CO"})
['the skill uses the elements of formula by position, verified on N2; CO has another make-up']
>>> try:
...     checked_params(skill, {"formula": "CO"})
... except OutsideDomain as exc:
...     print(exc)
atomization-v1 was not verified for formula=CO: the skill uses the elements of formula by position, verified on N2; CO has another make-up
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from skills.chemistry import WORD_LIKE_SYMBOLS, canonical_smiles, formula_elements, is_element, is_formula, same_formula
from skills.crystals import built, crystal_problem, lattice_problem
from skills.documents import Skill
from skills.parameter import Parameter
from skills.params import ParameterError, params_text, validate_params
from skills.structures import BUILT

__all__ = [
    "ENTITY_KINDS", "NUMBER_KINDS", "OutsideDomain", "parameter_kind", "same_value", "value_problem", "changed_substances",
    "hidden_problem", "domain_problems", "domain_refusal", "checked_params", "substance_text",
]  # fmt: skip

ENTITY_KINDS = ("formula", "element", "smiles")
"""The kinds of parameter that name a substance."""
NUMBER_KINDS = ("number", "integer")
_UNSET = "no parameter sets"  # why a hidden constant stays the verified one at a door (binding: the question does not state it)


class OutsideDomain(ParameterError):
    """Parameter values outside what the skill was verified on; the message gives each reason."""


def parameter_kind(prop: Parameter) -> str:
    """A parameter's kind: as recorded by the generaliser, else read from its default."""
    if prop.kind:
        return prop.kind
    default = prop.default
    if isinstance(default, bool):
        return "boolean"
    if isinstance(default, int):
        return "integer"
    if isinstance(default, float):
        return "number"
    if isinstance(default, str):
        if is_element(default):
            return "element"
        if is_formula(default):
            return "formula"
        if canonical_smiles(default) and re.search(r"[a-z=#()\[\]\d]", default):
            return "smiles"
        return "word"
    return "other"


def same_value(kind: str, a: Any, b: Any) -> bool:
    """Whether two values of a kind are the same (formulas as compositions, SMILES in canonical form)."""
    if kind == "formula":
        return same_formula(str(a), str(b))
    if kind == "smiles":
        return canonical_smiles(str(a)) == canonical_smiles(str(b)) is not None
    return bool(a == b)


def _stoichiometry(formula: str) -> list[float]:
    from pymatgen.core import Composition

    composition = Composition(formula)
    return [composition[e] for e in formula_elements(formula)]


def value_problem(name: str, prop: Parameter, value: Any) -> str | None:
    """Why ``value`` is outside what parameter ``name`` was verified for (kind, make-up, bounds, whole number), or None."""
    kind = parameter_kind(prop)
    if kind == "element" and not is_element(str(value)) and str(value) not in WORD_LIKE_SYMBOLS:
        return f"{value!r} is not an element symbol, and {name} takes one"
    if kind == "formula":
        if not is_formula(str(value)):
            return f"{value!r} is not a formula, and {name} takes one"
        default = str(prop.default)
        if prop.derives and _stoichiometry(str(value)) != _stoichiometry(default):
            return f"the skill uses the elements of {name} by position, verified on {default}; {value} has another make-up"
    if kind == "structure" and value not in BUILT:
        return f"{value!r} is not a structure type ase's bulk builds ({', '.join(sorted(BUILT))}), and {name} takes one"
    if kind == "entries":
        rows = value if isinstance(value, list) else []
        bad = [row for row in rows if not _entry(row)]
        if len(rows) < 2 or bad:
            shown = f" ({bad[0]!r} is not a formula and a number)" if bad else ""
            return f"{name} takes a list of at least two [formula, number] entries{shown}"
        formulas = [str(row[0]) for row in rows]
        if any(same_formula(a, b) for i, a in enumerate(formulas) for b in formulas[i + 1 :]):
            return f"{name} lists a formula twice"
    if kind == "crystal" and (problem := crystal_problem(value)):
        return f"{name}: {problem}"
    if kind == "smiles" and canonical_smiles(str(value)) is None:
        return f"{value!r} is not a SMILES RDKit can read, and {name} takes one"
    if kind in NUMBER_KINDS and isinstance(value, (int, float)) and not isinstance(value, bool):
        if prop.exclusive_minimum is not None and not float(value) > prop.exclusive_minimum:
            return f"{name} must be above {prop.exclusive_minimum} (got {value})"
        if prop.minimum is not None and not float(value) >= prop.minimum:
            return f"{name} must be at least {prop.minimum} (got {value})"
        if prop.exclusive_maximum is not None and not float(value) < prop.exclusive_maximum:
            return f"{name} must be below {prop.exclusive_maximum} (got {value})"
        if prop.maximum is not None and not float(value) <= prop.maximum:
            return f"{name} must be at most {prop.maximum} (got {value})"
        if kind == "integer" and not float(value).is_integer():
            return f"{name} takes a whole number (got {value})"
    return None


def _entry(row: Any) -> bool:
    """Whether ``row`` is one [formula, number] entry."""
    return (
        isinstance(row, (list, tuple)) and len(row) == 2 and isinstance(row[0], str) and is_formula(row[0])
        and isinstance(row[1], (int, float)) and not isinstance(row[1], bool) and math.isfinite(row[1])
    )  # fmt: skip


def changed_substances(properties: Mapping[str, Parameter], params: Mapping[str, Any]) -> list[str]:
    """The substance parameters ``params`` gives another value than the verified default, in the schema's order; a
    crystal structure type counts as part of the substance (bcc copper is not the verified fcc copper)."""
    return [
        name for name, prop in properties.items()
        if name in params and (kind := parameter_kind(prop)) in (*ENTITY_KINDS, "structure", "crystal")
        and not same_value(kind, params[name], prop.default)
    ]  # fmt: skip


def hidden_problem(skill: Skill, params: Mapping[str, Any], unset: str = _UNSET) -> str | None:
    """Why a constant the skill hides (``skill.hidden_inputs``) may not hold for the substance ``params`` names, or None;
    ``unset``: why nothing sets the constant."""
    properties = skill.parameters.properties
    changed = changed_substances(properties, params)
    if not changed or not skill.hidden_inputs:
        return None
    substance = changed[0]
    return (
        f"the skill also uses {skill.hidden_inputs[0]}, which {unset} and which may belong to "
        f"{substance_text(properties[substance], properties[substance].default)}, not {substance_text(properties[substance], params[substance])}"
    )


def substance_text(prop: Parameter, value: Any) -> str:
    """A substance parameter's value for people: a crystal as its species and space group ("Na, Cl in Fm-3m")."""
    if parameter_kind(prop) == "crystal" and crystal_problem(value) is None:
        return f"{', '.join(value['species'])} in {value['space_group']}"
    return str(value)


def domain_problems(skill: Skill, params: Mapping[str, Any], unset: str = _UNSET) -> list[str]:
    """Every reason why running ``skill`` with ``params`` lies outside what it was verified on; [] when inside."""
    properties = skill.parameters.properties
    problems = [p for name, value in params.items() if name in properties and (p := value_problem(name, properties[name], value))]
    problems += [
        f"{name}: {p}" for name, value in params.items()
        if name in properties and parameter_kind(properties[name]) == "crystal" and (p := lattice_problem(value, skill.code) or _unbuilt(value))
    ]  # fmt: skip
    hidden = hidden_problem(skill, params, unset)
    return problems + ([hidden] if hidden else []) + _unlisted(properties, params)


def _unbuilt(value: Any) -> str | None:
    """Why pymatgen cannot build a crystal that passes ``crystal_problem`` (two sites on one place of its group), or None."""
    if crystal_problem(value) is not None or built(value) is not None:
        return None
    return "the crystal does not build: pymatgen refuses it, or two of its sites fall on one place of the group"


def _unlisted(properties: Mapping[str, Parameter], params: Mapping[str, Any]) -> list[str]:
    """A formula verified as one of a list's entries (the compound asked about) that the given list does not hold."""
    found = []
    for table, listing in properties.items():
        if parameter_kind(listing) != "entries" or value_problem(table, listing, params.get(table)) is not None:
            continue  # no list, or one refused on its own
        rows = listing.default if isinstance(listing.default, list) else []
        verified = [str(row[0]) for row in rows if isinstance(row, list) and row]
        given = [str(row[0]) for row in params[table] if isinstance(row, (list, tuple)) and row]
        for name, prop in properties.items():
            if parameter_kind(prop) == "formula" and any(same_formula(str(prop.default), v) for v in verified):
                value = str(params.get(name, prop.default))
                if is_formula(value) and not any(same_formula(value, g) for g in given if is_formula(g)):
                    found.append(f"{name}={value} is not one of the entries of {table}, and the skill was verified on one of them")
    return found


def domain_refusal(skill: Skill, params: Mapping[str, Any]) -> OutsideDomain | None:
    """The refusal to run ``skill`` with ``params`` (already fitting its schema), naming each reason; None when they
    lie inside what it was verified on."""
    problems = domain_problems(skill, params)
    if not problems:
        return None
    return OutsideDomain(f"{skill.id} was not verified for {params_text(dict(params)) or 'its defaults'}: {'; '.join(problems)}")


def checked_params(skill: Skill, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with the defaults filled in, once they fit the skill's schema (else ``ParameterError``) and lie inside
    what it was verified on (else ``OutsideDomain``, with every reason): what each door runs a skill with."""
    bound = validate_params(skill.parameters, dict(params))
    refusal = domain_refusal(skill, bound)
    if refusal is not None:
        raise refusal
    return bound
