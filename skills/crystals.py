"""A crystal stated as pymatgen's ``Structure.from_spacegroup`` takes it: a space group and the species and fractional
coordinates of its sites. Read from a question (written as code or in prose) and from a script's literal call, and
checked as the value of a skill's ``crystal`` parameter (``skills/lifting.py`` lifts it, ``skills/binding.py`` binds it).

A question that states all three states the crystal whole: a skill built on ``from_spacegroup`` computes for it what
it computed for the verified one, with the lattice constants the question gives.

>>> stated = stated_crystal("Fluorite (CaF2), Fm-3m, a = 5.463 Å, Ca at (0, 0, 0) and F at (1/4, 1/4, 1/4): sites?")
>>> stated.value
{'space_group': 'Fm-3m', 'species': ['Ca', 'F'], 'coords': [[0.0, 0.0, 0.0], [0.25, 0.25, 0.25]]}
>>> stated_crystal("Rutile: Structure.from_spacegroup('P4_2/mnm', Lattice.tetragonal(4.594, 2.959), ['Ti','O'], "
...                "[[0,0,0],[0.305,0.305,0]]) -> formula?").lattice
[4.594, 2.959]
>>> crystal_problem({"space_group": "Fm-3m", "species": ["Na", "Xx"], "coords": [[0, 0, 0], [0.5, 0.5, 0.5]]})
"'Xx' is not an element symbol"
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from skills.chemistry import element_neighbours, element_symbol
from skills.mentions import group_symbol_spans

__all__ = [
    "CRYSTAL_KEYS", "LATTICE_HELPER", "ScriptCrystal", "StatedCrystal", "crystal_problem", "crystal_probes", "group_number",
    "RHOMBOHEDRAL", "TWO_ORIGINS", "built", "is_symbol", "lattice_family", "lattice_lengths", "lattice_problem", "script_crystal",
    "site_statements", "stated_crystal",
]  # fmt: skip

CRYSTAL_KEYS = ("space_group", "species", "coords")
"""The keys of a crystal value, in ``from_spacegroup``'s order."""

LATTICE_HELPER = '''def _lattice(space_group: str):
    """pymatgen's Lattice constructor of the space group's crystal system: cubic(a), tetragonal(a, c) or hexagonal(a, c)."""
    from pymatgen.core import Lattice
    from pymatgen.symmetry.groups import SYMM_DATA, SpaceGroup

    known = SYMM_DATA["space_group_encoding"].get(SYMM_DATA["abbreviated_spacegroup_symbols"].get(space_group, space_group))
    number = known["int_number"] if known else SpaceGroup(space_group).int_number
    if number >= 195:
        return Lattice.cubic
    if 75 <= number <= 142:
        return Lattice.tetragonal
    if 143 <= number <= 194:
        return Lattice.hexagonal
    raise ValueError(f"space group {space_group} is not cubic, tetragonal, trigonal or hexagonal")
'''
"""The helper a lifted crystal's lattice is built with: the verified call's constructor, chosen by the stated group."""

_LATTICES = {"cubic": 1, "tetragonal": 2, "hexagonal": 2}  # pymatgen's constructors a lifted crystal takes, by their lengths
TWO_ORIGINS = frozenset({48, 50, 59, 68, 70, 85, 86, 88, 125, 126, 129, 130, 133, 134, 137, 138, 141, 142, 201, 203, 222, 224, 227, 228})
"""The space groups with two origin choices: pymatgen reads a symbol in origin choice 1, most tables give choice 2."""
RHOMBOHEDRAL = frozenset({146, 148, 155, 160, 161, 166, 167})
"""The R groups: pymatgen reads their coordinates in hexagonal axes, many tables give rhombohedral ones."""
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


@cache
def group_number(symbol: str) -> int | None:
    """The international number of a space group's Hermann–Mauguin symbol, or None when pymatgen knows no such group."""
    from pymatgen.symmetry.groups import SYMM_DATA

    known = SYMM_DATA["space_group_encoding"].get(SYMM_DATA["abbreviated_spacegroup_symbols"].get(symbol, symbol))
    if known:
        return int(known["int_number"])
    try:
        from pymatgen.symmetry.groups import SpaceGroup

        return int(SpaceGroup(symbol).int_number)
    except (ValueError, KeyError):
        return None


