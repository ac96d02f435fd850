"""Bind a skill's crystal parameter (``skills/crystals.py``) from a question, before its other values.

Two ways, each complete or not at all:

* **stated**: the question gives a space group and every site ("CaF2, Fm-3m, a = 5.463 Å, Ca at (0, 0, 0) and F at (1/4,
  1/4, 1/4)", or the ``from_spacegroup`` call itself). The crystal is the stated one; the lattice constants of a call
  go to the parameters the skill's lattice takes, in order.
* **substituted**: the question names the verified crystal's structure (its type or space group) and another substance
  of the verified one's make-up ("rock-salt KCl" for NaCl): the same sites, each element replaced. Only where the verified
  sites sit at fixed fractions: a free coordinate (wurtzite's u) belongs to its own substance.

What the crystal takes (its statement, the substance's names, the structure's names) is blanked out of the question, so
that the rest of binding reads only what is left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from skills.chemistry import formula_counts, formula_elements, same_formula
from skills.context import substance_names
from skills.crystals import (
    RHOMBOHEDRAL,
    TWO_ORIGINS,
    StatedCrystal,
    built,
    crystal_problem,
    group_number,
    lattice_family,
    lattice_lengths,
    lattice_problem,
    site_statements,
    stated_crystal,
)
from skills.documents import BoundValue, Skill
from skills.mentions import Mention, find_mentions
from skills.minerals import prototype_groups
from skills.structures import GROUPS, reference_structure, stated_groups, structure_mentions, structures
from skills.substances import BindingDeclined

__all__ = ["CrystalBinding", "bind_crystal"]

_CRYSTAL_WORDS = re.compile(
    r"\b(?:cubic(?!\s+(?:centi|cm|met|ang|Å|nm|pm|bohr|inch|f))|tetragonal|hexagonal|trigonal|rhombohedral|axes|space[- ]?groups?"
    r"|(?:Hermann|Mauguin)[–-]?(?:Mauguin)?|international)\b",
    re.IGNORECASE,
)  # "grams per cubic centimetre" keeps its unit
_HEXAGONAL_AXES = re.compile(r"\bhexagonal\s+(?:axes|setting|coordinates)\b", re.IGNORECASE)
_DENIED_STRUCTURE = re.compile(r"\b(?:not|no|never|n't|rather\s+than|instead\s+of|unlike)\b(?:\W+\w+){0,4}?\W+(?:structure|phase|type|lattice)\b", re.IGNORECASE)
_DENIAL = re.compile(r"\b(?:not|no|never|other\s+than|rather\s+than|instead\s+of|unlike|except)\b|n't\b", re.IGNORECASE)
_ISOTOPE = re.compile(r"(?i:deuter|triti)|\b[A-Z][a-z]?[DT]\d*\b|\b[DT]\d*[A-Z]")  # "LiD": pymatgen weighs it as hydrogen
_PHASE = re.compile(r"(?:(?<![Kk]-)\b(?:alpha|beta|gamma|delta)|(?<![Kk])(?<![Kk]\s)[αβγδ])\s*-\s*[A-Za-z]", re.IGNORECASE)
_LINE_AFTER = re.compile(r"\s*-?\s*K\s*-?\s*(?:α|β|alpha|beta|a\b|b\b)")  # the Cu of "Cu Kα" is an X-ray line's
_FIXED = (0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0, 1 / 3, 2 / 3, 1 / 6, 5 / 6)


@dataclass
class CrystalBinding:
    """The crystal and lattice values bound, and the question left for the rest of binding."""

    query: str
    params: dict[str, Any] = field(default_factory=dict)
    bound: list[BoundValue] = field(default_factory=list)
    taken: set[int] = field(default_factory=set)  # where the mentions of a substituted substance start: no value of their own

    @property
    def changed(self) -> bool:
        return bool(self.params)


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _of_elements(mention: Mention, elements: set[str]) -> bool:
    """Whether ``mention`` names the crystal's whole substance (never one element of several: "how many sites are F"; the
    Cu-Cu of copper's sites is copper)."""
    found = mention.formula or mention.element
    return mention.kind != "number" and found is not None and set(formula_elements(found)) == elements and (not mention.part or len(elements) == 1)


