"""The numbers a question states, read as values: how strongly each is tied to a parameter, by words, place or form.

A number is tied to a parameter by its name ("a = 3.6"), by the words the verified question used around it (the
nearest winning: "cutoff 10.0 Å, starting 1.5 Å apart"), by the substance it is listed with ("Li2O -6.0" goes where the
verified question's "Li2O -6.0" went), by a range ("from 4.0 to 4.2 Å" fills the two ends the verified question
stated as one), or by its unit alone. "±5 %" states the factors 0.95 and 1.05.

>>> from skills.mentions import find_mentions
>>> text = "energies over 11 lattice constants from 4.0 to 4.2 Å"
>>> [(a.text, b.text) for a, b in ranges(text, find_mentions(text))]
[('4.0', '4.2')]
>>> spread = find_mentions("a volume scan of ±5 %")[0]
>>> [factor(n, spread) for n in find_mentions("from 0.95 to 1.05")]
[True, True]
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping

from skills.mentions import GENERIC_WORDS, Mention, stem, words_after, words_before
from skills.parameter import Parameter
from skills.substances import equal_mentions
from skills.units import converted, same_unit

__all__ = ["ties", "units_differ", "ranges", "partner", "entry_pairs", "pair_mentions", "range_pair", "bound_ranges", "entry_partners", "same_entry", "spread", "factor", "spread_pair"]

# Words that tie nothing: articles and prepositions, and the words of questions, formats and rewording ("Return", "molecule").
_WEAK = frozenset("the with and for from into of at to in by a an per its".split()) | {stem(w) for w in GENERIC_WORDS} | GENERIC_WORDS


_LINKING = frozenset(stem(w) for w in "is are was equal equals set be being".split())


def units_differ(asked: str | None, given: str | None) -> bool:
    """Whether both units are known and are not the same unit."""
    return bool(asked and given) and not same_unit(asked or "", given or "")


def ties(query: str, mention: Mention, name: str, prop: Parameter, substance_words: frozenset[str] = frozenset()) -> float:
    """How strongly the question ties a number to a parameter: 3.5 by ``name =`` right before it, 3 by name (3.25 the word
    right before it; no other word between but "of", "is", …), 2 by the verified question's words (more the
    nearer they stand: "cutoff 10.0 Å, starting 1.5 Å apart" ties 1.5 to the start), 1 by unit.

    The verified question's words around the value count only when they describe it: not weak words,
    and not the substance's name ("magnesium with a = ..." does not make every number after magnesium an a).
    """
    if units_differ(mention.unit, prop.unit) and converted(1.0, mention.unit, prop.unit) is None:
        return 0  # 300 K is never an fmax in eV/Å, whatever the words around it (0.352 nm may be a length in Å)
    before = query[: mention.start]
    if re.search(rf"(?<![\w/]){re.escape(name)}\s*[=:]\s*$", before, re.IGNORECASE if len(name) > 2 else 0):
        return 3.5  # "sigma=2.0, epsilon=0.5": named right before it, more than a name a few words back
    if len(name) <= 2:
        joined = r"\s*(?:=|:|\s(?:is|of)\s)\s*" if name.lower() in ("a", "i") else r"\s*(?:=|:|is|of)?\s*"  # "in a 3x3x3" is an article
        if re.search(rf"(?<![\w/]){re.escape(name)}{joined}$", before):  # "c/a = 1.624" is no a
            return 3
        if re.search(rf"(?:^|[,;(]\s*){re.escape(name)}\s+$", before):  # "volume, a 2.951 Å, c 4.686 Å": a name, not an article
            return 3
    elif re.search(rf"{re.escape(name)}\s*=\s*$", before, re.IGNORECASE):
        return 3
    elif stem(name) in (near := words_before(query, mention.start, 3)):
        between = near[len(near) - near[::-1].index(stem(name)) :]  # "sigma 2.0, epsilon 0.5, cutoff 10": 10 is the cutoff's
        if not between and not re.search(r"[,;(]\s*$", before):
            return 3.25
        if all(w in _WEAK or w in _LINKING for w in between):
            return 3
    cue = {w for w in prop.cue or [] if len(w) > 2 and w not in _WEAK and w not in substance_words}
    cue_after = {w for w in prop.cue_after or [] if len(w) > 2 and w not in _WEAK and w not in substance_words}
    before_words, after_words = words_before(query, mention.start, 5)[::-1], words_after(query, mention.end, 2)
    distances = [i for i, w in enumerate(before_words) if w in cue] + [i for i, w in enumerate(after_words) if w in cue_after]
    head = next((w for w in reversed(prop.cue or []) if len(w) > 2 and w not in _WEAK and w not in substance_words), None)
    if head is not None and after_words[:1] == [head]:
        distances.append(0)  # "a 10 Å cutoff" for the verified "a cutoff of 10.0 Å": the word it named, after it
    if distances:
        return 2 + 0.1 * (5 - min(distances))
    if prop.unit and mention.unit and converted(1.0, mention.unit, prop.unit) is not None:  # "4.08 angstrom", "0.408 nm": a length in Å
        return 1
    return 0


_MINIMUM = re.compile(r"\bmin(?:imum)?\b(?:\s+[a-z]+){0,3}\s*(?:is|of|=|:)?\s*$", re.I)
_MAXIMUM = re.compile(r"\s*(?:[^\s\d,;]{1,6}\s*)?(?:,|and|,\s*and)\s+(?:the\s+|a\s+)?max(?:imum)?\b(?:\s+[a-z]+){0,3}\s*(?:is|of|=|:)?\s*", re.I)


_NAMED = r"(?:[A-Za-z]\w{0,5}\s*=\s*)?"
"""A value's name written before it in a range: "between a=3.95Å and a=4.20Å"."""


