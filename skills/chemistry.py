"""Chemical values recognised and compared offline: element symbols, formulas, SMILES and names.

Names go through the ``chemicals`` package's offline name database (the ChEDL/PubChem synonyms
it ships) and pymatgen's element names; formulas compare as compositions (``ClNa`` is ``NaCl``);
SMILES compare in RDKit's canonical form.

>>> resolve_name("nitrogen molecule").formula, resolve_name("copper").element
('N2', 'Cu')
>>> same_formula("ClNa", "NaCl"), formula_elements("NaCl"), is_formula("Fm-3m")
(True, ['Na', 'Cl'], False)
>>> canonical_smiles("C(O)C") == canonical_smiles("CCO"), canonical_smiles("not a smiles")
(True, None)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from pymatgen.core import Composition, Element

__all__ = ["element_names", 
    "NamedChemical", "is_element", "is_formula", "same_formula", "formula_elements",
    "homonuclear", "formula_text", "molecule", "canonical_smiles",
    "resolve_name", "element_symbol", "formula_counts", "element_neighbours", "WORD_LIKE_SYMBOLS", "flat_smiles", "smiles_formula",
    "ring_chain_tautomers", "prototype_table", "mineral_formulas",
]  # fmt: skip

_FORMULA = re.compile(r"(?:[A-Z][a-z]?\d*|\((?:[A-Z][a-z]?\d*)+\)\d+)+")  # a bracketed group takes a count: Ca3(PO4)2, Mg(OH)2
WORD_LIKE_SYMBOLS = frozenset({"I", "In", "As", "At", "Be", "He", "No", "Am", "Bi", "Ho", "Es"})
"""Capitalised English words that are also element symbols: read as words unless written mid-sentence ("Ga and As")."""


@dataclass(frozen=True)
class NamedChemical:
    """What a name stands for: a formula, and where known a SMILES and a single element."""

    formula: str
    smiles: str | None = None
    element: str | None = None
    name: str | None = None  # the database's common name ("acetaminophen" for "paracetamol")


def is_element(text: str) -> bool:
    return text not in WORD_LIKE_SYMBOLS and Element.is_valid_symbol(text)


def is_formula(text: str) -> bool:
    """A written formula such as ``N2``, ``NaCl``, ``CsPbI3``, ``Ca3(PO4)2`` or ``Cu`` (not ``FCC``, ``CIF``, ``In`` or a SMILES
    branch such as ``C(C)O``)."""
    if not _FORMULA.fullmatch(text) or text in WORD_LIKE_SYMBOLS:
        return False
    if len(text) >= 3 and text.isupper() and not any(c.isdigit() for c in text):
        return False  # acronyms: FCC, BCC, HCP, CIF, SCF, VASP
    if not any(c.isdigit() for c in text) and len(set(symbols := re.findall(r"[A-Z][a-z]?", text))) == 1 < len(symbols):
        return False  # "NN", "OO": one symbol written twice is an abbreviation (nearest neighbour), never a formula (N2)
    return all(Element.is_valid_symbol(s) for s in re.findall(r"[A-Z][a-z]?", text))


def same_formula(a: str, b: str) -> bool:
    """Whether two formulas have the same composition (amounts included: ``H2O`` is not ``H4O2``)."""
    try:
        return Composition(a).almost_equals(Composition(b), rtol=0.0, atol=1e-8)
    except (ValueError, KeyError):
        return False


def formula_elements(formula: str) -> list[str]:
    """Element symbols of a written formula, in the order written, each once."""
    return list(dict.fromkeys(re.findall(r"[A-Z][a-z]?", formula)))


def formula_counts(formula: str) -> dict[str, float] | None:
    """How many atoms of each element a formula has (``"N2"`` → N 2), or None when pymatgen cannot read it."""
    from pymatgen.core import Composition

    try:
        return {str(element): float(amount) for element, amount in Composition(formula).items()}
    except (ValueError, KeyError):
        return None


def formula_text(formula: str) -> str:
    """A formula as a scientist writes it: Hill order for carbon compounds, else electropositive element first."""
    composition = Composition(formula)
    if Element("C") in composition:
        return composition.hill_formula.replace(" ", "")
    return "".join(f"{el.symbol}{'' if amount == 1 else int(amount)}" for el, amount in sorted(composition.items(), key=lambda kv: kv[0].X))


@cache
def _rdkit():  # noqa: ANN202 - rdkit's Chem module, loaded on first use (it is slow to import)
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]  # defined in RDKit's C extension, absent from its stubs
    return Chem


def molecule(text: str) -> Any:
    """RDKit's molecule of a SMILES, or None when it is not one RDKit can parse (or has no atom)."""
    if not text or any(c.isspace() for c in text):
        return None
    mol = _rdkit().MolFromSmiles(text)
    return mol if mol is not None and mol.GetNumAtoms() else None