def lattice_family(number: int) -> str | None:
    """The pymatgen lattice constructor a group of this number takes (the trigonal groups in hexagonal axes), or None."""
    if number >= 195:
        return "cubic"
    if 75 <= number <= 142:
        return "tetragonal"
    if 143 <= number <= 194:
        return "hexagonal"
    return None


def _number(node: ast.expr) -> float | None:
    """The value of a literal number or of arithmetic on literal numbers (``1 / 3``, ``-0.25``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _number(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _number(node.left), _number(node.right)
        if left is None or right is None or (isinstance(node.op, ast.Div) and right == 0):
            return None
        return float(_OPS[type(node.op)](left, right))
    return None


def _coords(node: ast.expr) -> list[list[float]] | None:
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return None
    rows = []
    for row in node.elts:
        if not isinstance(row, (ast.List, ast.Tuple)) or len(row.elts) != 3:
            return None
        values = [_number(x) for x in row.elts]
        if any(v is None for v in values):
            return None
        rows.append([float(v) for v in values if v is not None])
    return rows


def is_symbol(text: str) -> bool:
    """Whether ``text`` is an element's symbol, those that read as words too ("I", "In", "As", "Be")."""
    from pymatgen.core.periodic_table import Element

    return text not in ("D", "T") and Element.is_valid_symbol(text)  # deuterium and tritium: hydrogen's mass, not theirs


def _species(node: ast.expr) -> list[str] | None:
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return None
    found = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str) and is_symbol(e.value)]
    return found if len(found) == len(node.elts) else None


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


@dataclass
class ScriptCrystal:
    """A script's ``from_spacegroup`` call with literal arguments: its value and the nodes that state it."""

    value: dict[str, Any]
    nodes: dict[str, ast.expr]  # space_group, species, coords: the arguments; lattice: the constructor called (Lattice.cubic)
    lattice: str  # cubic, tetragonal or hexagonal
    lengths: list[ast.expr] = field(default_factory=list)  # the constructor's arguments


def _arguments(call: ast.Call) -> dict[str, ast.expr]:
    names = ("sg", "lattice", "species", "coords")
    found = dict(zip(names, call.args, strict=False))
    found.update({k.arg: k.value for k in call.keywords if k.arg in names})
    return found


def _read_call(call: ast.Call) -> ScriptCrystal | None:
    """The crystal a ``from_spacegroup(sg, Lattice.x(...), species, coords)`` call states with literals, or None."""
    if not _dotted(call.func).endswith("from_spacegroup"):
        return None
    args = _arguments(call)
    if len(call.args) > 4 or any(k.arg not in ("sg", "lattice", "species", "coords") for k in call.keywords):
        return None  # coords_are_cartesian=True, tol=…: another crystal than its literals say
    group, lattice = args.get("sg"), args.get("lattice")
    species = _species(args["species"]) if "species" in args else None
    coords = _coords(args["coords"]) if "coords" in args else None
    if not (isinstance(group, ast.Constant) and isinstance(group.value, str) and species and coords and len(species) == len(coords)):
        return None
    if not isinstance(lattice, ast.Call) or lattice.keywords or _dotted(lattice.func).rpartition(".")[2] not in _LATTICES:
        return None
    family = _dotted(lattice.func).rpartition(".")[2]
    if len(lattice.args) != _LATTICES[family] or group_number(group.value) is None:
        return None
    value = {"space_group": group.value, "species": species, "coords": coords}
    nodes = {"space_group": group, "species": args["species"], "coords": args["coords"], "lattice": lattice.func}
    return ScriptCrystal(value=value, nodes=nodes, lattice=family, lengths=list(lattice.args))


