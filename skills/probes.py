"""Other values of a stated substance to try, chosen to differ in what the code reads, and when their answers prove independence.

The code's own names say what it reads of a molecule, a formula or an element: ``CalcNumAromaticRings``
reads aromatic rings, ``oxi_state_guesses`` oxidation states, ``bulk`` or ``Structure`` the species.
Besides a few values next to the stated one, values are picked from a panel (molecules) or from
variants of the stated one (formulas, elements) whose properties read by the code span below and above
the stated value's. Those properties are computed here with RDKit and pymatgen on the probe values
themselves: the code is never run outside the sandbox. When the code reads nothing known, every
property of the kind counts.

An answer is shown not to depend on the value only when, for every property the code reads, at least
two values that differ from the stated one in it gave the same answer (``shown_independent``).

>>> sorted(read_properties("smiles", {"MolFromSmiles", "CalcNumAromaticRings"}))
['aromatic rings']
>>> probe_values("smiles", "c1ccc2ccccc2c1", {"CalcNumAromaticRings"})[3:]  # after three next to it: no aromatic ring, and four
['CCO', 'c1cc2ccc3cccc4ccc(c1)c2c34']
>>> shown_independent("smiles", "c1ccc2ccccc2c1", ["Cc1ccc2ccccc2c1", "c1ccc2ccccc2c1O"], {"CalcNumAromaticRings"})
False
>>> shown_independent("smiles", "c1ccc2ccccc2c1", ["c1ccccc1", "C1CCCCC1"], {"CalcNumAromaticRings"})
True
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from functools import cache
from types import SimpleNamespace
from typing import Any

from skills.chemistry import canonical_smiles, element_neighbours, formula_elements, molecule
from skills.crystals import crystal_probes

__all__ = ["MIN_WITNESSES", "code_names", "code_reads", "perturbed", "read_properties", "probe_values", "shown_independent"]

TRIES = 3
MIN_WITNESSES = 2  # values that differ in a property read, whose answers must all agree, to call the answer independent of it
PER_PROPERTY = 2  # values picked per property read: the lowest and the highest the candidates offer

# Molecules that differ widely in every property below (rings, size, polarity, charge).
PANEL = (
    "CCO",  # ethanol
    "CC(=O)O",  # acetic acid
    "C1CCCCC1",  # cyclohexane
    "c1ccccc1",  # benzene
    "c1ccncc1",  # pyridine
    "c1ccc2cc3ccccc3cc2c1",  # anthracene
    "c1cc2ccc3cccc4ccc(c1)c2c34",  # pyrene
    "Cn1cnc2c1c(=O)n(C)c(=O)n2C",  # caffeine
    "NCC(=O)O",  # glycine
    "OC[C@H]1O[C@@](CO)(O[C@H]2O[C@H](CO)[C@@H](O)[C@H](O)[C@H]2O)[C@@H](O)[C@@H]1O",  # sucrose
    "C" * 40,  # tetracontane
    "OC(=O)C1=CN(C2CC2)c2cc(N3CCNCC3)c(F)cc2C1=O",  # ciprofloxacin
    "C[N+](C)(C)C",  # tetramethylammonium
    "CC(=O)[O-]",  # acetate
)

# Names in code that build a structure or molecule from a substance: they read which species it has.
_BUILDERS = ("bulk", "molecule", "Atoms", "Structure", "Molecule", "from_spacegroup", "crystal", "surface", "fcc111", "from_sites")


@cache
def _molecule_tools() -> SimpleNamespace:
    """RDKit's descriptor modules (loaded on first use: they are slow to import)."""
    from rdkit.Chem import Crippen, Descriptors, Lipinski, rdMolDescriptors

    return SimpleNamespace(crippen=Crippen, descriptors=Descriptors, lipinski=Lipinski, rd=rdMolDescriptors)


def _on_molecule(read: Callable[[SimpleNamespace, Any], Any]) -> Callable[[str], Any]:
    def value(smiles: str) -> Any:
        mol = molecule(smiles)
        if mol is None:
            return None
        found = read(_molecule_tools(), mol)
        return round(found, 2) if isinstance(found, float) else found

    return value