@cache
def canonical_smiles(text: str) -> str | None:
    """RDKit's canonical SMILES of ``text``, or None when it is not a SMILES RDKit can parse."""
    mol = molecule(text)
    return _rdkit().MolToSmiles(mol) if mol is not None else None


@cache
def flat_smiles(text: str) -> str | None:
    """RDKit's canonical SMILES of ``text`` without stereochemistry: the molecule's connectivity, to compare."""
    mol = molecule(text)
    if mol is None:
        return None
    _rdkit().RemoveStereochemistry(mol)
    return str(_rdkit().MolToSmiles(mol))


def ring_chain_tautomers(chain: str, ring: str) -> bool:
    """Whether ``ring`` is the cyclic hemiacetal (or hemiketal) of ``chain``: opening one of its rings at the carbon that bears
    both the ring oxygen and an OH (that OH becoming the C=O, the ring oxygen an OH) gives ``chain``, as glucopyranose opens to
    glucose. Other isomers with one more ring (fructopyranose for glucose, an epoxide for a ketone, inositol) are not.

    >>> glucose = "O=C[C@H](O)[C@@H](O)[C@H](O)[C@H](O)CO"
    >>> [ring_chain_tautomers(glucose, s) for s in ("OCC1OC(O)C(O)C(O)C1O", "OCC1(O)OCC(O)C(O)C1O", "OC1C(O)C(O)C(O)C(O)C1O")]
    [True, False, False]
    >>> ring_chain_tautomers("CC(C)=O", "CC1CO1"), ring_chain_tautomers("CCO", "COC")
    (False, False)
    """
    chem = _rdkit()
    opened, cyclic = molecule(chain), molecule(ring)
    if opened is None or cyclic is None or smiles_formula(chain) != smiles_formula(ring):
        return False
    target = flat_smiles(chain)
    hemiacetal = chem.MolFromSmarts("[CX4;R:1](-[OX2;R:2])-[OX2H1;!R:3]")
    for carbon, ring_oxygen, hydroxyl in cyclic.GetSubstructMatches(hemiacetal):
        edit = chem.RWMol(chem.AddHs(cyclic))  # hydrogens come after the heavy atoms: removing one keeps their indices
        edit.RemoveAtom(next(n.GetIdx() for n in edit.GetAtomWithIdx(hydroxyl).GetNeighbors() if n.GetAtomicNum() == 1))
        edit.RemoveBond(carbon, ring_oxygen)
        edit.GetBondBetweenAtoms(carbon, hydroxyl).SetBondType(chem.BondType.DOUBLE)
        edit.GetAtomWithIdx(ring_oxygen).SetNoImplicit(False)
        try:
            mol = edit.GetMol()
            mol.UpdatePropertyCache(strict=False)
            mol = chem.RemoveHs(mol, sanitize=True)
        except Exception:  # noqa: BLE001 - an opening RDKit cannot sanitise is no tautomer
            continue
        chem.RemoveStereochemistry(mol)
        if chem.MolToSmiles(mol) == target:
            return True
    return False


@cache
def smiles_formula(text: str) -> str | None:
    """The molecular formula of a SMILES (``CCO`` → ``C2H6O``), or None when RDKit cannot read it."""
    mol = molecule(text)
    if mol is None:
        return None
    from rdkit.Chem.rdMolDescriptors import CalcMolFormula

    return formula_text(re.sub(r"[+-]\d*$", "", CalcMolFormula(mol)))


@cache
def _element_names() -> dict[str, str]:
    names = {el.long_name.lower(): el.symbol for el in Element}
    names.update({"aluminium": "Al", "caesium": "Cs", "sulphur": "S"})
    return names


def element_names(symbol: str) -> set[str]:
    """The English names of an element (lowercase, British and American): Al → {"aluminum", "aluminium"}."""
    return {name for name, found in _element_names().items() if found == symbol}


def element_symbol(name: str) -> str | None:
    """The symbol of an element named in English ("lithium" → Li, "aluminium" → Al), or None."""
    return _element_names().get(name.lower())


# Ceramic oxides' names ("-a" for the oxide) that the name database lacks; it has hafnia, thoria, calcia, chromia, ...
_OXIDE_NAMES = {"alumina": "Al2O3", "yttria": "Y2O3", "gallia": "Ga2O3", "vanadia": "V2O5"}