def script_crystal(tree: ast.AST) -> ScriptCrystal | None:
    """The one crystal a script builds with ``Structure.from_spacegroup`` and literal arguments, or None (none, or several)."""
    found = [c for node in ast.walk(tree) if isinstance(node, ast.Call) and (c := _read_call(node)) is not None]
    return found[0] if len(found) == 1 else None


@dataclass
class StatedCrystal:
    """A crystal a question states whole, and where: its spans, and the lattice constants of a code call."""

    value: dict[str, Any]
    spans: list[tuple[int, int]]
    lattice: list[float] | None = None  # the lengths of ``Lattice.cubic(5.43)`` in a code call
    family: str | None = None  # the lattice constructor the question's code calls

    @property
    def coded(self) -> bool:
        """Whether the question wrote pymatgen's call itself (its setting is pymatgen's, whatever the group)."""
        return self.lattice is not None


_CALL = re.compile(r"(?:\w+\.)*from_spacegroup\s*\(")
_VULGAR = {"½": 1 / 2, "⅓": 1 / 3, "⅔": 2 / 3, "¼": 1 / 4, "¾": 3 / 4, "⅛": 1 / 8, "⅜": 3 / 8, "⅝": 5 / 8, "⅞": 7 / 8}
_NUMBER = rf"[-−]?(?:\d+(?:\.\d+)?|\.\d+)(?:\s*/\s*\d+)?|[-−]?[{''.join(_VULGAR)}]"
_TRIPLE = rf"(?P<open>[(\[])?\s*(?P<x>{_NUMBER})\s*(?:,\s*|\s+)(?P<y>{_NUMBER})\s*(?:,\s*|\s+)(?P<z>{_NUMBER})\s*(?(open)[)\]])"
_SITE = re.compile(rf"\b(?P<element>[A-Z][a-z]?|[a-z]{{3,}})\b\s*(?:atoms?\s+)?(?:(?:at|on|in)\s+|[:=]\s*)?{_TRIPLE}(?!\d|\.\d)")
_ITEM = r"\s*[^,;()\[\]A-Wa-w]{1,12}?\s*"  # a coordinate as written, read or not: no word in it (x, y and z may be)
_BRACKETED = rf"[(\[]{_ITEM},{_ITEM},{_ITEM}[)\]]"  # three coordinates in brackets
_UNREAD = re.compile(rf"[{''.join(_VULGAR)}⁄−]")  # fractions and minus signs the site reader reads only in a site
_BETWEEN = re.compile(r"[\s,;/]*(?:and\s+)?")


def _closing(text: str, start: int) -> int | None:
    """The index after the parenthesis that closes the one opened just before ``start``."""
    depth = 1
    for index in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return index + 1
    return None


def _code_crystal(text: str) -> StatedCrystal | None:
    for match in _CALL.finditer(text):
        end = _closing(text, match.end())
        if end is None:
            continue
        try:
            call = ast.parse(text[match.start() : end].strip(), mode="eval").body
        except SyntaxError:
            continue
        read = _read_call(call) if isinstance(call, ast.Call) else None
        lengths = [_number(x) for x in read.lengths] if read else []
        if read is not None and all(v is not None for v in lengths):
            return StatedCrystal(read.value, [(match.start(), end)], [float(v) for v in lengths if v is not None], read.lattice)
    return None


def _fraction(text: str) -> float:
    text = text.replace(" ", "").replace("−", "-")
    sign, bare = (-1.0, text[1:]) if text.startswith("-") else (1.0, text)
    if bare in _VULGAR:
        return sign * _VULGAR[bare]
    top, _, bottom = text.partition("/")
    return float(top) / float(bottom) if bottom else float(top)


def _symbol(word: str) -> str | None:
    return word if is_symbol(word) else element_symbol(word) if word.islower() else None