def ranges(text: str, mentions: list[Mention]) -> list[tuple[Mention, Mention]]:
    """Pairs of numbers the text states as a range: "from 4.0 to 4.2 Å", "between 3.5 and 3.7", "3.5-3.7", "the minimum path
    length is 1 bond and the maximum is 6"."""
    numbers = [m for m in mentions if m.kind == "number" and not m.plus_minus]
    found = []
    for low, high in itertools.pairwise(numbers):
        gap = text[low.end : high.start]
        named = re.search(r"\b([A-Za-z]\w{0,5})\s*=\s*$", gap)
        if named:  # "between a=3.95Å and a=4.20Å": the same name before both ends, or no range ("1.5 Å to fmax = 1e-5")
            if not re.search(rf"\b{re.escape(named.group(1))}\s*=\s*$", text[: low.start]):
                continue
            gap = gap[: named.start()]
        if re.fullmatch(r"\s*(?:[^\s\d]{1,6}\s+)?(?:to|up to|-|–|…|\.\.\.?)\s*", gap) or (
            re.fullmatch(r"\s*(?:[^\s\d]{1,6}\s+)?and\s*", gap) and re.search(rf"\bbetween\s+{_NAMED}$", text[: low.start])
        ) or (_MAXIMUM.fullmatch(gap) and _MINIMUM.search(text[: low.start])):
            found.append((low, high))
    return found


def range_pair(verified: str, known: list[Mention], sources: dict[str, Mention | None]) -> tuple[str, str] | None:
    """The two parameters the verified question stated as one range ("path lengths 1 to 6"), low first, if it has one."""
    named = {(m.start, m.text): name for name, m in sources.items() if m is not None}
    pairs = [
        (named[(a.start, a.text)], named[(b.start, b.text)])
        for a, b in ranges(verified, known)
        if (a.start, a.text) in named and (b.start, b.text) in named
    ]
    return pairs[0] if len(pairs) == 1 else None


def bound_ranges(verified: str, known: list[Mention], sources: dict[str, Mention | None], query: str, numbers: list[Mention]) -> dict[int, str]:
    """Where the question states a range, the parameter each end goes to (by position in the question): the ends of the
    verified question's one range of two parameters, in order."""
    pair = range_pair(verified, known, sources)
    if pair is None:
        return {}
    low, high = pair
    return {end.start: name for a, b in ranges(query, numbers) for end, name in ((a, low), (b, high))}


def partner(text: str, mentions: list[Mention], number: Mention) -> Mention | None:
    """The substance an entry's number belongs to: the one just before it ("Li2O -6.0", "the Li2O2 energy to -5.9")."""
    before = [m for m in mentions if m.end <= number.start and not m.part]
    if not before or before[-1].kind == "number":
        return None
    gap = text[before[-1].end : number.start]
    return before[-1] if len(re.findall(r"[A-Za-z]+", gap)) <= 2 and not re.search(r"[=;:.]", gap) else None