@cache
def resolve_name(phrase: str) -> NamedChemical | None:
    """The chemical a name stands for (``"sodium chloride"``, ``"copper"``, ``"aspirin"``, ``"alumina"``), or None."""
    phrase = " ".join(phrase.lower().split())
    if phrase in _OXIDE_NAMES:
        return NamedChemical(formula=_OXIDE_NAMES[phrase], name=phrase)
    element = _element_names().get(phrase)
    try:
        from chemicals.identifiers import search_chemical

        found = search_chemical(phrase)
    except ValueError:  # not in the database
        found = None
    mineral = mineral_formulas().get(phrase, frozenset()) if found is not None and not element else frozenset()
    if len(mineral) == 1:  # "chalcopyrite", "ilmenite": the mineral, not the hydrate the name database lists under its name
        return NamedChemical(formula=next(iter(mineral)), name=phrase)
    if found is None:
        return NamedChemical(formula=element, element=element) if element else None
    written = re.search(r"\(([A-Z][A-Za-z0-9]*)\)\s*$", found.common_name or "")  # "magnetite (Fe3O4)": not its FeO entry
    try:
        formula = formula_text(found.formula)
        if written and not element and not same_formula(written.group(1), formula):
            return NamedChemical(formula=formula_text(written.group(1)), name=found.common_name)
    except (ValueError, KeyError):  # ions and formulas pymatgen does not read ("O-2")
        return NamedChemical(formula=element, element=element) if element else None
    smiles = canonical_smiles(found.smiles) if found.smiles else None
    if smiles and re.match(r"\d", phrase) and not _STEREO_SAID.search(phrase):  # "2-butene": which isomer, the name does not say
        smiles = flat_smiles(smiles)
    return NamedChemical(formula=formula, smiles=smiles, element=element, name=found.common_name)


_STEREO_SAID = re.compile(r"\b(?:cis|trans|e|z|r|s|rs|meso|endo|exo)\b|\(\s*[\d,]*[ezrs]\b|[+\-]\)")


_NOT_MINERALS = frozenset("alpha beta gamma delta high low red black white theoretical cubic hexagonal orthorhombic tetragonal".split())
"""Words of the prototype library's labels that name no mineral ("alpha", "High Pressure …")."""


@cache
def prototype_table() -> dict[str, tuple[frozenset[str], frozenset[int]]]:
    """Each one-word mineral or prototype name (lowercase) of pymatgen's AFLOW prototype library (``aflow_prototypes.json.gz``):
    the formulas of its prototype structures and their space-group numbers."""
    import gzip
    import json
    from collections import Counter
    from importlib.util import find_spec
    from pathlib import Path

    spec = find_spec("pymatgen.analysis.prototypes")
    path = Path(spec.origin).with_name("aflow_prototypes.json.gz") if spec is not None and spec.origin else None
    if path is None or not path.exists():
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
            if re.fullmatch(r"[a-z]{4,}", word) and word not in _NOT_MINERALS:
                formulas.setdefault(word, set()).add(formula)
                if len(label) > 2 and label[2].isdigit():
                    groups.setdefault(word, set()).add(int(label[2]))
    return {word: (frozenset(found), frozenset(groups.get(word, ()))) for word, found in formulas.items()}


def mineral_formulas() -> dict[str, frozenset[str]]:
    """The formulas of each one-word mineral or prototype name of the prototype library (``prototype_table``)."""
    return {word: formulas for word, (formulas, _) in prototype_table().items()}


_COUNTS = {"di": 2, "tri": 3, "tetra": 4}


def homonuclear(phrase: str) -> str | None:
    """The formula of a molecule of one element named by its count ("dinitrogen" → N2, "trioxygen" → O3), or None."""
    for prefix, count in _COUNTS.items():
        if phrase.startswith(prefix) and (symbol := _element_names().get(phrase[len(prefix) :])):
            return f"{symbol}{count}"
    return None


def element_neighbours(symbol: str) -> list[str]:
    """Elements next to ``symbol`` in its group, then in its period (to try another valid value)."""
    el = Element(symbol)
    near = [Element.from_row_and_group(el.row + d, el.group) for d in (1, -1) if _exists(el.row + d, el.group)]
    near += [Element.from_row_and_group(el.row, el.group + d) for d in (1, -1, 2, -2) if _exists(el.row, el.group + d)]
    return [e.symbol for e in near if e.symbol != symbol]


def _exists(row: int, group: int) -> bool:
    try:
        Element.from_row_and_group(row, group)
        return True
    except ValueError:
        return False
