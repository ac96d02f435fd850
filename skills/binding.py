"""Bind a skill's parameters from a question, precision first: bind only what the question ties to a parameter, else decline.

The question's stated values (``skills/mentions.py``; format and unit numbers left out) are
compared with the question the skill was verified on. Values both questions state the same way
are the skill's own context. Every other value must be bound to exactly one parameter of a
compatible kind: a formula to a formula, an element to an element, a SMILES to a SMILES, a
number to the parameter its words tie it to (its name, the words the verified question used
before it, its unit). A value nothing takes, a value two parameters could take, a parameter two
values could fill, a content word the skill was never verified on, or a verified default that
belonged to another material: each declines, with the reason, and the question goes on to code.

>>> from skills.documents import Skill, TestCase, Provenance
>>> schema = {"properties": {"formula": {"type": "string", "default": "N2", "kind": "formula", "source": "N2"}}}
>>> skill = Skill(name="atomization", code="def run(formula: str = 'N2'):\\n    return 1.0\\n", parameters=schema,
...     test_case=TestCase(expected=1.0), provenance=Provenance(query="Atomization energy of N2 with ASE's EMT. Return a float."))
>>> bind(skill, "Atomization energy of O2 with ASE's EMT, rounded to 4 decimal places.").params
{'formula': 'O2'}
>>> try:
...     bind(skill, "Ionization energy of O2 with ASE's EMT.")
... except BindingDeclined as exc:
...     print(exc)
the question asks about 'ionization', which this skill was not verified on
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field, JsonValue

from skills.answer_spec import read_answer_spec
from skills.chemistry import canonical_smiles, element_names, element_symbol, formula_elements, is_formula, resolve_name, same_formula
from skills.context import (
    ALTERING,
    aside_words,
    data_sources,
    framing_words,
    instruction_words,
    structural_words,
    structure_names,
    substance_names,
)
from skills.crystal_binding import bind_crystal
from skills.documented import documented_words
from skills.documents import DEFAULT_WORDS, BoundValue, Skill
from skills.domain import ENTITY_KINDS, changed_substances, domain_problems, parameter_kind, same_value, substance_text, value_problem
from skills.meaning import (
    denied_substance,
    dropped_qualifier,
    fixed_setting,
    other_basis,
    other_count,
    other_order,
    other_qualifier,
    other_quantity,
    other_selection,
    other_superlative,
    other_units,
    own_formula,
    reversed_sense,
    uneven_repeat,
    unexplained_qualifiers,
)  # fmt: skip
from skills.mentions import GENERIC_WORDS, NUMBER_WORDS, Mention, find_mentions, question_words, stem, words_after, words_before
from skills.minerals import prototype_groups
from skills.numeric import (
    bound_ranges,
    entry_pairs,
    entry_partners,
    factor,
    pair_mentions,
    partner,
    range_pair,
    same_entry,
    spread,
    spread_pair,
    ties,
    units_differ,
)  # fmt: skip
from skills.parameter import Parameter
from skills.params import is_count_setting
from skills.retrieval import split_name
from skills.side_remarks import split_side_remarks
from skills.structures import (
    GROUPS,
    StructureMention,
    crystal_family,
    reference_structure,
    stated_groups,
    structure_mentions,
    structures,
    unknown_structure,
)
from skills.substances import (
    BindingDeclined,
    assign_described,
    assign_entities,
    equal_mentions,
    fits,
    group_value,
    mention_elements,
    merge,
    parts_left_out,
    restated,
    restates,
    value_of,
    whole_of,
)  # fmt: skip
from skills.terms import (
    MODIFIERS,
    asked_quantity,
    explaining_forms,
    explains,
    forms,
    is_everyday,
    is_phrase,
    is_technical,
    named_packages,
    written_acronyms,
)
from skills.units import converted, is_spelled_unit, joined_units, same_unit

__all__ = ["BoundValue", "Binding", "BindingDeclined", "bind", "parameter_kind", "ran_with"]


class Binding(BaseModel):
    params: dict[str, JsonValue] = Field(default_factory=dict)
    bound: list[BoundValue] = Field(default_factory=list)


def _source(question: str, mentions: list[Mention], name: str, prop: Parameter, kind: str) -> Mention | None:
    """The mention of the verified question that a parameter's default came from."""
    default = prop.default
    if (kind == "number" or kind == "integer") and isinstance(default, (int, float)):
        alike = [m for m in mentions if m.kind == "number" and m.number == float(default)]
        cued = [m for m in alike if prop.cue and [stem(w) for w in words_before(question, m.start, 1)] == prop.cue[-1:]]
        if len(alike) > 1 and len(cued) == 1:
            return cued[0]  # "sigma = 1.0 Å, epsilon = 1.0 eV": epsilon's 1.0 is the one after "epsilon"
    for mention in mentions:
        if kind == "number" or kind == "integer":
            if mention.kind == "number" and isinstance(default, (int, float)) and mention.number == float(default):
                return mention
        elif kind in ENTITY_KINDS and value_of(mention, kind) is not None and same_value(kind, value_of(mention, kind), default):
            return mention
        elif kind == "formula" and prop.derives and mention.formula and same_formula(mention.formula, str(default)):
            return mention
    return None


def _restating(mention: Mention, asked: list[Mention], context: list[Mention]) -> bool:
    """Whether ``mention`` restates a constant of the verified question: one it states, and a number no more often than it
    ("sigma = 1.0, epsilon = 1.0 and a cutoff of 1.0" for a question with two 1.0s: one of them is a value of its own)."""
    if not any(restates(mention, c) for c in context):
        return False
    if mention.kind != "number":
        return True
    said = sum(a.kind == "number" and equal_mentions(a, mention) for a in asked)
    return said <= sum(c.kind == "number" and equal_mentions(c, mention) for c in context)


def _check_value(name: str, prop: Parameter, value: Any) -> None:
    """Refuse a value outside what the skill was verified for (``skills/domain.py``: kind, bounds, make-up)."""
    problem = value_problem(name, prop, value)
    if problem:
        raise BindingDeclined(problem)


def _vocabulary(skill: Skill) -> frozenset[str]:
    """What the skill was verified on, in words (every form of them): its questions, description, parameter words and the
    names its code uses."""
    texts = [skill.provenance.query or skill.description, *skill.provenance.queries, skill.description, skill.name.replace("_", " ")]
    def own(name: str) -> str:  # a parameter's min_/max_ are lifting's words for a range's ends, not the skill's
        return re.sub(r"^(?:min|max)_", "", name) if name in skill.parameters.properties else name

    for name, prop in skill.parameters.properties.items():
        texts += [own(name).replace("_", " "), prop.description or ""]
    texts.append(" ".join(split_name(own(n)) for n in _code_names(skill.code)))
    texts.append(" ".join(own(n) for n in _code_names(skill.code)))  # "MolLogP" written as the code writes it
    texts.append(documented_words(skill.code))  # "The average molecular weight of the molecule": what Descriptors.MolWt computes
    if _FIRST_SITE.search(skill.code):
        texts.append("first site")  # the neighbours of s[0]: of the first site
    return explaining_forms((w.lower() for text in texts for w in re.findall(r"[A-Za-z]+", text)), texts)


def _described(skill: Skill) -> frozenset[str]:
    """The words that say what a skill computes: its verified questions, its name and what the functions its code calls say
    they compute, as written (no equivalent phrases: "symmetry operations" explains no "space group"); not the rest of its
    code, whose names ("SpacegroupAnalyzer") say how, not what."""
    texts = [*verified_texts_of(skill), skill.name.replace("_", " "), documented_words(skill.code)]
    return frozenset(form for text in texts for w in re.findall(r"[A-Za-z]+", text) for form in forms(w))  # as written: no equivalents


_OTHER_SOURCES = frozenset("experimental experiment experimentally measured measurement measurements observed empirical".split())
"""Words that ask for a value from another source than the skill's computation ("according to experiment", "the measured
bulk modulus"), where they qualify what is asked, not a value the question gives ("the experimental lattice constant, 3.61 Å")."""
_ACCORDING = re.compile(r"\baccording\s+to\s+(?:the\s+)?([A-Za-z]+)", re.IGNORECASE)


_FIRST_SITE = re.compile(r"get_neighbors\(\s*\w+\[0\]")
"""Code that looks around a structure's first site (``s.get_neighbors(s[0], r)``)."""
def _site_elements(value: Any) -> set[str]:
    """The elements a crystal value puts on its sites."""
    species = value.get("species") if isinstance(value, dict) else None
    return {str(s) for s in species} if isinstance(species, list) else set()


_SAYS_FIRST = re.compile(r"\b(?:first\s+(?:site|atom)|(?:site|atom|index)\s*0|\w+\[0\])", re.IGNORECASE)
_SITE_ZERO = re.compile(r"\b(?:site|atom|index)\s*(?:#|no\.?|number)?\s*$", re.IGNORECASE)


_OTHER_FORM = re.compile(r"^(?:isotop|deuter|triti|enrich|hydrat|dehydrat|anhydr|solvat|desolvat|hydrogenat|dehydrogenat)|hydrates?$")
"""Ordinary words that make the substance another one: "hydrated CuSO4", "deuterated benzene", "enriched uranium"."""


_CELL_ATOMS = (
    (r"bcc|body[- ]cent(?:red|ered)(?:[- ]cubic)?|cscl|caesium[- ]chloride|cesium[- ]chloride", 2),
    (r"fcc|face[- ]cent(?:red|ered)(?:[- ]cubic)?", 4),
    (r"diamond|rock[- ]?salt|zinc[- ]?blende|sphalerite", 8),
    (r"fluorite", 12),
)
"""The atoms in the conventional cubic cell of a structure type: "the 2-atom cell of bcc iron" restates the cell."""