# kind → property → (names in code that read it, its value for a probe value)
_MOLECULE_PROPERTIES: dict[str, tuple[tuple[str, ...], Callable[[str], Any]]] = {
    "aromatic rings": (("CalcNumAromaticRings", "NumAromaticRings"), _on_molecule(lambda t, m: t.rd.CalcNumAromaticRings(m))),
    "rings": (("CalcNumRings", "RingCount", "NumRings", "GetRingInfo"), _on_molecule(lambda t, m: t.rd.CalcNumRings(m))),
    "weight": (("MolWt", "ExactMolWt", "CalcExactMolWt", "HeavyAtomMolWt"), _on_molecule(lambda t, m: t.descriptors.MolWt(m))),
    "heavy atoms": (
        ("GetNumAtoms", "GetNumHeavyAtoms", "HeavyAtomCount", "CalcNumHeavyAtoms", "GetAtoms"),
        _on_molecule(lambda t, m: m.GetNumHeavyAtoms()),
    ),
    "H-bond donors": (("NumHDonors", "CalcNumHBD", "CalcNumLipinskiHBD", "NHOHCount"), _on_molecule(lambda t, m: t.lipinski.NumHDonors(m))),
    "H-bond acceptors": (
        ("NumHAcceptors", "CalcNumHBA", "CalcNumLipinskiHBA", "NOCount"),
        _on_molecule(lambda t, m: t.lipinski.NumHAcceptors(m)),
    ),
    "logP": (("MolLogP", "CalcCrippenDescriptors"), _on_molecule(lambda t, m: t.crippen.MolLogP(m))),
    "TPSA": (("TPSA", "CalcTPSA"), _on_molecule(lambda t, m: t.rd.CalcTPSA(m))),
    "rotatable bonds": (("NumRotatableBonds", "CalcNumRotatableBonds"), _on_molecule(lambda t, m: t.rd.CalcNumRotatableBonds(m))),
    "heteroatoms": (("CalcNumHeteroatoms", "NumHeteroatoms"), _on_molecule(lambda t, m: t.rd.CalcNumHeteroatoms(m))),
    "charge": (("GetFormalCharge",), _on_molecule(lambda t, m: sum(a.GetFormalCharge() for a in m.GetAtoms()))),
    "formula": (("CalcMolFormula",), _on_molecule(lambda t, m: t.rd.CalcMolFormula(m))),
    "structure": (("MolToSmiles", "MolToInchi", "MolToInchiKey", "MolToMolBlock"), canonical_smiles),
}


def _composition(formula: str) -> Any:
    from pymatgen.core import Composition

    try:
        return Composition(formula)
    except (ValueError, KeyError):
        return None


@cache
def _oxidation_states(formula: str) -> tuple[tuple[str, float], ...] | None:
    """pymatgen's most likely oxidation states of a formula's elements, or None when it finds none."""
    composition = _composition(formula)
    guesses = composition.oxi_state_guesses() if composition is not None else ()
    return tuple(sorted((el, round(float(state), 2)) for el, state in guesses[0].items())) if guesses else None


def _on_composition(read: Callable[[Any], Any]) -> Callable[[str], Any]:
    def value(formula: str) -> Any:
        composition = _composition(formula)
        return None if composition is None else read(composition)

    return value


_FORMULA_PROPERTIES: dict[str, tuple[tuple[str, ...], Callable[[str], Any]]] = {
    "species": (_BUILDERS, lambda f: frozenset(formula_elements(f))),
    "composition": (
        ("reduced_formula", "reduced_composition", "hill_formula", "alphabetical_formula", "to_reduced_dict", "iupac_formula"),
        _on_composition(lambda c: c.reduced_formula),
    ),
    "weight": (("weight", "molar_mass", "get_wt_fraction", "density"), _on_composition(lambda c: round(float(c.weight), 3))),
    "atom count": (("num_atoms", "natoms", "get_number_of_atoms"), _on_composition(lambda c: c.num_atoms)),
    "element count": (("elements", "chemical_system", "chemsys"), lambda f: len(formula_elements(f))),
    "fractions": (
        ("get_atomic_fraction", "fractional_composition", "get_wt_fraction", "element_composition"),
        _on_composition(lambda c: tuple(sorted(round(c.get_atomic_fraction(el), 4) for el in c.elements))),
    ),
    "oxidation states": (
        ("oxi_state_guesses", "add_charges_from_oxi_state_guesses", "oxi_prob", "add_oxidation_state_by_guess", "BVAnalyzer"),
        _oxidation_states,
    ),
    "charge balance": (("smact_validity", "pauling_test", "neutral_ratios", "charge_balanced"), lambda f: _oxidation_states(f) is not None),
}


def _on_element(read: Callable[[Any], Any]) -> Callable[[str], Any]:
    def value(symbol: str) -> Any:
        from pymatgen.core import Element

        found = read(Element(symbol))
        return round(float(found), 3) if isinstance(found, float) else found

    return value


