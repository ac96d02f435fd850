"""Units as a question writes them: ``g/cm^3``, ``Å²``, ``eV/atom``, ``kJ mol^-1``, read as units, never as words or elements.

A unit expression is one or more unit symbols joined by ``/``, ``·`` or ``*``, each with an optional
power (``^3``, ``3``, ``³``, ``^-1``). A lone symbol that is also a word or an element (``K``, ``m``,
``A``, ``s``) counts as a unit only where it follows a number or ``in``/``unit:``; a composite or an
unmistakable symbol (``GPa``, ``eV``, ``Å``) counts anywhere.

>>> [text for _, _, text in unit_spans("Density in g/cm^3 and a TPSA in Å² of 20 Å^2, at 300 K")]
['g/cm^3', 'Å²', 'Å^2', 'K']
>>> same_unit("Å^3", "angstrom3"), same_unit("Å^2", "Å"), normal_unit("kJ mol^-1")
(True, False, 'kj/mol')
>>> [text for _, _, text in unit_spans("in grams per cubic centimetre, or kJ per mole")], same_unit("grams per cubic centimetre", "g/cm^3")
(['grams per cubic centimetre', 'kJ per mole'], True)
>>> [text for _, _, text in unit_spans("Answer in cubic ångströms, not square nm")], same_unit("cubic ångströms", "Å^3")
(['cubic ångströms', 'square nm'], True)
"""

from __future__ import annotations

import re

__all__ = ["UNIT_SYMBOLS", "unit_spans", "normal_unit", "same_unit", "is_unit", "converted", "joined_units", "is_spelled_unit"]

# Symbols that are units and nothing else in a question (never a word or an element read alone).
_PLAIN = (
    "eV meV keV Ry Ha Hartree hartree kJ kcal GPa MPa kPa bar mbar atm Torr Å Angstrom angstrom angstroms nm pm fm µm um mm cm km "
    "fs ps ns µs amu Da kDa Debye debye kmol mmol degrees deg ° °C °F THz GHz MHz Hz bohr Bohr a.u. wt% at% ppm ppb % "
    "grams gram kilograms kelvin joules joule electronvolts electronvolt pascals gigapascals nanometres nanometers picometres "
    "picometers kilojoules kilocalories hartrees rydbergs debyes centimetre centimetres centimeter centimeters Ångström ångström "
    "Ångströms ångströms Angstroms gigapascal electronvolt pounds pound lb lbs inch inches milligram milligrams micrograms "
    "litre litres liter liters"
).split()
# Symbols that are also words or elements ("K", "m", "s", "A", "C", "J", "T", "g", "Pa"): units only in a unit's place.
_AMBIGUOUS = "K C F J T g kg mg m s h min A W V S u L Pa cal rad atom atoms cell mol".split()  # "relax the mol(ecule)"
UNIT_SYMBOLS = frozenset(_PLAIN) | frozenset(_AMBIGUOUS)
"""Every symbol a unit expression is made of."""

_SYMBOL = "(?:" + "|".join(re.escape(s) for s in sorted(UNIT_SYMBOLS, key=len, reverse=True)) + ")"
_POWER = r"(?:\^\s?[-−+]?\d|⁻?[¹²³])"
_NEGATIVE = r"(?:\^?\s?[-−]\d|⁻[¹²³])"
_LENGTH = r"(?:Å|nm|pm|cm|mm|m|bohr)\d"  # Å3, cm3: a length to a power written without a caret
_PART = rf"(?:{_LENGTH}|{_SYMBOL}{_POWER}?)"
_EXPRESSION = re.compile(
    rf"(?<![\w/^.])(?:1\s?/\s?{_PART}|{_PART}(?:\s?[/·*]\s?{_PART}|\s{_SYMBOL}{_NEGATIVE})*)(?![\w^])"
)
_UNIT_PLACE = re.compile(r"(?:\d\s?|\bin\s|\bunits?\s?:\s?)$", re.IGNORECASE)
_SUPERSCRIPTS = str.maketrans("²³¹⁻−", "231--")


# Units spelled out, to their symbols.
_SPELLED = {
    "gram": "g", "grams": "g", "kilogram": "kg", "kilograms": "kg", "joule": "J", "joules": "J", "kilojoules": "kJ", "kelvin": "K",
    "electronvolt": "eV", "electronvolts": "eV", "pascals": "Pa", "gigapascals": "GPa", "nanometres": "nm", "nanometers": "nm",
    "picometres": "pm", "picometers": "pm", "kilocalories": "kcal", "hartrees": "Ha", "hartree": "Ha", "rydbergs": "Ry",
    "debyes": "D", "debye": "D", "degrees": "deg", "mole": "mol", "moles": "mol", "centimetre": "cm", "centimetres": "cm",
    "centimeter": "cm", "centimeters": "cm", "gigapascal": "GPa", "pound": "lb", "pounds": "lb", "lbs": "lb", "inch": "in",
    "inches": "in", "milligram": "mg", "milligrams": "mg", "micrograms": "µg", "litre": "L", "litres": "L", "liter": "L", "liters": "L", "nanometre": "nm", "nanometer": "nm", "picometre": "pm", "picometer": "pm",
}  # fmt: skip