def _conventional_atoms(query: str) -> int | None:
    """The atoms of the conventional cell of the one cubic structure type the question names, or None."""
    found = {count for pattern, count in _CELL_ATOMS if re.search(rf"\b(?:{pattern})(?:[- ](?:type|like|structure|structured))?\b", query, re.IGNORECASE)}
    return found.pop() if len(found) == 1 else None


_SPELLED_COUNT = re.compile(rf"\b({'|'.join(NUMBER_WORDS)})\s+([A-Za-z'-]+)(?:\s+([A-Za-z]+))?", re.IGNORECASE)
"""A count the verified question spells out ("all four criteria"): the same count in digits restates it."""

_FUNCTION_WORDS = frozenset("per of in on at to by for from with and or the an".split())
"""Words that join a phrase of the domain ("energy *per* atom") without naming another thing."""


def _unexplained(
    vocabulary: frozenset[str], query: str, asked: list[Mention], verified: list[str] | None = None, own_elements: frozenset[str] = frozenset()
) -> list[str]:
    """The question's words the skill's ``vocabulary`` does not explain that matter: its technical words ("no relaxation"
    counts as "unrelaxed"), the pairs of words that name one thing of the domain ("bond length"; "point group" where the
    ``verified`` questions say "space group"), and what it asks for."""
    named = _names_of_smiles(query, asked)
    heads = {
        stem(b): stem(a) for text in verified or [] for a, b in itertools.pairwise(w.lower() for w in re.findall(r"[A-Za-z]+", text))
        if is_phrase(a, b)
    }  # fmt: skip
    acronyms = written_acronyms(query)  # "the MACE potential": a name, though "mace" is an English word
    pairs = list(itertools.pairwise(w.lower() for w in re.findall(r"[A-Za-z]+", query)))
    joined = {w for pair in pairs if explains(vocabulary, "".join(pair)) for w in pair}  # "space group" for from_spacegroup
    for compound in re.findall(r"\b[A-Z]?[a-z]+(?:[A-Z][a-z]+)+\b", query):  # "FunctionalGroups" for "functional groups"
        if all(explains(vocabulary, part.lower()) for part in re.findall(r"[A-Z]?[a-z]+", compound)):
            joined.add(compound.lower())
    joined |= {m.lower() for m in re.findall(r"(?<=\w\.)(txt|csv|dat|json)\b", query)}  # "FunctionalGroups.txt": a plain file
    found = []
    for word, before, negated in question_words(query, asked):
        if word in named or word in joined or word in own_elements:
            continue  # "atorvastatin (SMILES …)": the molecule's name, whatever the name database knows
        if is_spelled_unit(word):
            continue  # "Electronvolts, rounded to four decimals": a unit spelled out, wherever it stands
        if negated and explains(vocabulary, "un" + word):
            continue  # "no relaxation" is what an unrelaxed skill computes
        if negated and (not is_everyday(word) or re.fullmatch(r"[a-z]{3,}est", word)) and explains(vocabulary, word):
            found.append(f"not {word}")  # "not the strongest one" of a skill verified on the strongest peak  # "not the cohesive energy", "no relaxation": what the skill computes, denied
        elif explains(vocabulary, word):
            if before and before not in _FUNCTION_WORDS and heads.get(stem(word)) != stem(before) and is_phrase(before, word) and not explains(vocabulary, before):
                found.append(before)  # "point group" of a skill verified on the space group, or on no group: another thing
            continue
        elif (
            is_technical(word) or word in acronyms or _OTHER_FORM.search(word)
            or (element_symbol(word) and word not in own_elements and not re.search(rf"\b{word}\s+(?:to|from|in)\b", query.lower()))
        ):  # fmt: skip
            found.append(word)  # an element named where no value was read ("beta-tungsten"): another substance
        elif before and before not in GENERIC_WORDS and is_phrase(before, word):  # "bond length", "heavy atoms": a term together
            found += [w for w in (before, word) if not explains(vocabulary, w)]
    found += unexplained_qualifiers(vocabulary, query, [m.text for m in asked])  # "the molar *volume*", "the *mole* fraction"
    return list(dict.fromkeys(found))


def _partly_named(context: list[Mention], asked: list[Mention]) -> str | None:
    """Why a skill fixed to its own substance cannot answer a question that names some of that substance's elements but
    not all ("a Cs atom at the corner and another at the body centre" of a skill built on CsCl), else None."""
    own = {e for m in context if m.kind != "number" for e in mention_elements(m)}
    named = {e for m in asked if m.kind != "number" for e in mention_elements(m)}
    if not named or not named < own:  # none of them, all of them, or another substance too ("CsCl" of a skill built on NaCl)
        return None
    return f"the question names {', '.join(sorted(named & own))} but not {', '.join(sorted(own - named))}, of the substance this skill is built on"


def _names_of_smiles(query: str, asked: list[Mention]) -> set[str]:
    """The words a question names a substance by, right before its SMILES ("atorvastatin (SMILES CC…)", "glycine,
    NCC(=O)O") or its formula ("lithium superoxide, LiO2": its elements' names and the name of the ion)."""
    found = set()
    for mention in (m for m in asked if m.kind == "smiles"):
        named = re.search(r"([A-Za-z][\w-]*)(?:'s)?\s*[(,:]?\s*(?:SMILES\s*[:=]?\s*)?$", query[: mention.start])
        if named:
            found.add(named.group(1).lower())
        after = re.match(r"\s*\(\s*([\w,-]*[A-Za-z][\w,-]*)\s*\)", query[mention.end :])  # "OCCc1ccccc1 (2-phenylethanol)"
        if after and (named_as := resolve_name(after.group(1))) and named_as.smiles and canonical_smiles(named_as.smiles) == canonical_smiles(mention.smiles or ""):
            found |= {w.lower() for w in re.findall(r"[A-Za-z]+", after.group(1))}  # its name, not "(anion)" nor "(dimer)"
    if any(m.kind in ("smiles", "formula") for m in asked):  # "1,3,7-trimethylpurine-2,6-dione (caffeine, SMILES …)": a name
        found |= {w.lower() for token in query.split() if _SYSTEMATIC_NAME.search(token) for w in re.findall(r"[A-Za-z]+", token)}
    return found | {ion for _, ion in _formula_names(query, asked)}


def _in_systematic_names(query: str, asked: list[Mention]) -> set[int]:
    """Where the question names a molecule's part inside its systematic name, beside the molecule's SMILES or formula: no
    substance of its own."""
    if not any(m.kind in ("smiles", "formula") for m in asked):
        return set()
    tokens = [(t.start(), t.group().rstrip(".,;:?!)")) for t in re.finditer(r"\S+", query) if _SYSTEMATIC_NAME.search(t.group())]
    parts = set()
    for mention in (m for m in asked if m.kind == "name"):
        for start, token in tokens:
            inside = start <= mention.start < start + len(token)
            whole = mention.end == start + len(token) and re.fullmatch(r"[\d,]+-", query[start : mention.start]) is not None
            if inside and not whole:  # "2,6-dimethylpyridine" names the whole molecule: a substance like any other
                parts.add(mention.start)
    return parts


def _systematic_name_of_another(query: str, asked: list[Mention]) -> str | None:
    """Why a systematic name the question gives is another molecule than its SMILES or formula ("hexa-2,4-dienal (SMILES
    Cc1ccc(C)o1)"), where the name database knows the name; None when it names the same one or is unknown."""
    written = [m for m in asked if m.kind in ("smiles", "formula")]
    if not written:
        return None
    for token in re.findall(r"\S+", query):
        name = token.strip(".,;:?!").removeprefix("(").removesuffix(")") if token.count("(") != token.count(")") else token.strip(".,;:?!")
        if not _SYSTEMATIC_NAME.search(name) or (known := resolve_name(name)) is None or not known.smiles:
            continue
        named = Mention(name, -1, "name", smiles=known.smiles, formula=known.formula)
        if not any(equal_mentions(m, named) for m in written):  # the same molecule as ``substances`` reads a name beside a SMILES
            return f"the question names {name} ({known.formula}), which is not the molecule it writes as {written[0].text}"
    return None


# A systematic (IUPAC) name: comma-separated locants ("2,6-dione"), a stereo descriptor ("(2S)-"), or a substituent's "-2-yl".
_SYSTEMATIC_NAME = re.compile(r"\d+(?:,\d+)+-[a-z(\[]|\(\d*[RSEZ](?:,\d*[RSEZ])*\)-|-\d+-yl\b")


def _formula_names(query: str, asked: list[Mention]) -> list[tuple[Mention, str]]:
    """Each compound named right before its formula by an element and an ion ("lithium superoxide, LiO2", "magnesium
    peroxide MgO2"): the element's mention (a name of the same substance, not a second one) and the ion's word."""
    found = []
    for mention in (m for m in asked if m.kind == "formula" and m.formula and len(formula_elements(m.formula)) > 1):
        named = re.search(r"([a-z]+)\s+([a-z]+)\s*[(,:]?\s*$", query[: mention.start])
        if named and element_symbol(named.group(1)) in formula_elements(mention.formula or "") and _ION_NAME.search(named.group(2)):
            element = next((m for m in asked if m.start == named.start(1) and m.element), None)
            ion = next((m for m in asked if m.start == named.start(2) and m.kind == "name"), None)  # "titanate", read as Ti
            if ion is not None and not set(formula_elements(ion.formula or "")) <= set(formula_elements(mention.formula or "")):
                continue  # "sodium sulfate (NaCl)": the ion's elements are not the formula's
            whole = resolve_name(f"{named.group(1)} {named.group(2)}")
            if whole is not None and whole.formula and not same_formula(whole.formula, mention.formula or ""):
                continue  # "sodium sulfite (Na2SO4)": the compound so named is another
            if element is not None:
                found.append((element, named.group(2)))
    return found