def _prose_sites(text: str) -> tuple[list[str], list[list[float]], tuple[int, int]] | None:
    """The one run of sites ("Ca at (0, 0, 0) and F at (1/4, 1/4, 1/4)") a question lists, or None."""
    runs: list[list[re.Match[str]]] = []
    for match in _SITE.finditer(text):
        if _symbol(match.group("element")) is None:
            continue
        if runs and _BETWEEN.fullmatch(text[runs[-1][-1].end() : match.start()]):
            runs[-1].append(match)
        else:
            runs.append([match])
    if len(runs) != 1:
        return None
    start, end = runs[0][0].start(), runs[0][-1].end()
    outside = text[:start] + " " + text[end:]
    if any(not start <= m.start() < end for m in re.finditer(f"{_TRIPLE}|{_BRACKETED}", text)) or _UNREAD.search(outside) or "⁄" in text:
        return None  # coordinates outside the sites ("I at (1/2, 1/2, 1/2)" unread, "½" elsewhere, a Miller index): not whole
    try:
        coords = [[_fraction(m.group(axis)) for axis in "xyz"] for m in runs[0]]
    except ZeroDivisionError:
        return None
    species = [_symbol(m.group("element")) or "" for m in runs[0]]
    return species, coords, (runs[0][0].start(), runs[0][-1].end())


_PLACE = re.compile(
    r"\b(?P<element>[A-Z][a-z]?|[a-z]{3,})\b\s*(?:atoms?\s+|ions?\s+)?(?:at|on|in)\s+(?:the\s+|a\s+|each\s+)?"
    r"(?P<place>origin|(?:cube\s+|cell\s+)?corners?|body[\s-]+cent(?:re|er)|cube\s+cent(?:re|er))\b",
    re.IGNORECASE,
)
_PLACES = {"origin": [0.0, 0.0, 0.0], "corner": [0.0, 0.0, 0.0], "centre": [0.5, 0.5, 0.5]}


def site_statements(text: str) -> list[tuple[str, list[float], tuple[int, int]]]:
    """Each site ``text`` places an element on ("O at (½, ½, ½)", "Cs at the corner", "Cl at the body centre"): its symbol,
    coordinates and span; empty where one is unread."""
    found = []
    for match in _PLACE.finditer(text):
        symbol = _symbol(match.group("element"))
        place = match.group("place").lower()
        if symbol is not None:
            where = "origin" if place == "origin" else "corner" if "corner" in place else "centre"
            found.append((symbol, _PLACES[where], (match.start("place"), match.end("place"))))
    for match in _SITE.finditer(text):
        symbol = _symbol(match.group("element"))
        if symbol is None:
            continue
        try:
            found.append((symbol, [_fraction(match.group(axis)) for axis in "xyz"], match.span()))
        except ZeroDivisionError:
            return []
    return found


def stated_crystal(text: str) -> StatedCrystal | None:
    """The crystal ``text`` states whole (a ``from_spacegroup`` call, or one space-group symbol and one run of sites), or None."""
    coded = _code_crystal(text)
    if coded is not None:
        return coded
    groups = group_symbol_spans(text)
    symbols = {text[s:e] for s, e in groups}
    sites = _prose_sites(text)
    if len(symbols) != 1 or sites is None:
        return None
    species, coords, span = sites
    symbol = symbols.pop()
    if group_number(symbol) is None:
        return None
    return StatedCrystal({"space_group": symbol, "species": species, "coords": coords}, [*groups, span])


def lattice_lengths(code: str) -> list[str]:
    """The names a lifted crystal's lattice constructor takes in ``code`` (``_lattice(...)(a, c)`` → a, c)."""
    match = re.search(r"_lattice\(\w+\[['\"]space_group['\"]\]\)\(([^()]*)\)", code)
    return [name.strip() for name in match.group(1).split(",") if name.strip()] if match else []


def lattice_problem(value: Any, code: str) -> str | None:
    """Why the lattice a skill's ``code`` builds for a crystal cannot be the stated space group's (a tetragonal group for a
    lattice from ``a`` alone), or None."""
    lengths = lattice_lengths(code)
    if crystal_problem(value) is not None or not lengths:
        return None
    family = lattice_family(group_number(value["space_group"]) or 0) or ""
    if len(lengths) != _LATTICES.get(family):
        return f"space group {value['space_group']} is {family}; this skill builds its lattice from {', '.join(lengths)}"
    return None