_ELEMENT_PROPERTIES: dict[str, tuple[tuple[str, ...], Callable[[str], Any]]] = {
    "species": (_BUILDERS, lambda s: s),
    "atomic number": (("Z", "number", "numbers", "atomic_numbers", "get_atomic_numbers"), _on_element(lambda e: e.Z)),
    "mass": (("atomic_mass", "get_masses", "masses", "mass", "atomic_masses"), _on_element(lambda e: float(e.atomic_mass))),
    "electronegativity": (("X", "electronegativity", "average_electroneg"), _on_element(lambda e: e.X)),
    "group": (("group", "block"), _on_element(lambda e: e.group)),
    "row": (("row", "period"), _on_element(lambda e: e.row)),
    "oxidation states": (
        ("common_oxidation_states", "oxidation_states", "icsd_oxidation_states", "max_oxidation_state", "min_oxidation_state"),
        _on_element(lambda e: tuple(e.common_oxidation_states)),
    ),
    "radius": (("atomic_radius", "average_ionic_radius", "ionic_radii"), _on_element(lambda e: float(e.atomic_radius or 0))),
}

_PROPERTIES = {"smiles": _MOLECULE_PROPERTIES, "formula": _FORMULA_PROPERTIES, "element": _ELEMENT_PROPERTIES}