_ION_NAME = re.compile(r"(?:ide|ate|ite)$")  # oxide, superoxide, carbonate, nitrite: what an inorganic compound is named by


@lru_cache(maxsize=256)
def _code_names(code: str) -> frozenset[str]:
    """The names a skill's code uses (variables, attributes, imports), parsed once per code: binding asks for them several times."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return frozenset()
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    names |= {part for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module for part in n.module.split(".")}  # pymatgen.symmetry
    return frozenset(n for n in names if not n.startswith("_"))


@lru_cache(maxsize=256)
def _code_counts(code: str) -> list[str]:
    """What the code counts by name: "entries" of ``GetNumEntries``, "aromatic rings" of ``CalcNumAromaticRings``."""
    found = (re.match(r"(?:[Gg]et_?|[Cc]alc_?)?(?:Num(?=[A-Z])|num_|Count(?=[A-Z])|count_)(\w+)", name) for name in _code_names(code))
    return [split_name(match.group(1)).lower() for match in found if match]


def _code_substances(code: str) -> frozenset[frozenset[str]]:
    """The element sets of the formulas a skill's code writes as constants (``Atoms("Ar2")`` → {Ar}): its own substance,
    which a question may name in any form ("an argon dimer") without asking about another."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return frozenset()
    written = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return frozenset(frozenset(formula_elements(text)) for text in written if is_formula(text))


_BUILDS_CRYSTAL = re.compile(r"\b(?:Structure|Lattice|from_spacegroup|bulk|crystal|surface|fcc\d+|bcc\d+|hcp\d+)\b")
"""What a code that builds a crystal calls (pymatgen's ``Structure``/``Lattice``, ASE's ``bulk``, ``crystal`` and surfaces)."""


_LATTICE_ONLY = re.compile(r"\bLattice\.(cubic|hexagonal|tetragonal|orthorhombic|rhombohedral|monoclinic)\(")
_BUILDS_SITES = re.compile(r"\b(?:Structure|Molecule|Atoms|from_spacegroup|from_sites|bulk|molecule|crystal|read|from_file|from_str)\s*\(")


def _lattice_system(code: str) -> str | None:
    """The crystal family of the one lattice a skill's code builds when it builds no sites on it (``Lattice.hexagonal(a, c)
    .volume``), else None: what it computes is the lattice's, whatever structure the question calls it."""
    systems = set(_LATTICE_ONLY.findall(code))
    if len(systems) != 1 or _BUILDS_SITES.search(code):
        return None
    system = systems.pop()
    return "hexagonal" if system == "rhombohedral" else system


def _structure_words_of_system(query: str, family: str) -> set[str]:
    """The words of ``query`` naming a structure type ("wurtzite", "hcp") whose space group is of the crystal ``family`` (a
    mineral's name is none: "graphite" says how its layers stack, which a lattice alone does not)."""
    mentions = [m for m in structure_mentions(query) if m.name in GROUPS and crystal_family(GROUPS[m.name]) == family]
    return {w.lower() for m in mentions for w in re.findall(r"[A-Za-z]+", m.text)}


_FILE = re.compile(r"[\w-]+\.(?:txt|csv|dat|json|cif|xyz|sdf|mol|pdb|vasp|poscar)\b", re.IGNORECASE)


def _other_file(skill: Skill, query: str) -> str | None:
    """A file the question names that neither the skill's code nor its verified questions name ("my_groups.txt" for RDKit's
    FunctionalGroups.txt): the skill reads its own."""
    known = "\n".join([*verified_texts_of(skill), skill.code]).lower()
    for match in _FILE.finditer(query):
        if match.group().lower() not in known:
            return f"the question names the file {match.group()}, which this skill was not verified with"
    return None


_MILLER = re.compile(r"(?<![\w)])(?:\((?:\s*-?\d){3}\s*\)|\{(?:\s*-?\d){3}\s*\})(?=\s*(?:reflections?|peaks?|planes?|surfaces?|facets?|lines?|spacing|d-spacing)\b)", re.I)
"""A lattice plane by its Miller indices: "the (200) reflection", "the {111} facets"."""


def _part_of(query: str, asked: list[Mention], vocabulary: frozenset[str]) -> str | None:
    """A part of a substance the question asks of ("titanium dioxide's metal", "alumina's cation") where the skill's words do
    not say what follows the possessive ("titanium dioxide's mass" they do)."""
    for mention in asked:
        after = re.match(r"(?:'s|’s|')\s+([A-Za-z][\w-]*)", query[mention.end :]) if mention.kind in ("name", "formula") else None
        if after and not explains(vocabulary, after.group(1).lower()):
            return f"the question asks for the {after.group(1)} of {mention.text}, which this skill was not verified on"
    return None


def _other_plane(skill: Skill, query: str) -> str | None:
    """A lattice plane the question names ("the (200) reflection") that no verified question names: another peak or surface."""
    said = {re.sub(r"\s", "", m.group()) for text in verified_texts_of(skill) for m in _MILLER.finditer(text)}
    for plane in _MILLER.finditer(query):
        if re.sub(r"\s", "", plane.group()) not in said:
            return f"the question names the plane {plane.group()}, which this skill was not verified on"
    return None


def verified_texts_of(skill: Skill) -> list[str]:
    """The questions a skill was verified on."""
    return [skill.provenance.query or skill.description, *skill.provenance.queries]


def _group_names(groups: set[int]) -> str:
    from pymatgen.symmetry.groups import SpaceGroup

    return ", ".join(SpaceGroup.from_int_number(g).symbol for g in sorted(groups))


def _unstated_sibling(binding: Binding, properties: Mapping[str, Parameter], kinds: dict[str, str], tunables: list[str]) -> str | None:
    """A value of the material that the question leaves at the verified one while it gives another of the same unit ("a =
    2.951 Å" for a skill of magnesium's a and c: another material's a with magnesium's c), or None; for a question that does
    not name the verified substance. Settings (``tunables``) aside."""
    material = [n for n, k in kinds.items() if k in ("number", "integer") and n not in tunables and properties[n].unit]
    kept = {b.name for b in binding.bound if b.words == DEFAULT_WORDS} | {n for n in material if n not in binding.params}
    for name in material:
        moved = [
            other for other in material
            if other != name and other in binding.params and other not in kept and properties[other].unit == properties[name].unit
            and binding.params[other] != properties[other].default
        ]  # fmt: skip
        if moved and name in kept:
            return f"the question gives {moved[0]} but not {name}, which the skill has only for the verified material"
    return None


@lru_cache(maxsize=256)
def _call_slots(code: str, names: tuple[str, ...]) -> dict[tuple[str, int], str]:
    """(function, position) → the parameter the skill's code passes there (``np.linspace(start, stop, num)``)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    slots: dict[tuple[str, int], str] = {}
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        function = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id if isinstance(call.func, ast.Name) else None
        for position, argument in enumerate(call.args):
            if function and isinstance(argument, ast.Name) and argument.id in names:
                slots.setdefault((function.lower(), position), argument.id)
        if function and any(key[0] == function.lower() for key in slots):
            slots.setdefault((function.lower(), -1), str(len(call.args)))  # how many it passes: another count is another call
    return slots


_CALL = re.compile(r"([A-Za-z_][\w.]*)\(([^()]*)\)")


def _called_positions(query: str, code: str, names: list[str]) -> dict[int, str]:
    """Where the question passes a bare number to a function at the place the skill's code passes a parameter (its
    ``numpy.linspace(3.42, 3.62, 11)`` for the code's ``np.linspace(start, stop, num)``): the number's start → the parameter."""
    slots = _call_slots(code, tuple(names))
    if not slots:
        return {}
    found = {}
    for call in _CALL.finditer(query):
        function = call.group(1).rsplit(".", 1)[-1].lower()
        offset = call.start(2)
        arguments = call.group(2).split(",")
        if slots.get((function, -1)) != str(len(arguments)) or "=" in call.group(2):
            continue  # "linspace(3.42, 3.62, 9, False)", "linspace(..., endpoint=False)": not the call the code makes
        for position, argument in enumerate(arguments):
            text = argument.strip()
            if re.fullmatch(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text) and (function, position) in slots:
                found[offset + argument.index(text)] = slots[(function, position)]
            offset += len(argument) + 1
    return found


def _stated(mention: Mention) -> str:
    """A value of the verified question as its code has it (a number, a formula), never in its teacher's words."""
    if mention.kind == "number":
        return f"{mention.number:g}"
    return mention.formula or mention.smiles or mention.element or mention.kind


def _basis_said(asked: str | None, given: str | None, query: str) -> bool:
    """Whether the question asks for the skill's unit with its basis said apart: "energy per atom in eV" is eV/atom."""
    unit, _, basis = (given or "").partition("/")
    if not (asked and unit and basis) or units_differ(asked, unit):
        return False
    basis = {"fu": "formula unit", "f.u.": "formula unit"}.get(basis.strip().lower(), basis.strip())
    return bool(re.search(rf"\bper[\s-]+{re.escape(basis)}s?\b", query, re.IGNORECASE))


_WH_QUESTION = re.compile(r"(?:^|[.!?:]\s+)(?:what|which|how|where|when|who)\b", re.IGNORECASE)
_YES_NO = re.compile(r"\b(?:true|false|yes|no|bool|boolean|whether)\b|\b(?:is|are|does|do|can|will|would|should|has|have)\s+(?:it|they|this|the|a|an)\b", re.IGNORECASE)