def bind_crystal(skill: Skill, query: str, name: str) -> CrystalBinding:
    """The crystal ``query`` states or substitutes for parameter ``name`` (``CrystalBinding.changed``), with the question
    blanked of it; the question unchanged when it does neither. ``BindingDeclined`` where it states a crystal the skill
    cannot build."""
    stated = stated_crystal(query)
    if stated is None:
        return _substituted(skill, query, name)
    problem = crystal_problem(stated.value)
    if problem:
        raise BindingDeclined(f"the question states a crystal this skill cannot build: {problem}")
    mismatch = lattice_problem(stated.value, skill.code) or _setting_unsaid(stated, query) or _contradiction(stated, query)
    if mismatch:
        raise BindingDeclined(mismatch)
    lengths = lattice_lengths(skill.code)
    group = stated.value["space_group"]
    found = CrystalBinding(query="")
    if stated.lattice is not None:
        if stated.family != lattice_family(group_number(group) or 0) or len(stated.lattice) != len(lengths):
            raise BindingDeclined(f"the question builds a {stated.family} lattice for space group {group}")
        for length, value in zip(lengths, stated.lattice, strict=True):
            found.params[length] = value
            found.bound.append(BoundValue(name=length, value=value, words=f"Lattice.{stated.family}(…{value:g}…)"))
    elements = set(stated.value["species"])
    mentions = find_mentions(query)
    spans = list(stated.spans) + [(m.start, m.end) for m in mentions if _of_elements(m, elements)]
    names = substance_names(query, [m for m in mentions if _of_elements(m, elements)])  # "Periclase (MgO)": the crystal's name
    spans += [w.span() for w in re.finditer(r"[A-Za-z]+", query) if w.group().lower() in names]
    spans += [(m.start, m.start + len(m.text)) for m in structure_mentions(query)]
    spans += [m.span() for m in _CRYSTAL_WORDS.finditer(query)]
    found.params[name] = stated.value
    found.bound.append(BoundValue(name=name, value=stated.value, words=" … ".join(query[s:e] for s, e in stated.spans)))
    found.query = _blanked(query, spans)
    return found


def _setting_unsaid(stated: StatedCrystal, query: str) -> str | None:
    """Why coordinates written in prose may be in another setting than pymatgen reads the group in, or None."""
    group = stated.value["space_group"]
    number = group_number(group) or 0
    if stated.coded:
        return None  # pymatgen's own call: pymatgen's setting
    if number in TWO_ORIGINS:
        return f"space group {group} has two origin choices; the question does not say its coordinates are in origin choice 1, as pymatgen reads them"
    if number in RHOMBOHEDRAL and not _HEXAGONAL_AXES.search(query):
        return f"the question does not say its coordinates of {group} are in hexagonal axes, as pymatgen reads them"
    return None


def _contradiction(stated: StatedCrystal, query: str) -> str | None:
    """Why the crystal the sites build is not the one the question names (another formula, structure type or mineral), or
    None; also when pymatgen cannot build it."""
    made = built(stated.value)
    group = stated.value["space_group"]
    if made is None:
        return f"the crystal stated ({group} with its sites) does not build: pymatgen refuses it, or two sites fall on one place"
    formula, _ = made
    elements = set(stated.value["species"])
    for mention in find_mentions(query):
        named = mention.formula or mention.element
        if mention.kind != "number" and named and set(formula_elements(named)) == elements and not same_formula(_reduced(named), formula):
            return f"the sites stated build {formula}, not the {mention.text} the question names"
    from pymatgen.core import Composition

    number = group_number(group)
    amounts = tuple(sorted(round(v) for v in Composition(formula).reduced_composition.values()))
    for name in structure_mentions(query):
        if name.name in GROUPS and GROUPS[name.name] != number:
            return f"the question names the {name.text} structure but states space group {group}"
        if _AMOUNTS.get(name.name, amounts) != amounts:  # "rock-salt CaF2" with fluorite's sites
            return f"the question names the {name.text} structure, which {formula} built from the sites stated does not have"
    for word in {w.lower() for w in re.findall(r"[A-Za-z]+", query)}:
        groups = prototype_groups(word)
        if groups and number not in groups:
            return f"the question names {word}, a mineral of another space group than {group}"
    return None


def _reduced(formula: str) -> str:
    from pymatgen.core import Composition

    return str(Composition(formula).reduced_formula)


