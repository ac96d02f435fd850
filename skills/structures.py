"""Crystal structure types as a question names them ("body-centred tetragonal", "zinc-blende") and as ASE builds them.

>>> [(m.name, m.text) for m in structure_mentions("GaAs in the zinc-blende structure, not rock salt")]
[('zincblende', 'zinc-blende'), ('rocksalt', 'rock salt')]
>>> structures("hcp magnesium with a = 3.21 Å")
{'hcp'}
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["STRUCTURES", "GROUPS", "BUILT", "stated_groups", "crystal_family", "StructureMention", "structure_mentions", "structures", "unknown_structure", "reference_structure"]

STRUCTURES = {
    "fcc": r"fcc|f\.c\.c\.?|face[- ]cent(?:er|re)d[- ]cubic|cubic close[- ]packed|ccp|(?-i:A1)|copper[- ]type|(?-i:Cu)[- ]type",
    "bcc": r"bcc|b\.c\.c\.?|body[- ]cent(?:er|re)d[- ]cubic|(?-i:A2)|tungsten[- ]type|(?-i:W)[- ]type|(?:α|alpha)[- ](?:fe|iron)(?:[- ]type)?",
    "bct": r"bct|body[- ]cent(?:er|re)d[- ]tetragonal",
    "hcp": r"hcp|h\.c\.p\.?|hexagonal close[- ]packed|(?-i:A3)|magnesium[- ]type|(?-i:Mg)[- ]type",
    "sc": r"simple[- ]cubic|primitive[- ]cubic",
    "diamond": r"diamond(?:[- ]cubic)?(?:[- ](?:structure|lattice))?|(?-i:A4)",
    "rocksalt": r"rock[- ]?salt|halite|nacl[- ]type|b1",
    "zincblende": r"zinc[- ]?blende|sphalerite|b3",
    "wurtzite": r"wurtzite|b4",
    "cesiumchloride": r"c(?:ae|e)sium[- ]?chloride[- ]type|cesiumchloride|cscl[- ]type|b2",
    "fluorite": r"fluorite|caf2[- ]type|c1",
    "rhombohedral": r"rhombohedral",
    "perovskite": r"perovskite",
    "rutile": r"rutile",
    "spinel": r"spinel",
    "olivine": r"olivine",
}
"""Each structure type, by the name ASE's ``bulk`` builds it with where it builds it, and the ways a question writes it."""

GROUPS = {
    "fcc": 225, "bcc": 229, "bct": 139, "hcp": 194, "sc": 221, "diamond": 227, "rocksalt": 225, "zincblende": 216, "wurtzite": 186,
    "cesiumchloride": 221, "fluorite": 225, "perovskite": 221, "rutile": 136, "spinel": 227,
}  # fmt: skip
"""The space-group number each structure type is built in (its ideal, cubic form for the perovskites)."""

BUILT = frozenset({"fcc", "bcc", "bct", "hcp", "sc", "diamond", "rocksalt", "zincblende", "wurtzite", "cesiumchloride", "fluorite", "rhombohedral"})
"""The structure types ``ase.build.bulk`` builds (its ``crystalstructure``)."""

_PATTERN = re.compile("|".join(rf"(?P<{name}>{pattern})" for name, pattern in STRUCTURES.items()), re.IGNORECASE)


@dataclass(frozen=True)
class StructureMention:
    """A structure type named in a text: its name (``zincblende``) and the words as written."""

    name: str
    text: str
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def structure_mentions(text: str) -> list[StructureMention]:
    """Every structure type ``text`` names, in order."""
    found = []
    for match in _PATTERN.finditer(text):
        before, after = text[match.start() - 1 : match.start()], text[match.end() : match.end() + 1]
        if (before and (before.isalnum() or before in "-_")) or (after and (after.isalnum() or after == "_")):
            continue  # a word that only contains one ("b1" of "sb1", "fcc111")
        if re.fullmatch(r"[A-Za-z]\d", match.group()) and (before in "=#)]@/\\" and before or after in "=#([@/\\" and after):
            continue  # a SMILES ring bond ("C1=CC=CC=C1"), not a Strukturbericht symbol
        name = next(key for key, value in match.groupdict().items() if value is not None)
        found.append(StructureMention(name, match.group(), match.start()))
    return found


def structures(text: str) -> set[str]:
    """The structure types ``text`` names."""
    return {m.name for m in structure_mentions(text)}


_NAMED_TYPE = re.compile(
    r"([\w.-]+)[- ]type\b"  # "Cr3Si-type", "tungsten-type"
    r"|\b((?-i:[A-L]\d{1,2})(?:_\w+)?)\s+(?:structure|phase)\b"  # Strukturbericht: "the A15 structure"
    r"|\b((?:α|β|γ|alpha|beta|gamma)[- ]?\w*)\s+(?:structure|phase)\b",  # "the α-Fe structure", "the beta phase"
    re.IGNORECASE,
)
_ORDINARY = frozenset("the a an same this its crystal crystalline cubic bulk unit their that which given relaxed ideal conventional primitive n p".split())


def unknown_structure(text: str) -> str | None:
    """A structure the text names in a way the table does not know ("the A15 structure", "the Cr3Si-type"), or None."""
    known = structure_mentions(text)
    for match in _NAMED_TYPE.finditer(text):
        word = match.group(1) or match.group(2) or match.group(3)
        if word.lower() in _ORDINARY or any(m.start <= match.start() < m.end or match.start() <= m.start < match.end() for m in known):
            continue
        return match.group().strip()
    return None


def stated_groups(text: str) -> set[int]:
    """The space-group numbers ``text`` states, by Hermann–Mauguin symbol ("Fm-3m", "P6_3/mmc") or by structure type.

    >>> sorted(stated_groups("bcc iron, Structure.from_spacegroup('Im-3m', ...), or P6_3/mmc"))
    [194, 229]
    """
    from pymatgen.symmetry.groups import SpaceGroup

    from skills.mentions import group_symbol_spans

    found = {GROUPS[name] for name in structures(text) if name in GROUPS}
    return found | {int(SpaceGroup(text[start:end]).int_number) for start, end in group_symbol_spans(text)}


def crystal_family(group: int) -> str:
    """The crystal family of a space group by its number (the trigonal groups are hexagonal: their lattices are).

    >>> crystal_family(186), crystal_family(225), crystal_family(136), crystal_family(167)
    ('hexagonal', 'cubic', 'tetragonal', 'hexagonal')
    """
    for last, family in ((2, "triclinic"), (15, "monoclinic"), (74, "orthorhombic"), (142, "tetragonal"), (194, "hexagonal")):
        if group <= last:
            return family
    return "cubic"


def reference_structure(substance: str) -> str | None:
    """The crystal structure of an element in its reference state (ASE's ``reference_states``: Al fcc, W bcc), else None."""
    from ase.data import atomic_numbers, reference_states

    number = atomic_numbers.get(substance)
    state = reference_states[number] if number is not None else None
    return str(state["symmetry"]) if state else None