def _answer_differs(skill: Skill, query: str) -> str | None:
    """Why the answer the question asks for cannot be this skill's (another unit or kind of value), or None."""
    spec = read_answer_spec(query)
    if units_differ(spec.unit, skill.unit) and not _basis_said(spec.unit, skill.unit, query):
        return f"the question asks for {spec.unit}; the skill gives {skill.unit}"
    if spec.unit and "%" in spec.unit and not skill.unit:  # a per cent is a hundred times the fraction a unitless skill gives
        return f"the question asks for {spec.unit}; the skill gives a value without a unit"
    if spec.unit and skill.output_type in ("str", "bool"):  # "volume in Å^3" is no crystal system's name
        return f"the question asks for a value in {spec.unit}; the skill gives a {skill.output_type}"
    if spec.decimals and skill.output_type == "int":  # "the value as returned, to 4 d.p." of a guess the skill rounds
        return f"the question asks for {spec.decimals} decimals; the skill gives an integer"
    kinds = {spec.output_type, skill.output_type}
    if "any" not in kinds and len(kinds) > 1 and kinds != {"int", "float"}:
        return f"the question asks for a {spec.output_type}; the skill gives a {skill.output_type}"
    if skill.output_type in ("bool", "str") and re.search(r"\bhow\s+(?:many|much)\b", query, re.IGNORECASE):
        return f"the question asks how many or how much; the skill gives a {skill.output_type}"  # never a yes or a name
    if skill.output_type == "bool" and _WH_QUESTION.search(query) and not _YES_NO.search(query):
        return "the question asks what, not whether; the skill answers true or false"
    return None


def _names_in_stated_structure(query: str, asked: list[Mention]) -> set[str]:
    """Other names of the question's formula ("Periclase (MgO) has the rock-salt structure") where the question states the
    structure itself (a structure type or a space group), so that the name says nothing of it; a mineral the prototype
    library builds in another space group than the one stated ("anatase TiO2, P4_2/mnm") is no such name."""
    stated = stated_groups(query)
    if not stated:
        return set()
    typed = {w.lower(): GROUPS.get(m.name) for m in structure_mentions(query) for w in re.findall(r"[A-Za-z]+", m.text)}
    return {
        word for word in substance_names(query, asked)
        if (word not in typed or typed[word] in stated) and (not prototype_groups(word) or prototype_groups(word) & stated)
    }  # fmt: skip


_INSTRUCTING = re.compile(
    r"^\s*(?:please\s+)?(?:use|take|include|exclude|remove|keep|count|replace|fit|relax|set|build|apply|assume|treat|consider|employ"
    r"|switch|add|delete|give|answer|report|express|convert|round|compute|calculate|start|run|make|only)\b",
    re.IGNORECASE,
)
"""A clause that tells how to compute ("use the Murnaghan form"): never a remark to set aside."""


def _set_aside_input(remarks: list[str], skill: Skill, kinds: dict[str, str], vocabulary: frozenset[str]) -> str | None:
    """Why what a question set aside may have been an input of this skill ("take a = 5.50 Å, which the paper got wrong,
    ignore that"): a number in a unit or after a word of one of its parameters, a substance where it takes one, an
    instruction, a technical word it was verified on ("relaxation is not needed"), or a word that can change what is
    computed or the structure (a modifier, "hydrogenated", "vacancies", "primitive", "bcc"). The skill then does not answer."""
    properties = skill.parameters.properties
    units = [p.unit for name, p in properties.items() if p.unit and kinds[name] != "entries"]
    cues = {stem(w.lower()) for name, p in properties.items() for w in [*name.split("_"), *(p.cue or [])] if not is_everyday(w)}
    for remark in remarks:
        shown = f"the question sets aside {remark!r}"
        if _INSTRUCTING.search(remark):
            return f"{shown}, which says how to compute"
        for mention in find_mentions(remark):
            if mention.kind == "number":
                if (mention.unit and any(same_unit(mention.unit, unit) for unit in units)) or (
                    not mention.unit and cues & set(words_before(remark, mention.start, 2))
                ):
                    return f"{shown}, which states {mention.text}, a value this skill takes"
            elif any(kind in (*ENTITY_KINDS, "crystal", "structure") for kind in kinds.values()):
                return f"{shown}, which names {mention.text}, what this skill takes"
        words = [w.lower() for w in re.findall(r"[A-Za-z]+", remark)]
        telling = [w for w in words if (is_technical(w) and explains(vocabulary, w)) or w in MODIFIERS or w in ALTERING or _OTHER_FORM.search(w)]
        telling += sorted(structural_words(remark))  # "the primitive cell", "bcc", "strain": what may change the structure
        if telling:
            return f"{shown}, which speaks of {telling[0]!r}, what can change the answer"
    return None