_AMOUNTS = {
    "rocksalt": (1, 1), "cesiumchloride": (1, 1), "zincblende": (1, 1), "wurtzite": (1, 1), "fluorite": (1, 2), "rutile": (1, 2),
    "perovskite": (1, 1, 3), "spinel": (1, 2, 4), "fcc": (1,), "bcc": (1,), "hcp": (1,), "sc": (1,), "diamond": (1,),
}  # fmt: skip
"""How many atoms of each element a structure type holds per formula unit, fewest first."""


def _verified_formula(skill: Skill, species: set[str]) -> str | None:
    """The formula the verified question gives its crystal's substance by ("rock-salt NaCl", "diamond-structure silicon")."""
    for text in (skill.provenance.query or skill.description, *skill.provenance.queries):
        for mention in find_mentions(text):
            found = mention.formula or mention.element
            if mention.kind != "number" and found and set(formula_elements(found)) == species:
                return found
    return None


def _in_reference_structure(substance: str, skill: Skill) -> bool:
    """Whether an element's reference state (ASE's ``reference_states``) is the one structure type the verified question names."""
    said = structures(skill.provenance.query or skill.description)
    return len(said) == 1 and reference_structure(substance) in said


def _substituted(skill: Skill, query: str, name: str) -> CrystalBinding:
    """The verified crystal with another substance's elements, where the question names the verified structure and one
    substance of the same make-up; else nothing bound."""
    default: dict[str, Any] = skill.parameters.properties[name].default  # type: ignore[assignment]  # a crystal's mapping
    unchanged = CrystalBinding(query=query)
    if crystal_problem(default) is not None or not all(any(abs(x - f) < 1e-9 for f in _FIXED) for row in default["coords"] for x in row):
        return unchanged
    groups = stated_groups(query)
    if groups and groups != {group_number(default["space_group"])}:
        return unchanged
    denied = any(_DENIAL.search(query[max(0, m.start - 40) : m.start]) for m in structure_mentions(query))
    if denied or _DENIED_STRUCTURE.search(query) or _PHASE.search(query) or _ISOTOPE.search(query):
        return unchanged  # "CsCl, which does not take the rock-salt structure"; "beta-tin germanium": another crystal
    species = list(default["species"])
    verified = _verified_formula(skill, set(species))
    mentions = [m for m in find_mentions(query) if m.kind != "number" and (m.formula or m.element) and not _LINE_AFTER.match(query[m.end :])]
    substances = [m for m in mentions if not m.part]
    formulas = list(dict.fromkeys(m.formula or m.element or "" for m in substances))
    distinct = [f for i, f in enumerate(formulas) if not any(same_formula(f, g) for g in formulas[:i])]
    wholes = [f for f in distinct if len(formula_elements(f)) > 1]
    if len(wholes) == 1:  # "MgO …, Mg at the origin, O at (½, ½, ½)": the elements are the compound's parts
        distinct = [f for f in distinct if f not in formula_elements(wholes[0])]  # a bare element, never O2
    if verified is None or len(distinct) != 1 or same_formula(distinct[0], verified) or len(set(species)) != len(species):
        return unchanged
    asked = distinct[0]
    if not groups and not _in_reference_structure(asked, skill):
        return unchanged  # "nickel, a = 3.524 Å" of a skill verified on fcc copper: nickel is fcc; tungsten is not
    old, new = formula_counts(verified), formula_counts(asked)
    if old is None or new is None or len(old) != len(new) or list(old.values()) != list(new.values()):
        raise BindingDeclined(f"{asked} has another make-up than {verified}, whose sites this skill builds")
    mapping = dict(zip(formula_elements(verified), formula_elements(asked), strict=True))
    value = {**default, "species": [mapping[s] for s in species]}
    placed = {symbol: coords for symbol, coords in zip(value["species"], default["coords"], strict=True)}
    sites = site_statements(query)
    for symbol, coords, _ in sites:  # a site the question states is the one this element takes in the verified crystal
        if symbol not in placed or any(abs(x - y) > 1e-6 for x, y in zip(coords, placed[symbol], strict=True)):
            raise BindingDeclined(f"the question puts {symbol} at {coords}; substituted into the verified crystal it sits at {placed.get(symbol)}")
    said = [m for m in mentions if same_formula(m.formula or m.element or "", asked) or (m.formula or m.element) in formula_elements(asked)]
    return CrystalBinding(
        query=_blanked(query, [span for _, _, span in sites]),
        params={name: value},
        bound=[BoundValue(name=name, value=value, words=" / ".join(dict.fromkeys(m.text for m in said)))],
        taken={m.start for m in said},
    )