# What may stand between one entry of a list and the next: a unit, then a comma, a semicolon or "and".
_ENTRY_GAP = re.compile(r"\s*(?:eV(?:/f\.?u\.?|/atom)?\s*)?(?:[,;]\s*(?:and\s+)?|and\s+)(?:E\()?")
_BESIDE = re.compile(r"\s*\)?\s*[:=]?\s*")  # "Li2O -6.0", "Mg: -1.60", "E(Li) = -1.91"


def entry_pairs(text: str, mentions: list[Mention]) -> list[tuple[Mention, Mention]]:
    """The (substance, number) entries a text lists ("Li 0.0, O2 0.0, Li2O -6.0 and LiO2 -2.4 eV"), each substance with the
    number just after it; and elsewhere in the text ("the Li2O2 energy to -5.9"). [] unless two stand side by side in a
    list: a lone "Cu 3.61 Å" is a value, not a list of entries."""
    pairs = []
    for number in (m for m in mentions if m.kind == "number" and not m.plus_minus):
        before = [m for m in mentions if m.end <= number.start and not m.part]
        beside = before[-1] if before and before[-1].kind != "number" and _BESIDE.fullmatch(text[before[-1].end : number.start]) else None
        substance = beside or partner(text, mentions, number)
        if substance is not None and (substance.formula or substance.element):
            pairs.append((substance, number))
    listed = any(
        _BESIDE.fullmatch(text[a.end : x.start]) and _BESIDE.fullmatch(text[b.end : y.start]) and _ENTRY_GAP.fullmatch(text[x.end : b.start])
        for (a, x), (b, y) in itertools.pairwise(pairs)
    )
    return pairs if listed else []


def pair_mentions(pairs: list[tuple[Mention, Mention]]) -> set[tuple[int, str]]:
    """Where the mentions of ``pairs`` stand, to tell them from the text's other mentions."""
    return {(m.start, m.text) for pair in pairs for m in pair}


def entry_partners(verified: str, known: list[Mention], sources: dict[str, Mention | None], numeric: list[str]) -> dict[str, Mention]:
    """The substance each number parameter was stated with, where the verified question lists entries ("Li2O -6.0")."""
    partners = {name: p for name in numeric if (m := sources[name]) is not None and (p := partner(verified, known, m)) is not None}
    return partners if len({p.start for p in partners.values()}) == len(partners) else {}


def same_entry(asked: Mention, verified: Mention, bound_words: dict[str, str], sources: dict[str, Mention | None]) -> bool:
    """Whether the question's substance stands where the verified question's did: the same one, or the value bound to the
    parameter the verified one was the source of (``bound_words``: parameter → the question's words for it)."""
    if equal_mentions(asked, verified):
        return True
    return any(source is verified and bound_words.get(name, "").split(" / ")[0] == asked.text for name, source in sources.items())


def spread(mention: Mention, context: list[Mention]) -> bool:
    """Whether "±5 %" restates the verified question's factors 0.95 and 1.05 (or its own "±5 %")."""
    low, high = 1 - (mention.number or 0) / 100, 1 + (mention.number or 0) / 100
    numbers = [c.number for c in context if c.kind == "number" and c.number is not None and not c.plus_minus]
    return any(c.plus_minus and c.number == mention.number for c in context) or (
        any(abs(n - low) < 1e-9 for n in numbers) and any(abs(n - high) < 1e-9 for n in numbers)
    )


def factor(number: Mention, spread: Mention) -> bool:
    """Whether ``number`` is one of the factors ``spread`` ("±5 %") states: 0.95 or 1.05."""
    if not spread.plus_minus or number.kind != "number" or number.plus_minus or number.number is None:
        return False
    return any(abs(number.number - (1 + sign * (spread.number or 0) / 100)) < 1e-9 for sign in (-1, 1))


def spread_pair(properties: Mapping[str, Parameter], kinds: dict[str, str]) -> tuple[str, str] | None:
    """The two number parameters verified as factors either side of 1 (0.95 and 1.05): what "±5 %" sets, when there is one pair."""
    numbers = {n: float(p.default) for n, p in properties.items() if kinds[n] == "number" and isinstance(p.default, (int, float))}
    pairs = [(a, b) for a, b in itertools.permutations(numbers, 2) if numbers[a] < 1 < numbers[b] and abs(numbers[a] + numbers[b] - 2) < 1e-9]
    return pairs[0] if len(pairs) == 1 else None