def code_names(script: str) -> set[str]:
    """The names a script calls, imports and reads attributes by (``Chem.MolFromSmiles(s).GetNumAtoms()`` → both)."""
    try:
        tree = ast.parse(script)
    except SyntaxError:
        return set()
    names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    names |= {a.asname or a.name.split(".")[-1] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    return names


def code_reads(script: str, formula: str) -> bool:
    """Whether ``script`` could read the substance ``formula`` at all: one of its elements written in a string of the code
    (``'Cu'``, ``'Fe2O3'``, a CIF) or its atomic number as an integer; True when the script cannot be parsed.

    >>> code_reads("from pymatgen.core import Lattice\\nprint(Lattice.hexagonal(3.209, 5.211).volume)", "Mg")
    False
    >>> code_reads("from ase.build import bulk\\nprint(bulk('Cu', 'fcc'))", "Cu"), code_reads("Atoms(numbers=[12])", "Mg")
    (True, True)
    """
    try:
        tree = ast.parse(script)
        elements = formula_elements(formula)
    except (SyntaxError, ValueError):
        return True
    constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    symbols = {m for c in constants if isinstance(c, str) for m in re.findall(r"[A-Z][a-z]?", c)}
    numbers = {c for c in constants if isinstance(c, int) and not isinstance(c, bool)}
    return any(e in symbols or _atomic_number(e) in numbers for e in elements)


def _atomic_number(symbol: str) -> int | None:
    from pymatgen.core import Element

    try:
        return int(Element(symbol).Z)
    except ValueError:
        return None


def read_properties(kind: str, names: Iterable[str]) -> list[str]:
    """The properties of a ``kind`` value that code with these ``names`` reads; all of them when it reads none known."""
    table = _PROPERTIES.get(kind, {})
    used = set(names)
    found = [prop for prop, (readers, _) in table.items() if used & set(readers)]
    return found or list(table)


@cache
def _property(kind: str, prop: str, value: Any) -> Any:
    """``prop`` of a ``kind`` value, or None when it cannot be computed."""
    try:
        return _PROPERTIES[kind][prop][1](value)
    except Exception:  # noqa: BLE001 - a value the library refuses has no such property
        return None


def _differs(kind: str, prop: str, value: Any, default: Any) -> bool:
    """Whether ``value`` differs from ``default`` in ``prop`` (a property that cannot be computed never counts)."""
    mine, theirs = _property(kind, prop, value), _property(kind, prop, default)
    if mine is None:
        return False
    if kind == "formula" and prop == "oxidation states":  # the states of the elements both have
        if theirs is None:
            return True
        shared = dict(theirs).keys() & dict(mine).keys()
        return any(dict(mine)[el] != dict(theirs)[el] for el in shared)
    return bool(mine != theirs)


def _formula_variants(formula: str) -> list[str]:
    """Another element in the first or last place, or one more of the last element."""
    elements = formula_elements(formula)
    found = []
    for old in (elements[0], elements[-1]):
        for new in element_neighbours(old)[:2]:
            if new not in elements:
                found.append(re.sub(rf"{old}(?![a-z])", new, formula, count=1))
    last = re.search(r"([A-Z][a-z]?)(\d*)$", formula)
    if last:
        found.insert(1, formula[: last.start(2)] + str(int(last.group(2) or 1) + 1))
    return list(dict.fromkeys(f for f in found if f != formula))


# Structure types to try in place of one: others of as many elements that ase's bulk builds the same way.
_OTHER_STRUCTURES = {
    "fcc": ("bcc", "sc"), "bcc": ("fcc", "sc"), "sc": ("fcc", "bcc"), "hcp": ("fcc", "bcc"), "bct": ("fcc", "hcp"),
    "diamond": ("fcc", "bcc"), "rhombohedral": ("fcc", "bcc"), "rocksalt": ("zincblende", "cesiumchloride"),
    "zincblende": ("rocksalt", "cesiumchloride"), "cesiumchloride": ("rocksalt", "zincblende"), "wurtzite": ("zincblende", "rocksalt"),
    "fluorite": ("rocksalt", "zincblende"),
}  # fmt: skip


def perturbed(kind: str, value: Any) -> list[Any]:
    """A few other valid values of the same kind next to ``value``, to try in turn.

    >>> perturbed("number", 0.01)[:2], perturbed("element", "Cu")[:2], perturbed("formula", "NaCl")[:3]
    ([0.011, 0.02], ['Ag', 'Zn'], ['KCl', 'NaCl2', 'LiCl'])
    """
    if kind == "integer" and isinstance(value, int):
        return [value + 1, value + 2, max(value - 1, 1)]
    if kind == "number" and isinstance(value, (int, float)):
        return [round(value * 1.1, 12), round(value * 2, 12), round(value * 0.5, 12)] if value else [0.1, 1.0, -0.1]
    if kind == "element" and isinstance(value, str):
        return element_neighbours(value)[:TRIES]
    if kind == "formula" and isinstance(value, str):
        return _formula_variants(value)[:TRIES]
    if kind == "smiles" and isinstance(value, str):
        return [s for s in (value + "C", value + "O", "C" + value) if canonical_smiles(s)][:TRIES]
    if kind == "structure" and isinstance(value, str):
        return [s for s in _OTHER_STRUCTURES.get(value, ("fcc", "bcc")) if s != value][:TRIES]
    if kind == "crystal":  # its elements swapped, and other crystals of its lattice family
        return crystal_probes(value)
    if kind == "entries" and isinstance(value, list):  # each number scaled; the last entry left out
        return [[[f, round(n * 1.1, 12)] for f, n in value], *([value[:-1]] if len(value) > 2 else [])]
    return []


def _stoichiometries(formula: str) -> list[str]:
    """The formula with one element's amount changed (one more, one less, doubled) or left out."""
    parts = re.findall(r"([A-Z][a-z]?)(\d*)", formula)
    found = []
    for i, (_, amount) in enumerate(parts):
        count = int(amount or 1)
        for new in (count + 1, count - 1, 2 * count):
            changed = [(el, str(new) if j == i else a) for j, (el, a) in enumerate(parts) if not (j == i and new == 0)]
            found.append("".join(el + ("" if a in ("", "1") else a) for el, a in changed))
    return [f for f in dict.fromkeys(found) if f and f != formula]


def _candidates(kind: str, value: Any) -> list[Any]:
    """Values of ``kind`` to pick probes from."""
    if kind == "smiles":
        stated = canonical_smiles(value)
        return [s for s in PANEL if canonical_smiles(s) != stated]
    if kind == "formula":
        elements = formula_elements(value)
        others = [(old, new) for old in elements for new in element_neighbours(old)[:4] if new not in elements]
        swapped = [re.sub(rf"{old}(?![a-z])", new, value, count=1) for old, new in others]
        return list(dict.fromkeys([*_stoichiometries(value), *swapped]))
    if kind == "element":
        return element_neighbours(value)
    return []


def _sort_key(found: Any) -> Any:
    return (0, found) if isinstance(found, (int, float)) else (1, str(found))


def probe_values(kind: str, value: Any, names: Iterable[str]) -> list[Any]:
    """Values to try instead of ``value``: a few next to it, and for each property the code reads, the lowest and highest others.

    Numbers get only the ones next to them (the code reads the number itself).
    """
    near = perturbed(kind, value)
    if kind not in _PROPERTIES or not isinstance(value, str):
        return near
    candidates = _candidates(kind, value)
    picked = [c for prop in read_properties(kind, names) for c in _extremes(kind, prop, value, candidates)]
    return list(dict.fromkeys([*near, *picked]))


def _extremes(kind: str, prop: str, value: Any, candidates: list[Any]) -> list[Any]:
    """The candidates with the lowest and the highest ``prop`` of those that differ from ``value`` in it."""
    differing = [c for c in candidates if _differs(kind, prop, c, value)]
    differing.sort(key=lambda c: _sort_key(_property(kind, prop, c)))
    return differing if len(differing) <= PER_PROPERTY else [differing[0], differing[-1]]


def shown_independent(kind: str, value: Any, tried: list[Any], names: Iterable[str]) -> bool:
    """Whether ``tried`` (other values whose answers all equalled ``value``'s) prove the answer independent of ``value``.

    For every property the code reads, at least ``MIN_WITNESSES`` of them must differ from ``value`` in it.
    """
    if kind not in _PROPERTIES:
        return len(tried) >= MIN_WITNESSES
    return all(sum(_differs(kind, prop, t, value) for t in tried) >= MIN_WITNESSES for prop in read_properties(kind, names))