def bind(skill: Skill, query: str) -> Binding:
    """Parameters for ``skill`` from ``query``, each tied to the question's words; ``BindingDeclined`` when unsure."""
    verified = skill.provenance.query or skill.description
    query, remarks = split_side_remarks(named_packages(joined_units(query)))  # "in electron volts": one unit, not "electron"
    properties = skill.parameters.properties
    kinds = {name: parameter_kind(prop) for name, prop in properties.items()}
    vocabulary = _vocabulary(skill)
    aside = _set_aside_input(remarks, skill, kinds, vocabulary) if remarks else None
    if aside:
        raise BindingDeclined(aside)
    crystal = next((name for name, kind in kinds.items() if kind == "crystal"), None)
    found_crystal = bind_crystal(skill, query, crystal) if crystal else None
    if found_crystal is not None:  # the rest reads what the crystal did not take
        query = found_crystal.query
    asked, known = find_mentions(query), find_mentions(verified)
    tables = [name for name, kind in kinds.items() if kind == "entries"]
    asked_pairs = entry_pairs(query, asked) if tables else []
    listed, listing = pair_mentions(entry_pairs(verified, known)) if tables else set(), pair_mentions(asked_pairs)
    unlisted = [m for m in known if (m.start, m.text) not in listed]  # the verified list's entries are its list parameter's
    sources = {name: None if kinds[name] == "entries" else _source(verified, unlisted, name, prop, kinds[name]) for name, prop in properties.items()}
    source_spans = {(m.start, m.text) for m in sources.values() if m is not None}
    # The verified question's constants: what no parameter came from ("naphthalene (SMILES c1ccc2ccccc2c1)" is one source).
    context = [m for m in unlisted if (m.start, m.text) not in source_spans and not any(s is not None and equal_mentions(m, s) for s in sources.values())]
    named_by = _formula_names(query, asked)
    naming = {element.start for element, _ in named_by}  # the lithium of "lithium superoxide, LiO2"
    naming |= {m.start for element, ion in named_by for m in asked if m.kind == "name" and m.text.lower() == ion and m.start > element.start}
    naming |= _in_systematic_names(query, asked)  # the pyridine of "3-[(2S)-1-methylpyrrolidin-2-yl]pyridine"
    naming |= found_crystal.taken if found_crystal is not None else set()  # "rock-salt KCl": the crystal's substance
    other = _systematic_name_of_another(query, asked) or _other_file(skill, query) or _other_plane(skill, query) or _part_of(query, asked, vocabulary)
    if other:
        raise BindingDeclined(other)
    fresh = [m for m in asked if not _restating(m, asked, context) and (m.start, m.text) not in listing and m.start not in naming]
    # "±5 %" and "0.95 to 1.05" state the same factors: either restates the other in the verified question.
    fresh = [m for m in fresh if not (m.plus_minus and spread(m, context)) and not any(factor(m, c) for c in context)]
    if not any(kind in (*ENTITY_KINDS, "crystal") for kind in kinds.values()):  # "Argon dimer" for the code's own Atoms("Ar2")
        own = _code_substances(skill.code)
        fresh = [m for m in fresh if m.kind == "number" or not (found := m.formula or m.element) or frozenset(formula_elements(found)) not in own]
    if not any(kind in (*ENTITY_KINDS, "crystal", "entries") for kind in kinds.values()):
        partly = _partly_named(context, asked)
        if partly:
            raise BindingDeclined(partly)
    if any(re.search(r"\b(?:dimer|diatomic)\b", text, re.IGNORECASE) for text in verified_texts_of(skill)):
        fresh = [m for m in fresh if not (m.counted == "atom" and m.number == 2)]  # "the two atoms" of a dimer
    verified_atoms = {m.number for text in verified_texts_of(skill)[1:] for m in find_mentions(text) if m.counted == "atom"}
    spelled = {
        (float(NUMBER_WORDS.index(number.lower()) + 1), stem(noun.lower()))
        for text in verified_texts_of(skill) for number, *nouns in _SPELLED_COUNT.findall(text) for noun in nouns if noun
    }  # fmt: skip
    fresh = [m for m in fresh if not (m.number and any((m.number, w) in spelled for w in words_after(query, m.end, 2)))]  # "all 4 criteria"
    sized = any(m.counted == "atom" and m.number in verified_atoms for m in fresh)  # "a 108-atom supercell" of a verified "(108 atoms)"
    in_cell = _conventional_atoms(query)
    fresh = [m for m in fresh if not (m.counted == "atom" and in_cell and m.number == in_cell)]  # "the 2-atom cubic cell of bcc iron"
    for m in asked:  # "the 8-atom cubic cell of bcc iron": the verified 8 atoms were diamond's cell
        if m.counted == "atom" and in_cell and m.number != in_cell and "cell" in words_after(query, m.end, 3):
            raise BindingDeclined(f"the question's {m.text} cell is not the conventional cell of the structure it names ({in_cell} atoms)")
    fresh = [m for m in fresh if not (m.counted == "atom" and m.number in verified_atoms)]
    repeats = [m for m in asked if _REPEAT.fullmatch(m.text)]
    if repeats:  # "2x2x2 supercell of the 4-atom cell (32 atoms)": the counts follow from the repeat ("3 atoms removed" does not)
        product = math.prod(int(n) for n in re.findall(r"\d+", repeats[0].text))
        counts = {m.number for m in asked if m.counted == "atom"}
        fresh = [
            m for m in fresh if not (m.counted == "atom" and m.number and (m.number == 1 or m.number % product == 0 or m.number * product in counts))
        ]  # fmt: skip

    if _FIRST_SITE.search(skill.code):  # "the neighbours of site 0": the code's own s[0], no value
        fresh = [m for m in fresh if not (m.kind == "number" and m.number == 0 and _SITE_ZERO.search(query[: m.start]))]
    if found_crystal is not None:  # "a0 = 5.658 Å" beside the code's Lattice.cubic(5.658): the value the crystal's call gave
        given = {value for b in found_crystal.bound if isinstance(value := b.value, (int, float))}
        fresh = [m for m in fresh if not (m.kind == "number" and m.number in given and m.unit in (None, "Å", "angstrom"))]
    differs = _answer_differs(skill, query)
    if differs:
        raise BindingDeclined(differs)
    structure_params = [name for name, kind in kinds.items() if kind == "structure"]
    named = structure_mentions(query) if structure_params else []
    if named:  # "body-centred tetragonal" is a value of the skill's structure parameter
        vocabulary |= explaining_forms(w.lower() for m in named for w in re.findall(r"[A-Za-z]+", m.text))
    lattice = _lattice_system(skill.code)
    if lattice:  # "the wurtzite GaN cell" for a skill that builds a hexagonal lattice and nothing on it
        vocabulary |= explaining_forms(_structure_words_of_system(query, lattice))
    # No word of the question can change a structure: the skill takes none, was verified on none and its code builds none.
    substance_only = not structure_params and not structures(verified) and not _BUILDS_CRYSTAL.search(skill.code)
    if substance_only:  # a composition's answer is the same in any structure ("LiFePO4 (the olivine cathode)")
        framing = substance_names(query, asked) | framing_words(query, asked, vocabulary=vocabulary) | structure_names(query)
    else:  # the asker's framing less what can name a structure; a name of the formula where the question states the structure
        framing = framing_words(query, asked, structural=True, vocabulary=vocabulary) | _names_in_stated_structure(query, asked)
    if tables:  # "Given DFT total energies: Li 0.0, …": where the entries' energies came from, for a skill that takes them
        framing |= data_sources(query)
    own_elements = frozenset(name for group in _code_substances(skill.code) for symbol in group for name in element_names(symbol))
    unexplained = [w for w in _unexplained(vocabulary, query, asked, verified_texts_of(skill), own_elements) if w not in framing]
    if not substance_only:  # "for the melts", "the (111) surface": common words that make the crystal another thing
        written = {w for w, _, _ in question_words(query, asked)}
        unexplained += [w for w in sorted(written & ALTERING) if not explains(vocabulary, w) and w not in unexplained]
    naming_words = _names_of_smiles(query, asked)  # "OCCc1ccccc1 (2-phenylethanol)": an aside that names the molecule
    unexplained += [
        w for _, w in aside_words(query, asked) if w not in framing and w not in naming_words and not explains(vocabulary, w) and w not in unexplained
    ]  # fmt: skip
    unexplained += [w for w in instruction_words(query) if not explains(vocabulary, w) and w not in unexplained]
    sourced = [*asked_quantity(query), *(w.lower() for w in _ACCORDING.findall(query))]  # the experimental energy; according to experiment
    unexplained += [w for w in dict.fromkeys(sourced) if w in _OTHER_SOURCES and not explains(vocabulary, w) and w not in unexplained]
    if unexplained:
        shown = ", ".join(repr(w) for w in unexplained[:4])
        raise BindingDeclined(f"the question asks about {shown}, which this skill was not verified on")
    verified_texts, answer_unit = verified_texts_of(skill), skill.unit or read_answer_spec(verified).unit
    other = (
        reversed_sense(verified_texts, query) or denied_substance(query, asked) or dropped_qualifier(verified_texts, query) or other_qualifier(verified_texts, query)
        or other_basis(verified_texts, query, answer_unit) or other_units(verified_texts, query, answer_unit) or other_order(verified_texts, query)
        or other_superlative(vocabulary, query) or other_selection(verified_texts, query) or uneven_repeat(verified_texts, query) or fixed_setting(verified, context, query, fresh)
        or own_formula(verified_texts, query)
        or other_quantity(verified_texts, query, _described(skill), asked) or other_count(verified_texts, query, _code_counts(skill.code))
    )  # fmt: skip
    if other:
        raise BindingDeclined(other)
    differs = _code_differs(skill.code, query, asked) or _other_pair(verified_texts, query, vocabulary)
    if differs:
        raise BindingDeclined(differs)
    compared = _comparisons(verified)
    if compared and not _comparisons(query) <= compared:  # "MolWt >= 500", or criteria joined by "or", for "at most 500" and "and"
        raise BindingDeclined(f"the question compares otherwise ({', '.join(sorted(_comparisons(query) - compared))}) than the verified question")
    twice = restated(context, asked, known)
    if twice:
        raise BindingDeclined(twice)
    if not properties:
        said = [c for c in context if any(factor(c, a) for a in asked)]  # 0.95 and 1.05 said as ±5 %
        missing = [_stated(m) for m in known if not any(equal_mentions(m, a) for a in asked) and m not in said]
        if fresh or missing:
            parts = [m.text for m in fresh] + [f"no {t}" for t in missing]
            raise BindingDeclined(f"the skill has no parameters and answers only its own question; this one differs ({', '.join(parts[:4])})")
        return Binding()

    binding = Binding()
    if found_crystal is not None:
        for name, value in found_crystal.params.items():
            _check_value(name, properties[name], value)
            binding.params[name] = value
        binding.bound += found_crystal.bound
    crystal_changed = found_crystal is not None and found_crystal.changed
    if tables:
        _bind_entries(binding, tables, properties, asked_pairs, query)
    asked_structures, verified_structures = structures(query), structures(verified)
    of_lattice = bool(lattice) and all(name in GROUPS and crystal_family(GROUPS[name]) == lattice for name in asked_structures)
    if verified_structures and not structure_params and asked_structures and asked_structures != verified_structures and not of_lattice and not crystal_changed:
        shown = ", ".join(sorted(asked_structures))  # "copper in the A2 (bcc) structure" of a skill that builds fcc copper
        raise BindingDeclined(f"the question asks about the {shown} structure; the skill builds {', '.join(sorted(verified_structures))}")
    asked_groups = stated_groups(query)
    own_groups = stated_groups("\n".join([*verified_texts_of(skill), skill.code])) if asked_groups and not structure_params else set()
    if own_groups and not lattice and not asked_groups <= own_groups and not crystal_changed:  # "graphite, P6_3/mmc" for a skill that builds Fd-3m
        raise BindingDeclined(f"the question states space group {_group_names(asked_groups - own_groups)}; the skill builds {_group_names(own_groups)}")
    if not substance_only:  # "Cinnabar (HgS) in the rock-salt structure": a mineral the prototype library builds otherwise
        reference = asked_groups | stated_groups("\n".join([*verified_texts_of(skill), skill.code]))
        for mention in (m for m in asked if m.kind == "name" and not m.element and prototype_groups(m.text) and reference):
            if not prototype_groups(mention.text) & reference:
                raise BindingDeclined(f"the question names {mention.text}, a mineral of another structure than {_group_names(reference)}")
    strange = unknown_structure(query) if verified_structures else None
    if strange:  # "the A15 structure": not one this skill was verified on, nor one it can be told to build
        raise BindingDeclined(f"the question names a structure ({strange}) this skill does not know")
    if named:
        _bind_structure(binding, structure_params, properties, named)
    structure = None if named or crystal_changed else _structure_unsaid(verified_structures, asked_structures)
    verified_lines, asked_lines = _lines(verified), _lines(query)
    if verified_lines and asked_lines and asked_lines != verified_lines:  # "Mo Kα" or "Cu Kβ" for a skill verified with CuKa
        lines = ", ".join(sorted(asked_lines))
        raise BindingDeclined(f"the question asks for the {lines} line; the skill was verified with {', '.join(sorted(verified_lines))}")
    free = _bind_substances(binding, skill, query, sources, [m for m in fresh if m.kind != "number"])
    moved = [name for name in structure_params if name in binding.params and binding.params[name] != properties[name].default]
    if free and moved and not _alike_substances(free[0], known):
        # "diamond-cubic Si" for a skill shown not to depend on NaCl in the rock-salt structure: one element where it built two
        raise BindingDeclined(
            f"the skill was shown not to depend on its substance only in the {properties[moved[0]].default} structure; "
            f"the question names {free[0].text} in another"
        )
    if free is not None and (whole := whole_of(free, asked)) is not None:  # "how many of its sites are chlorine", of NaCl's sites
        raise BindingDeclined(f"the question singles out {free[0].text!r} of {whole.text}, which this skill does not take apart")
    _bind_numbers(
        binding, properties, kinds, query, verified, asked, known, sources, [m for m in fresh if m.kind == "number"], context, skill.tunables,
        skill.code,
    )  # fmt: skip
    pair = range_pair(verified, known, sources)
    if pair is not None and sum(name in binding.params for name in pair) == 1:  # "a path length of exactly 3" for "lengths 1 to 6"
        raise BindingDeclined(f"the question states one value where this skill takes a range ({pair[0]} to {pair[1]})")
    if structure and any(reference_structure(other) != structure for other in _other_substances(free, binding, properties)):
        raise BindingDeclined(f"the skill builds the {structure} structure of its own substance; the question does not say its substance has it")
    _bind_defaults(binding, properties, kinds, query, skill.tunables, free, sized)
    isomer = _another_isomer(skill.code, binding, query)
    if isomer:
        raise BindingDeclined(isomer)
    problems = domain_problems(skill, binding.params, unset="the question does not state")  # a hidden constant; a list without its compound
    if problems:
        raise BindingDeclined(problems[0])
    own_substance = any(equal_mentions(k, a) for k in known if k.kind != "number" for a in asked if a.kind != "number")
    if crystal and not crystal_changed and not own_substance:  # "a rock-salt crystal", "K+Cl-": no substance read
        raise BindingDeclined(f"the question names no substance this skill can build; it builds {substance_text(properties[crystal], properties[crystal].default)}")
    if crystal_changed and crystal and _FIRST_SITE.search(skill.code) and not _SAYS_FIRST.search(query):
        if len(_site_elements(binding.params[crystal])) > len(_site_elements(properties[crystal].default)):
            raise BindingDeclined("the skill looks around the first site only; the question's crystal has sites of several elements")
    sibling = None if own_substance else _unstated_sibling(binding, properties, kinds, skill.tunables)
    if sibling:  # "magnesium with c = 5.3 Å" keeps magnesium's a; "a hexagonal cell with a = 2.951 Å" has no c
        raise BindingDeclined(sibling)
    absent = _element_not_in_formula(binding.params, properties, kinds)
    if absent:
        raise BindingDeclined(absent)
    return binding