def crystal_problem(value: Any) -> str | None:
    """Why ``value`` is no crystal a lifted ``from_spacegroup`` can build, or None."""
    if not isinstance(value, dict) or set(value) != set(CRYSTAL_KEYS):
        return f"a crystal is a mapping of {', '.join(CRYSTAL_KEYS)}"
    group, species, coords = (value[k] for k in CRYSTAL_KEYS)
    if isinstance(group, str) and ":" in group:
        return f"give space group {group.partition(':')[0]} without a setting (pymatgen's default setting is used)"
    if not isinstance(group, str) or group_number(group) is None:
        return f"{group!r} is not a space-group symbol"
    if lattice_family(group_number(group) or 0) is None:
        return f"space group {group} is not cubic, tetragonal, trigonal or hexagonal"
    if not isinstance(species, list) or not species or not isinstance(coords, list) or len(coords) != len(species):
        return "a crystal lists as many sites (coords) as species, at least one"
    bad = next((s for s in species if not isinstance(s, str) or not is_symbol(s)), None)
    if bad is not None:
        return f"{bad!r} is not an element symbol"
    numbers = (isinstance(x, (int, float)) and not isinstance(x, bool) and -1 <= x <= 1 for row in coords for x in row)
    if not all(isinstance(row, list) and len(row) == 3 for row in coords) or not all(numbers):
        return "each site's coords are three fractional coordinates between -1 and 1"
    wrapped = [tuple(round(float(x) % 1.0, 6) % 1.0 for x in row) for row in coords]
    if len(set(wrapped)) != len(wrapped):
        return "two sites have the same coordinates"
    return None


def built(value: dict[str, Any]) -> tuple[str, int] | None:
    """The reduced formula and the number of sites of the crystal ``value`` builds (on nominal lengths; its composition
    does not depend on them), or None when pymatgen cannot build it or two of its sites fall on one place (the same
    position of the group listed twice: pymatgen keeps both atoms)."""
    from pymatgen.core import Lattice, Structure

    family = lattice_family(group_number(value["space_group"]) or 0)
    lattice = {"cubic": Lattice.cubic(5.0), "tetragonal": Lattice.tetragonal(5.0, 7.0), "hexagonal": Lattice.hexagonal(5.0, 7.0)}.get(family or "")
    if lattice is None:
        return None
    try:
        structure = Structure.from_spacegroup(value["space_group"], lattice, value["species"], value["coords"])
    except Exception:  # noqa: BLE001  # pymatgen refuses a crystal in many ways: none of them builds it
        return None
    if not structure.is_valid(tol=0.05):
        return None
    return structure.composition.reduced_formula, len(structure)


# A crystal of another make-up in each lattice family, with as many lengths (cubic: a; the others: a and c).
_OTHER_CRYSTALS = {
    "cubic": [
        {"space_group": "Pm-3m", "species": ["Cs", "Cl"], "coords": [[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]},
        {"space_group": "Fm-3m", "species": ["Na", "Cl"], "coords": [[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]},
        {"space_group": "F-43m", "species": ["Zn", "S"], "coords": [[0.0, 0.0, 0.0], [0.25, 0.25, 0.25]]},
    ],
    "tetragonal": [{"space_group": "P4/mmm", "species": ["Cu", "Au"], "coords": [[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]}],
    "hexagonal": [{"space_group": "P6_3/mmc", "species": ["Mg"], "coords": [[1 / 3, 2 / 3, 0.25]]}],
}


def crystal_probes(value: Any) -> list[dict[str, Any]]:
    """Other crystals to try in place of ``value``: its sites with other elements, and another crystal of its lattice family."""
    if crystal_problem(value) is not None:
        return []
    species = list(value["species"])
    swapped = [next((n for n in element_neighbours(s) if n not in species), s) for s in species]
    found = [{**value, "species": swapped}] if swapped != species else []
    family = lattice_family(group_number(value["space_group"]) or 0) or ""
    others = [c for c in _OTHER_CRYSTALS.get(family, []) if (c["space_group"], c["species"]) != (value["space_group"], species)]
    return found + others