_WORD_UNITS = "(?:" + "|".join(sorted({*_SPELLED, "angstrom", "angstroms", "ångström", "ångströms"}, key=len, reverse=True)) + ")"
_SPELLED_COMPOSITE = re.compile(rf"(?<![\w])(?:{_WORD_UNITS}|{_SYMBOL})\s+per\s+(?:(?:square|cubic)\s+)?{_WORD_UNITS}(?![\w])", re.IGNORECASE)
_SPELLED_POWER = re.compile(rf"(?<![\w])(?:square|cubic)\s+(?:{_WORD_UNITS}|Å|nm|pm|cm|mm)(?![\w])", re.IGNORECASE)
"""A length spelled to a power: "cubic ångströms" is Å^3, "square angstroms" Å^2."""


def joined_units(text: str) -> str:
    """``text`` with units spelled in two words written as one ("electron volts" is electronvolts): one word, one unit."""
    return _TWO_WORDS.sub(lambda m: f"electronvolt{m.group(1)}", text)


def is_spelled_unit(word: str) -> bool:
    """Whether a word is a unit spelled out and nothing else ("electronvolts", "angstroms", "grams"; not "atoms", "moles"
    or "degrees", which count or measure what may be asked)."""
    return word.lower() in _SPELLED_ONLY


_SPELLED_ONLY = frozenset({*_SPELLED, "angstrom", "angstroms", "ångström", "ångströms"}) - {"mole", "moles", "degrees", "pound", "pounds", "inch", "inches"}
_TWO_WORDS = re.compile(r"\belectron[\s-]+volt(s?)\b", re.IGNORECASE)


def is_unit(text: str) -> bool:
    """Whether ``text`` is a whole unit expression (``g/cm^3``, ``eV``, ``Å²``; ``K`` too, read in a unit's place)."""
    return _EXPRESSION.fullmatch(text.strip()) is not None


def unit_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each unit expression in ``text``: composites and plain symbols anywhere, the others in a unit's place;
    units spelled out and joined by "per" are one unit ("grams per cubic centimetre" is g/cm^3)."""
    found = [(m.start(), m.end(), m.group()) for m in _SPELLED_COMPOSITE.finditer(text)]
    taken = [(start, end) for start, end, _ in found]
    found += [(m.start(), m.end(), m.group()) for m in _SPELLED_POWER.finditer(text) if not any(s <= m.start() < e for s, e in taken)]
    taken = [(start, end) for start, end, _ in found]
    for match in _EXPRESSION.finditer(text):
        if any(start <= match.start() < end for start, end in taken):
            continue
        unit = match.group()
        composite = unit not in UNIT_SYMBOLS
        if composite or unit in _PLAIN or _UNIT_PLACE.search(text[: match.start()]):
            found.append((match.start(), match.end(), unit))
    return sorted(found)


def normal_unit(unit: str) -> str:
    """A unit in one spelling, to compare: ``Å^3``, ``Å3``, ``Å³``, ``angstrom^3`` → ``a3``; ``kJ mol^-1`` → ``kj/mol``."""
    text = unit.translate(_SUPERSCRIPTS).strip()
    text = re.sub(r"(?i)\b(square|cubic)\s+([A-Za-zÅåö]+)", lambda m: m.group(2) + ("2" if m.group(1).lower() == "square" else "3"), text)
    text = re.sub(r"(?i)\s+per\s+", "/", text)  # grams per cubic centimetre is g/cm3
    text = re.sub(r"\s+([^\s/]+?)\^?-1\b", r"/\1", text)  # kJ mol^-1 → kJ/mol
    text = re.sub(r"(?:\s+|\s?[·*]\s?)([^\s/\d^·*-]+)\^?-(\d)\b", r"/\1\2", text)  # g cm^-3, g·cm⁻³ → g/cm3
    text = re.sub(r"[A-Za-z]+", lambda m: _SPELLED.get(m.group().lower(), m.group()), text)  # grams per mole is g/mol
    text = re.sub(r"(?i)(?:angstr|ångstr)(?:o|ö)ms?", "Å", re.sub(r"[\s^]", "", text))
    return text.replace("Å", "a").replace("·", "*").lower()


def same_unit(a: str, b: str) -> bool:
    """Whether two written units are the same unit."""
    return normal_unit(a) == normal_unit(b)


# Lengths, in Å: a value in one converts to another of them exactly (a question's "0.352 nm" is a lattice constant of 3.52 Å).
_LENGTHS = {"a": 1.0, "nm": 10.0, "pm": 0.01, "bohr": 0.529177210903}


def converted(value: float, unit: str | None, to: str | None) -> float | None:
    """``value`` in ``unit`` as a value in ``to``, where both are lengths (Å, nm, pm, bohr) or the same unit; else None.

    >>> converted(0.352, "nm", "Å"), converted(352, "pm", "angstrom"), converted(4.05, "Å", "Å"), converted(1.0, "eV", "Å")
    (3.52, 3.52, 4.05, None)
    """
    if not unit or not to:
        return None
    if same_unit(unit, to):
        return value
    source, target = _LENGTHS.get(normal_unit(unit)), _LENGTHS.get(normal_unit(to))
    return None if source is None or target is None else round(value * source / target, 10)