def _element_not_in_formula(params: dict[str, Any], properties: Mapping[str, Parameter], kinds: dict[str, str]) -> str | None:
    """An element asked of a formula that has none of it (oxygen of "Ti"), where the verified element was one of its
    formula's: the question was read wrongly, or asks what the skill cannot answer."""
    for element_name in (n for n, k in kinds.items() if k == "element"):
        for formula_name in (n for n, k in kinds.items() if k == "formula"):
            element, formula = params.get(element_name), params.get(formula_name)
            default_element, default_formula = properties[element_name].default, properties[formula_name].default
            if not (isinstance(element, str) and isinstance(formula, str) and isinstance(default_element, str) and isinstance(default_formula, str)):
                continue
            if default_element in formula_elements(default_formula) and element not in formula_elements(formula):
                return f"the question asks for {element} in {formula}, which has none"
    return None


def _bind_substances(
    binding: Binding, skill: Skill, query: str, sources: dict[str, Mention | None], fresh: list[Mention]
) -> list[Mention] | None:
    """Give each substance the question states to the one parameter of its kind (``skills/substances.py``), else decline;
    returns the substance left to no parameter because the answer was shown not to depend on it, if there is one."""
    properties = skill.parameters.properties
    kinds = {name: parameter_kind(prop) for name, prop in properties.items()}
    slots = sorted(
        ((n, k) for n, k in kinds.items() if k in ENTITY_KINDS),
        key=lambda nk: sources[nk[0]].start if sources[nk[0]] is not None else 10**9,  # type: ignore[union-attr]  # None sorted last
    )
    groups = merge(parts_left_out(fresh, query))
    left: list[Mention] | None = None
    try:
        entities = assign_entities(groups, slots)
    except BindingDeclined as declined:
        # A substance the answer was shown not to depend on (the element of a volume-per-atom from a lattice constant).
        free = [g for g in groups if any(group_value(g, k) is not None for k in skill.independent_of)]
        if len(free) == 1 and fits(groups, free[0], slots):
            entities = assign_entities([g for g in groups if g is not free[0]], slots)
            left = free[0]
        elif (described := assign_described(groups, slots)) is not None:
            entities = described
        else:
            raise declined from None
    for name, group in entities.items():
        value = group_value(group, kinds[name])
        _check_value(name, properties[name], value)
        binding.params[name] = value
        binding.bound.append(BoundValue(name=name, value=value, words=" / ".join(m.text for m in group)))
    return left


def _bind_entries(
    binding: Binding, tables: list[str], properties: Mapping[str, Parameter], pairs: list[tuple[Mention, Mention]], query: str
) -> None:
    """Give the skill's one list of entries the (substance, number) entries the question lists, else decline."""
    if len(tables) > 1:
        raise BindingDeclined(f"cannot tell which list of entries the question gives: {' or '.join(tables)}")
    name = tables[0]
    if not pairs:
        raise BindingDeclined(f"the question lists no entries for {name} (a substance and its number each, as in {properties[name].source!r})")
    head = query[: pairs[0][0].start]
    said = head[head.lower().rfind("energ") :] if "energ" in head.lower() else ""  # "total energies per atom: Li 0.0, …"
    if re.search(r"/\s*atom|per\s+(?!formula\s+unit)|\b(?:kj|kcal|mol|mev|ry|hartree|two|half|double|twice)\b", said, re.I):
        raise BindingDeclined(f"the question gives its entries' energies {said.strip(' :')!r}, not per formula unit as written")
    for substance, number in pairs:  # "Li2O2 -1.4 per atom", "LiO2 -231.6 kJ/mol", "(per two formula units)": not the list's basis
        after = re.match(r"[^,;]*?(?=\s*(?:[,;]|\band\b|\.\s|\.?$|\s[—–-]\s|\)\s*[,;.]?\s*(?:[A-Z]|$)))", query[number.end :])
        rest = after.group() if after else query[number.end :]
        if (number.unit and not same_unit(number.unit, "eV")) or re.search(r"/|per\s+(?!formula\s+unit)|\b(?:kj|kcal|mol|mev|ry|hartree|two|half|double|twice)\b", rest, re.I):
            raise BindingDeclined(f"the question gives {substance.text} {number.text}{rest.rstrip()}, not as the other entries are given")
    value: list[JsonValue] = [[substance.formula or substance.element or substance.text, number.number] for substance, number in pairs]
    _check_value(name, properties[name], value)
    binding.params[name] = value
    binding.bound.append(BoundValue(name=name, value=value, words=", ".join(f"{a.text} {b.text}" for a, b in pairs)))


def _bind_structure(binding: Binding, names: list[str], properties: Mapping[str, Parameter], named: list[StructureMention]) -> None:
    """Give the skill's structure parameter the one structure type the question names, else decline."""
    kinds = sorted({m.name for m in named})
    if len(kinds) > 1 or len(names) > 1:
        raise BindingDeclined(f"cannot tell which structure the question asks about: {', '.join(kinds)}")
    _check_value(names[0], properties[names[0]], kinds[0])
    binding.params[names[0]] = kinds[0]
    binding.bound.append(BoundValue(name=names[0], value=kinds[0], words=named[0].text))


def _another_isomer(code: str, binding: Binding, query: str) -> str | None:
    """Why a molecule the question names is not the one ``ase.build.molecule(formula)`` builds (cyclopentene, C5H8: ase
    builds spiropentane), or None."""
    for bound in binding.bound:
        if not re.search(rf"\bmolecule\(\s*{re.escape(bound.name)}\s*\)", code) or not isinstance(bound.value, str):
            continue
        from ase.data.g2 import data

        entry: dict[str, Any] = data.get(bound.value, {})  # type: ignore[assignment]  # ase's table of molecules
        built = re.search(r"\(([^)]+)\)", str(entry.get("name", "")))
        names = [w.strip().lower() for w in bound.words.split(" / ") if w.strip() and w.strip() != bound.value]
        before = re.search(rf"\b(?:of|for|is|the|a|an)\s+((?:[\w',-]+\s+){{0,3}}?[\w',-]+?),?\s*[(:]?\s*{re.escape(bound.value)}\b", query)
        if before and before.group(1).lower() not in ("molecule", "molecular", "gas", "gaseous", "free", "isolated"):
            names.append(before.group(1).lower())  # "cyclopentene, C5H8", "Dewar benzene (C6H6)", "1,3-pentadiene, C5H8"
        if built and any(n != built.group(1).lower() for n in names):
            return f"ase builds {bound.value} as {built.group(1)}; the question names {names[0]}"
    return None


def _other_substances(free: list[Mention] | None, binding: Binding, properties: Mapping[str, Parameter]) -> list[str]:
    """The substances the question puts in the verified one's place: one no parameter takes (``free``; "" when it is
    neither an element nor a formula) and each substance parameter given another value."""
    found = [group_value(free, "element") or group_value(free, "formula") or ""] if free is not None else []
    return found + [str(binding.params[name]) for name in changed_substances(properties, binding.params)]


def _bind_numbers(
    binding: Binding, properties: Mapping[str, Parameter], kinds: dict[str, str], query: str, verified: str,
    asked: list[Mention], known: list[Mention], sources: dict[str, Mention | None], fresh: list[Mention], context: list[Mention],
    tunables: list[str], code: str,
) -> None:  # fmt: skip
    """Give each number the question states to the one parameter it is tied to most strongly (``skills/numeric.py``).

    A number of the same value as a constant of the verified question, written otherwise ("within 3 Å" for its 3.0), may
    restate it: it is that constant when the parameter it would go to has a value from another number, and when it
    has none the skill cannot tell which it is and declines."""
    for mention in (m for m in fresh if m.plus_minus):
        pair = spread_pair(properties, kinds)
        if pair is None:
            raise BindingDeclined(f"the question states {mention.text}, which no pair of factors of this skill takes")
        for name, value in zip(pair, (1 - (mention.number or 0) / 100, 1 + (mention.number or 0) / 100), strict=True):
            _check_value(name, properties[name], value)
            binding.params[name] = round(value, 12)
            binding.bound.append(BoundValue(name=name, value=binding.params[name], words=mention.text))
    numbers = [m for m in fresh if not m.plus_minus]
    alike = [m for m in numbers if any(c.kind == "number" and not c.plus_minus and c.number == m.number for c in context)]
    numbers = [m for m in numbers if m not in alike] + alike  # the plain values first: they say which parameters are taken
    substance_words = frozenset(stem(w) for m in known + asked if m.kind != "number" for w in re.findall(r"[A-Za-z]+", m.text))
    numeric = [n for n, k in kinds.items() if k in ("number", "integer")]
    ranged = bound_ranges(verified, known, sources, query, numbers)
    partners = entry_partners(verified, known, sources, numeric)
    other_unit, unitless = "", []  # a value in another unit than its parameter's, and values given without one
    code_names = {n.lower() for n in _code_names(code)}
    called = _called_positions(query, code, numeric)
    for mention in numbers:
        times = re.match(r"\s*(?:[*×·]\s*)?([A-Za-zσεα-ω_]+)\b", query[mention.end :])
        multiple_of = properties.get(times.group(1)) if times and len(times.group(1)) > 1 else None
        of_length = multiple_of is not None and bool(multiple_of.unit) and not mention.unit and not _REPEAT.fullmatch(mention.text)
        if times and (of_length or re.fullmatch(r"[σε]", times.group(1))):
            # "rc = 1.2 sigma", "1.2σ": a multiple of another parameter, not a value
            raise BindingDeclined(f"the question states {mention.text} {times.group(1)}, a multiple of another parameter")
        assigned = re.search(r"(?<![\w/.])([A-Za-z_]\w{0,11})\s*=\s*$", query[: mention.start])
        if assigned and not _takes(assigned.group(1), properties, code_names):  # "b = 5.211 Å" for a skill of a and c
            raise BindingDeclined(f"the question sets {assigned.group(1)} = {mention.text}, which this skill does not take")
        strengths = {name: ties(query, mention, name, properties[name], substance_words) for name in numeric}
        if mention.start in ranged:  # a range goes to the two parameters the verified question stated as one, in order
            unit = properties[ranged[mention.start]].unit  # "from 350 to 370 pm" never sets a range in Å
            strengths = {name: 4.0 if name == ranged[mention.start] and not units_differ(mention.unit, unit) else 0.0 for name in numeric}
        slot = called.get(mention.start)  # where the verified value is of the same size: "linspace(10.0, 11.8, 9)" of volumes is no lattice constant
        default = properties[slot].default if slot is not None else None
        near = not isinstance(default, (int, float)) or not default or 0.5 <= (mention.number or 0) / default <= 2.0
        if slot is not None and slot in strengths and near and not units_differ(mention.unit, properties[slot].unit):
            strengths = {name: 5.0 if name == slot else 0.0 for name in numeric}  # "linspace(3.42, 3.62, 11)": the code's own call
        listed_with = partner(query, asked, mention)
        words = {b.name: b.words for b in binding.bound}
        for name, verified_partner in partners.items():
            if listed_with is not None and same_entry(listed_with, verified_partner, words, sources):
                strengths[name] = max(strengths[name], 2.6)  # "Li2O -6.2" goes where "Li2O -6.0" went
        if _REPEAT.fullmatch(mention.text):  # "3×3×3" repeats a cell: a count, never a length
            strengths = {name: s if kinds[name] == "integer" else 0.0 for name, s in strengths.items()}
        if mention.counted or _REPEAT.fullmatch(mention.text):  # "a 64-atom cell" never sets the 3 of a 3x3x3 repeat
            strengths = {name: max(s, 2.0) if _counts_alike(mention, sources.get(name), name) else 0.0 for name, s in strengths.items()}
        fraction = mention.number is not None and not float(mention.number).is_integer()
        if fraction and any(s > 0 and kinds[name] != "integer" for name, s in strengths.items()):  # 3.52 Å: a length, not a repeat
            strengths = {name: s if kinds[name] != "integer" else 0.0 for name, s in strengths.items()}
        # A setting (``tunables``) is stated by its name or words; by its unit alone a number is rather the material's.
        strengths = {name: 0.5 if s == 1 and name in tunables else s for name, s in strengths.items()}
        best = max(strengths.values(), default=0)
        tied = [name for name, s in strengths.items() if s == best and best > 0]
        restating = [name for name, s in strengths.items() if s > 0 and _is_default(properties[name], mention.number)]
        if best <= 1 and len(restating) == 1:
            tied = restating  # "within 3 Å" for the verified 3.0 cutoff, beside a lattice constant in Å: the value it restates
        if not tied:  # "MW ≤ 500" for the verified "molecular weight at most 500": its one parameter of that value, restated
            tied = _restated_default(mention, query, verified, asked, known, properties, sources, binding)
        if not tied:
            unit = f" {mention.unit}" if mention.unit and mention.unit not in mention.text else ""
            raise BindingDeclined(f"the question states {mention.text}{unit}, which no parameter of this skill takes")
        if len(tied) > 1:
            raise BindingDeclined(f"cannot tell whether {mention.text} is {' or '.join(tied)}")
        name = tied[0]
        if mention in alike:
            if name in binding.params:
                continue  # the verified question's constant, restated
            raise BindingDeclined(f"cannot tell whether {mention.text} sets {name} or restates the verified question's constant")
        number = float(mention.number or 0.0)
        if units_differ(mention.unit, properties[name].unit):  # "a = 0.352 nm" is 3.52 Å; 300 K is no length
            in_unit = converted(number, mention.unit, properties[name].unit)
            if in_unit is None:
                raise BindingDeclined(f"the question states {mention.text} in {mention.unit}; {name} is in {properties[name].unit}")
            number, other_unit = in_unit, mention.unit or ""
        elif properties[name].unit and not mention.unit:
            unitless.append(mention)
        if name in binding.params:
            said = binding.params[name]
            in_code = re.search(r"\w\([^()]*$", query[: mention.start]) is not None
            if isinstance(said, (int, float)) and math.isclose(float(said), number, rel_tol=1e-9) and strengths[name] >= 3 and in_code:
                continue  # "a = 3.61 Å ... bulk('Cu', 'fcc', a=3.61)": the same value said again, by its name, in the code
            raise BindingDeclined(f"the question gives two values for {name}: {binding.params[name]} and {mention.text}")
        if other_unit and unitless:  # "a = 0.3209 and c = 0.5211 nm": is 0.3209 in nm or in Å?
            raise BindingDeclined(f"the question gives a value in {other_unit} and {unitless[0].text} without a unit: which unit is it in?")
        _check_value(name, properties[name], number)
        binding.params[name] = int(number) if kinds[name] == "integer" else number
        binding.bound.append(BoundValue(name=name, value=binding.params[name], words=_words(query, mention)))


def _bind_defaults(
    binding: Binding,
    properties: Mapping[str, Parameter],
    kinds: dict[str, str],
    query: str,
    tunables: list[str],
    free: list[Mention] | None,
    sized: bool = False,
) -> None:
    """Leave each parameter the question does not state at its verified default, where that default can stand: a number
    for another substance (a substance parameter changed, or ``free``, one no parameter takes: germanium never takes
    silicon's lattice constant) only when it is a setting that did not change the verified answer (``Skill.tunables``);
    a count of the method's where the question gives the verified size in atoms (``sized``: "a 108-atom supercell")."""
    changed = changed_substances(properties, binding.params)
    same_cell = all(binding.params.get(n, p.default) == p.default for n, p in properties.items() if kinds[n] == "structure")
    sized = sized and same_cell  # 108 atoms are a 3x3x3 supercell of the verified fcc cell, not of a bcc one
    for name, prop in properties.items():
        if name in binding.params:
            continue
        if kinds[name] in ("number", "integer") and _speaks_of(query, name) and not (sized and is_count_setting(name)):
            raise BindingDeclined(f"the question speaks of {name} but gives it no value this skill can read")
        if (changed or free is not None) and kinds[name] in ("number", "integer") and name not in tunables:
            owned = properties[changed[0]] if changed else None
            substance, owner = (
                (substance_text(owned, binding.params[changed[0]]), substance_text(owned, owned.default))
                if owned is not None else (free[0].text if free else "", "another substance")
            )  # fmt: skip
            raise BindingDeclined(f"the question does not state {name} for {substance}; the verified {prop.default} belongs to {owner}")
        if kinds[name] in ENTITY_KINDS:
            raise BindingDeclined(f"the question names no {kinds[name]} for {name}")
        binding.params[name] = prop.default
        binding.bound.append(BoundValue(name=name, value=prop.default, words=DEFAULT_WORDS))


_LINE = re.compile(r"(?<![A-Za-z])([A-Z][a-z]?)[\s-]?K[\s-]?(α|β|alpha|beta|a|b)[\s-]?([12₁₂]?)(?![a-z\d])")


def _lines(text: str) -> set[str]:
    """The X-ray lines a text names ("Cu Kα", "CuKa", "Mo K-alpha" → CuKα, MoKα; "Cu K-alpha1" → CuKα1, another line than
    the averaged Kα)."""
    return {
        f"{m.group(1)}K{'α' if m.group(2) in ('α', 'alpha', 'a') else 'β'}{m.group(3).translate(str.maketrans('₁₂', '12'))}"
        for m in _LINE.finditer(text)
    }


def _structure_unsaid(said: set[str], asked: set[str]) -> str | None:
    """A structure type the verified question names (``said``) and this one does not (``asked``): ``fcc`` copper, asked of
    tungsten. For another substance the skill may build the wrong crystal, so the question must say it (or name the same one)."""
    missing = sorted(said - asked)
    return missing[0] if missing else None


_REPEAT = re.compile(r"\d+\s*[x×]\s*\d+(?:\s*[x×]\s*\d+)?")


def _counts_alike(mention: Mention, source: Mention | None, name: str) -> bool:
    """Whether a count states what the verified value counted: atoms for atoms, a repeat for a repeat; or the points or
    steps of a count of the method's ("a 15-point EOS scan" for numpy's ``num`` of "11 evenly spaced lattice constants")."""
    if source is None or bool(_REPEAT.fullmatch(source.text)) != bool(_REPEAT.fullmatch(mention.text)):
        return False
    return source.counted == mention.counted or (mention.counted in _SAMPLED and source.counted is None and is_count_setting(name))


_SAMPLED = frozenset({"point", "image"})
"""What a count of the method's counts, where the question writes it as "15-point", "9 points" (not "in 10 steps": 11 points)."""


def _takes(name: str, properties: Mapping[str, Parameter], code_names: set[str]) -> bool:
    """Whether a name the question assigns a value to is one the skill has: a parameter, a name its code uses, or a
    parameter written with a trailing 0 ("a0" for a)."""
    return name in properties or name.lower() in code_names or name.rstrip("0") in properties or len(name) > 12


def _pairs(text: str) -> set[tuple[str, str]]:
    """Words joined by a slash or hyphen ("octanol-water", "air/water"), lowercase, longer than two letters."""
    return {(a.lower(), b.lower()) for a, b in re.findall(r"\b([A-Za-z]{3,})[/-]([A-Za-z]{3,})\b", text)}


_KIND_WORDS = frozenset("type like structure structured based form".split())
"""Words that join a name to say "of that kind" ("diamond-type", "rock-salt-like", "fluorite-structure")."""


def _other_pair(verified_texts: list[str], query: str, vocabulary: frozenset[str]) -> str | None:
    """Why a pair the question names is not the verified one it resembles ("air/water" for the verified "octanol-water"
    partition: a word the skill does not explain; "water/octanol": the pair reversed), or None."""
    verified = set().union(*(_pairs(t) for t in verified_texts))
    for pair in _pairs(query) - verified:
        if any(w in _KIND_WORDS for w in pair) and all(explains(vocabulary, w) for w in pair if w not in _KIND_WORDS):
            continue  # "diamond-type" for the verified "diamond-structure": the same structure
        alike = [v for v in verified if set(v) & set(pair)]
        if alike and ((pair[1], pair[0]) in verified or not all(explains(vocabulary, w) for w in pair)):
            return f"the question names {'/'.join(pair)}; the skill was verified on {'-'.join(alike[0])}"
    return None


_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\(([^()]*)\)")
_LITERAL_KEYWORD = re.compile(r"\b([A-Za-z_]\w*)\s*=\s*(?:True|False|None|'[^']*'|\"[^\"]*\"|[-+]?\d[\d.eE+-]*)")


def _code_differs(code: str, query: str, asked: list[Mention]) -> str | None:
    """Why code the question writes is not the skill's: a call of the same function without a keyword the skill's code
    sets to a constant (``bulk('Si', 'diamond', a=5.431)`` for ``bulk(..., cubic=True)``), a keyword the code sets to
    another truth value, or numbers in a call that no value was read from (``.repeat((2, 2, 2))``); else None."""
    flat = re.sub(r"\s+", "", code)
    for keyword, value in re.findall(r"(?<![\w.])([A-Za-z_]\w*)\s*=\s*(True|False)\b", query):  # "cubic=False", "smooth=True"
        if f"{keyword}={value}" not in flat:
            return f"the question sets {keyword}={value}, which this skill's code does not"
    own = {name.lower() for name in _code_names(code)}
    for method in re.finditer(r"(?<=[\w)\]])\.\s*([A-Za-z_]\w*)\s*\(", query):  # "s.pop()" after the skill's own steps
        if method.group(1).lower() not in own:
            return f"the question's code calls {method.group(1)}(), which this skill's code does not"
    for dotted in re.finditer(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.([A-Za-z_]*(?:_[A-Za-z]\w*|[a-z][A-Z]\w*))\b", query):
        if dotted.group(1).lower() not in own:  # "pd.get_hull_energy_per_atom": a function the skill's code never calls
            return f"the question names {dotted.group()}, which this skill's code does not call"
    written = {call.group(1).split(".")[-1]: call for call in _CALL.finditer(query)}
    for name, call in written.items():
        if re.fullmatch(r"\s*(?:\.\.\.|…)?\s*", call.group(2)):
            continue  # "BFGS(...)", "BFGS()": its arguments left unsaid, not set otherwise
        for in_code in _CALL.finditer(code):
            if in_code.group(1).split(".")[-1] != name:
                continue
            missing = {k for k in _LITERAL_KEYWORD.findall(in_code.group(2))} - set(re.findall(r"\b([A-Za-z_]\w*)\s*=", call.group(2)))
            if missing:
                return f"the question calls {name}() without {', '.join(sorted(missing))}, which the skill's code sets"
    for call in re.finditer(r"\([^()]*\)", query):
        unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", call.group())
        literal = re.search(r"(?<![\w.-])\d+(?:\.\d+)?(?![\w.])", unquoted)  # a number, not the 1 of N-1 nor the 3 of 'Fm-3m'
        inside = [m for m in asked if m.start < call.end() and m.end > call.start()]
        if literal and not inside and re.search(r"\w\($|\(\($", query[: call.start() + 1]):
            return f"the question writes {call.group()} in code, and no value of it is read"
    return None


def _alike_substances(free: Mention, known: list[Mention]) -> bool:
    """Whether a substance the answer was shown not to depend on has as many elements as the verified question's (indium
    for magnesium: a structure of one element either way, only the label differs; silicon for NaCl: not alike)."""
    verified = [m.formula for m in known if m.kind != "number" and m.formula]
    return bool(verified) and free.formula is not None and len(formula_elements(free.formula)) == len(formula_elements(verified[0]))


_AT_MOST = re.compile(
    r"<=|≤|(?<![-=])<(?!-)|\bat most\b|\bno more than\b|\bnot more than\b|(?<!\bno )(?<!\bnot )\bless than\b|\bbelow\b|\bunder\b"
    r"|\bno (?:greater|higher|larger) than\b|\bnot exceeding\b|\bdoes not exceed\b"
)
_AT_LEAST = re.compile(
    r">=|≥|(?<![-=])>(?![-=])|\bat least\b|\bno less than\b|\bnot less than\b|(?<!\bno )(?<!\bnot )\bmore than\b"
    r"|(?<!\bno )(?<!\bnot )\bgreater than\b|\babove\b|(?<!\bnot )(?<!\bdoes not )\bexceed"
)
_EITHER = re.compile(r"\b(?:true|yes)\s+or\s+(?:false|no)\b", re.IGNORECASE)


def _comparisons(text: str) -> set[str]:
    """The comparisons a text makes ("at most", "≥"), and whether it joins criteria with "or" (not "true or false")."""
    found = {"at most"} if _AT_MOST.search(text) else set()
    found |= {"at least"} if _AT_LEAST.search(text) else set()
    return found | ({"or"} if re.search(r"\bor\b", _EITHER.sub("", text), re.IGNORECASE) else set())


def _restated_default(
    mention: Mention, query: str, verified: str, asked: list[Mention], known: list[Mention], properties: Mapping[str, Parameter],
    sources: dict[str, Mention | None], binding: Binding,
) -> list[str]:  # fmt: skip
    """The one parameter whose verified value the question restates in other words ("MW ≤ 500" for "molecular weight at
    most 500"), or ``[]``. Only where the question states the verified question's numbers, each as often and no other, and
    compares as it did: "MolLogP <= 10" is no restatement of the acceptors' 10, nor "≥ 500" of "at most 500"."""
    same = [name for name, prop in properties.items() if _is_default(prop, mention.number) and name not in binding.params]
    if len(same) != 1 or (source := sources.get(same[0])) is None or source.text != mention.text:
        return []
    if not _comparisons(query) <= _comparisons(verified):
        return []
    numbers = sorted(m.number for m in asked if m.kind == "number" and m.number is not None)
    if numbers == sorted(m.number for m in known if m.kind == "number" and m.number is not None):
        return same
    counted = {w for w in words_after(query, mention.end, 3) if len(w) > 3} & {w for w in words_after(verified, source.end, 4) if len(w) > 3}
    return same if counted else []  # "11 lattice constants" for "11 evenly spaced lattice constants": what it counts, said


def _is_default(prop: Parameter, number: float | None) -> bool:
    default = prop.default
    return number is not None and isinstance(default, (int, float)) and not isinstance(default, bool) and float(default) == number


def ran_with(bound: list[BoundValue], params: dict[str, Any], skill: Skill | None = None) -> list[BoundValue]:
    """Every parameter a skill runs with (``params``, defaults filled in), each with the question's words where it had them
    and, given the ``skill``, the unit it takes the value in."""
    words = {b.name: b.words for b in bound}
    units = {name: prop.unit for name, prop in skill.parameters.properties.items()} if skill is not None else {}
    return [BoundValue(name=name, value=value, words=words.get(name, DEFAULT_WORDS), unit=units.get(name)) for name, value in params.items()]


def _speaks_of(query: str, name: str) -> bool:
    """Whether the question names a parameter (``a =``, ``fmax``) without a value being bound to it."""
    if len(name) <= 2:
        return re.search(rf"(?<![\w]){re.escape(name)}\s*[=:]", query) is not None
    return re.search(rf"\b{re.escape(name)}\b", query, re.IGNORECASE) is not None


def _words(query: str, mention: Mention) -> str:
    before = re.findall(r"[^\s(]+", query[: mention.start])[-4:]
    return re.sub(r"([=:])\s+", r"\1", " ".join([*before, mention.text]))
