"""What a question asks, read against the questions a skill was verified on: the ordinary words that change the answer.

Ordinary English never makes a skill decline (``skills/terms.py``), except the few words and forms
that turn the quantity into another one while every value still binds:

- a word that turns it around: "violate" for "satisfy", "invalid" for "valid", "ignoring the
  electronegativity test", "inverse";
- a substance denied: "the mass of Fe2O3 that is *not iron*", "*other than* oxygen";
- a word of what is asked, added ("the *mole* fraction", "the *full* formula", "the *Hall*
  symbol", "the *weakest* peak") or dropped ("how many rings" of a skill verified on "aromatic rings");
- another superlative ("the *weakest* peak" of a skill verified on the strongest), or a list asked in
  another order ("[acceptors, donors]" of a skill that gives [donors, acceptors]);
- a setting the verified question fixed, given another value ("sigma = 1.5 Å" where the code holds
  sigma = 1.0), or a cell repeated unevenly ("2x2x3") where the skill repeats it evenly;
- another basis: "per atom" where the skill was verified per molecule or per formula unit;
- values given in a unit the verified question did not give them in ("energies (kJ/mol)" for its
  "(eV)", "(eV/atom)" for its "(eV, per formula unit)").

Each returns the reason the question is not the skill's, or None.

>>> verified = ["How many aromatic rings does naphthalene (SMILES c1ccc2ccccc2c1) have according to RDKit?"]
>>> vocabulary = explaining_forms(["aromatic", "ring", "rdkit", "smiles", "naphthalene", "count"])
>>> print(dropped_qualifier(verified, "How many rings does tetralin (SMILES c1ccc2c(c1)CCCC2) have?"))
the question asks without 'aromatic', which every verified question of this skill asks with
>>> dropped_qualifier(verified, "Number of aromatic rings in pyrene, RDKit") is None
True
>>> print(reversed_sense(["Is CsPbI3 a chemically valid composition according to SMACT?"], "Is NaCl2 a chemically invalid composition?"))
the question asks with 'invalid', which turns around what this skill was verified to answer
>>> print(other_order(["Return a list [donors, acceptors] of integers."], "Give [acceptors, donors]."))
the question asks for [acceptors, donors]; the skill gives [donors, acceptors]
>>> print(other_basis(["Atomization energy (unit: eV) of N2."], "Atomization energy per atom of N2 in eV?"))
the question asks per atom; the skill was verified otherwise
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from skills.answer_spec import read_answer_spec
from skills.chemistry import element_symbol, is_element, is_formula
from skills.mentions import GENERIC_WORDS, Mention, same_amount, stem
from skills.terms import MODIFIERS, asked_quantity, explaining_forms, explains, is_phrase, is_technical, written_acronyms
from skills.units import is_spelled_unit, normal_unit, same_unit, unit_spans

__all__ = ["REVERSING", "OPPOSITES", "NEUTRAL", "reversed_sense", "denied_substance", "unexplained_qualifiers", "dropped_qualifier", "other_qualifier", "other_quantity", "other_count", "other_selection", "other_basis", "other_units", "other_superlative", "other_order", "uneven_repeat", "fixed_setting", "own_formula"]

REVERSING = frozenset(
    "violate violates violated violating violation fail fails failed failing invalid unstable inverse reciprocal opposite "
    "complement ignore ignores ignoring ignored neglect neglecting excluding exclude excludes except disregarding disregard "
    "unlike minus replace replacing replaced substitute substituting substituted substitution doped doping".split()
)
"""Ordinary words that turn what is asked around or leave part of it out: a skill answers with one only when verified on it."""

_PAIRS = (
    "above below", "over under", "higher lower", "upper lower", "increase decrease", "gain loss", "positive negative",
    "inside outside", "maximum minimum", "max min", "heating cooling", "expansion compression", "tensile compressive",
    "oxidation reduction", "cation anion", "forward backward", "adsorption desorption", "absorption emission",
)  # fmt: skip
OPPOSITES = {a: b for pair in _PAIRS for a, b in (pair.split(), pair.split()[::-1])}
"""Ordinary words whose opposite asks for another quantity: "below" the hull is not "above" it."""

NEUTRAL = frozenset(
    "calculated computed predicted resulting estimated expected final approximate numerical numeric value values corresponding "
    "overall simulated theoretical reported obtained given quick rough ballpark all".split()
)
"""Words before what is asked that qualify nothing ("the *calculated* density", "the *predicted* lattice constant", "a *quick*
number")."""

_COUNTS = frozenset({"number", "count", "amount"})
_DENYING = re.compile(r"\b(?:not|non|except|excluding|without|besides|other\s+than|apart\s+from|but\s+not)\s+(?:the\s+|any\s+|its\s+)?$", re.I)
_BASIS = re.compile(r"\bper[\s-]+(?:[A-Za-z][A-Za-z0-9]*[\s-]+)??(formula[\s-]+unit|atom|molecule|mole|mol|site|cell|unit[\s-]+cell|bond|electron|ion|particle|f\.?u\.?)s?\b", re.I)


def _said(texts: Iterable[str]) -> frozenset[str]:
    """The words of ``texts`` in the forms that explain others, a name in code read in its parts too ("CalcNumAromaticRings"),
    unless the text turns it down ("not CalcNumAromaticRings")."""
    words = [w for text in texts for w in re.findall(r"[A-Za-z]+", text)]
    kept = [re.sub(r"\b(?:not|rather\s+than|instead\s+of|without|other\s+than|except|but)\s+[\w.]+", " ", text, flags=re.I) for text in texts]
    parts = [part for text in kept for w in re.findall(r"[A-Za-z]+", text) if re.search(r"[a-z][A-Z]", w) for part in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", w)]
    return explaining_forms(w.lower() for w in [*words, *parts])


def reversed_sense(verified: Sequence[str], query: str) -> str | None:
    """A word that turns the asked quantity around ("violate", "invalid", "ignoring") that no verified question uses, or
    the opposite of a word the verified question used ("below" the hull for "above" it)."""
    said = _said(verified)
    for word in re.findall(r"[A-Za-z]+", query):
        if word.lower() in REVERSING and not explains(said, word):
            return f"the question asks with {word.lower()!r}, which turns around what this skill was verified to answer"
        opposite = OPPOSITES.get(word.lower())
        if opposite and explains(said, opposite) and not explains(said, word):
            return f"the question asks with {word.lower()!r} where this skill was verified with {opposite!r}"
    return None


def denied_substance(query: str, mentions: Iterable[Mention]) -> str | None:
    """A substance the question denies ("is not iron", "other than oxygen"): the skill computes with what it is given."""
    for mention in mentions:
        if mention.kind != "number" and _DENYING.search(query[max(0, mention.start - 24) : mention.start]):
            return f"the question excludes {mention.text}, which this skill cannot leave out"
    return None


def _qualifiers(text: str, substances: Iterable[str]) -> list[str]:
    """The words of what a question asks for, less neutral words, pronouns, generic words and the substances it names."""
    names = {w.lower() for s in substances for w in re.findall(r"[A-Za-z]+", s)}
    return [
        w.removesuffix("'s") for w in asked_quantity(text)
        if len(w) > 2 and w not in GENERIC_WORDS and w not in NEUTRAL and w.removesuffix("'s") not in names and w != "per"
        and not is_spelled_unit(w)  # "how many grams does a mole weigh": a unit, what it is asked in
    ]  # fmt: skip


def unexplained_qualifiers(vocabulary: frozenset[str], query: str, substances: Iterable[str]) -> list[str]:
    """The words of what is asked ("the *mole* fraction", "the *Hall* symbol", "the *weakest* peak") that the skill's
    vocabulary does not explain, however ordinary."""
    return [w for w in _qualifiers(query, substances) if not explains(vocabulary, w) and w not in _PRONOUNS]


# What a question may ask "for" without naming a quantity ("count them", "how many sites it has").
_PRONOUNS = frozenset("it has have they them this that these those one ones and or its".split())


_INTO_ATOMS = re.compile(
    r"\b(?:takes?|took|costs?|needed|needs|required|requires?)\s+to\s+(?:pull|separate|tear|break)\b[^?!;]{0,100}?"
    r"\b(?:apart\s+)?into\s+(?:(?:free|isolated|individual|separate|separated|gas[-\s]phase|neutral)[,\s]+(?:and\s+)?){1,3}atoms\b",
    re.IGNORECASE,
)
"""The cohesive energy described by what it measures: "the energy it takes to pull the crystal apart into free, isolated atoms"."""


def dropped_qualifier(verified: Sequence[str], query: str) -> str | None:
    """A technical qualifier of what every verified question asks ("*aromatic* rings", "*unrelaxed* vacancy formation energy")
    that the question leaves out: it asks for something wider."""
    asked = _said([query]) | _said(["un" + w.lower() for w in re.findall(r"\b(?:no|without|not)\s+([A-Za-z]+)", query, re.I)])
    missing: list[str] = []
    for text in verified:
        words = asked_quantity(text)
        if words and words[-1] in _COUNTS:
            return None  # "the total number of fragments": "total" says nothing of which fragments
        qualifiers = [w for w in words[:-1] if _narrows(w) and not explains(asked, w)]
        if not qualifiers:
            return None
        missing = missing or qualifiers
    if missing and missing[0] == "cohesive" and _INTO_ATOMS.search(query):
        return None  # "how much energy does it take to pull it apart into isolated atoms": the cohesive energy, described
    return f"the question asks without {missing[0]!r}, which every verified question of this skill asks with" if missing else None


_STATES = frozenset("interatomic intramolecular equilibrium relaxed optimized optimised converged minimum".split())
"""Words that say which state a quantity is read in ("the final *interatomic* separation" after relaxing), not another kind."""


def _substance(word: str) -> bool:
    """Whether a word of what is asked names an element ("the Ge-Ge distance"): another substance, never another quantity."""
    return is_element(word.capitalize()) or element_symbol(word) is not None


def other_qualifier(verified: Sequence[str], query: str) -> str | None:
    """A qualifier in place of the verified one, of what the question asks: "the *potential* energy of the relaxed molecule"
    for a skill verified on the *atomization* energy, which the question never says."""
    asked = asked_quantity(query)
    if len(asked) < 2:  # "how much energy does it take to split O2": the atomization energy in other words
        return None
    acronyms = written_acronyms(query)
    said = _said([query])
    head = stem(asked[-1])
    ours = [w for w in asked[:-1] if w not in NEUTRAL | _STATES and w not in acronyms and w not in GENERIC_WORDS and not w.isdigit() and not _substance(w)]
    theirs = [words for words in (asked_quantity(text) for text in verified) if words and stem(words[-1]) == head]
    known = _said([" ".join(words) for words in theirs])
    new = [w for w in ours if not explains(known, w)]
    methods = written_acronyms(" ".join(verified))
    left_out = [w for words in theirs for w in words[:-1] if w not in NEUTRAL and w not in methods and not explains(said, w) and not _substance(w)]
    if new and left_out:
        return f"the question asks for the {new[0]} {asked[-1]}; the skill was verified on the {left_out[0]} {asked[-1]}"
    return None


def _quantity_words(text: str, generic: bool = False) -> list[str]:
    """The content words of what ``text`` asks for: less neutral and count words, pronouns, elements and (unless
    ``generic``) generic words ("lattice constant")."""
    return [
        w.removesuffix("'s") for w in asked_quantity(text)
        if len(w) > 2 and w not in NEUTRAL | _STATES | _COUNTS | _PRONOUNS and (generic or w not in GENERIC_WORDS) and not _substance(w)
    ]  # fmt: skip


_PREPOSITIONS = frozenset("for of in on at to from by with about".split())


def other_quantity(verified: Sequence[str], query: str, described: frozenset[str], mentions: Iterable[Mention]) -> str | None:
    """Another quantity asked of the same thing: the question names a term of the domain for what it asks ("the *space group*
    number") that neither the verified questions nor what the skill's code says it computes (``described``: ``_said`` of
    them) explain, and it never says the quantity the skill was verified on ("symmetry operations")."""
    asked = asked_quantity(query)
    if not asked or asked[0] in _PREPOSITIONS:
        return None  # "count for OCCc1ccccc1": no quantity named
    written = {w.lower() for m in mentions if m.kind != "number" for w in re.findall(r"[A-Za-z]+", m.text)}
    new = [w for w in _quantity_words(query) if not explains(described, w) and w not in written]  # not a SMILES's letters
    if not new:
        return None
    theirs = [words for words in (_quantity_words(text, generic=True) for text in verified) if words]  # "lattice constant" too
    said = _said([" ".join(asked)])  # named as what is asked, not as a given ("the space group number, given its symmetry operations")
    if not theirs or any(explains(said, w) for words in theirs for w in words):
        return None
    terms = [w for w in new if is_technical(w)] + [f"{a} {b}" for a, b in itertools.pairwise(asked) if is_phrase(a, b) and (a in new or b in new)]
    if not terms:
        return None
    return f"the question asks for the {' '.join(asked)}; the skill computes the {' '.join(theirs[0])}, which the question never names"


_HOW_MANY = re.compile(r"\bhow\s+many\b", re.IGNORECASE)
_COUNT_OF = re.compile(r"\b(?:number|count)\s+of\s+", re.IGNORECASE)


def _counted(text: str) -> list[str]:
    """What a count question counts ("how many symmetry operations", "the number of aromatic rings"); [] for none named."""
    words = asked_quantity(text)
    if words and words[-1] not in _COUNTS and _HOW_MANY.search(text):
        return words
    match = _COUNT_OF.search(text)
    return asked_quantity("What are the " + text[match.end() :]) if match else []


def other_count(verified: Sequence[str], query: str, code_counts: Iterable[str] = ()) -> str | None:
    """A count of another thing: "how many atoms" of a skill whose verified questions count symmetry operations, and whose
    code counts nothing else by name (``code_counts``: "entries" of ``GetNumEntries``)."""
    counted = _counted(query)
    theirs = [words for words in map(_counted, verified) if words]
    heads = _said([part.split()[-1] for words in theirs for part in " ".join(words).split(" and ") if part.strip()] + list(code_counts))
    if not counted or not theirs or any(explains(heads, w) for w in counted):  # "symmetry operations spglib finds"
        return None
    return f"the question counts {' '.join(counted)}; the skill counts {' '.join(theirs[0])}"


def _narrows(word: str) -> bool:
    """Whether a word before what is asked narrows it: a technical adjective ("aromatic", "unrelaxed", "polar") or a modifier
    ("total", "reduced"); a noun of a compound term ("oxidation state", "atomization energy") is said in other words too."""
    if word in NEUTRAL or word in _BROAD:
        return False
    adjective = word in _PLAIN_ADJECTIVES or re.search(r"(?:ic|al|ar|ed|ous|ive)$", word) is not None
    return adjective and (word in MODIFIERS or is_technical(word))


# Adjectives of ``MODIFIERS`` without an adjective's ending.
_PLAIN_ADJECTIVES = frozenset("exact heavy total net mean median average partial strict".split())
# Adjectives that leave what is asked as wide as it was: "atomic sites" are the sites.
_BROAD = frozenset({"atomic"})


def other_basis(verified: Sequence[str], query: str, answer_unit: str | None = None) -> str | None:
    """A basis ("per atom", "per formula unit", "eV/atom") the question states and no verified question does; or, where the
    skill's answer has a basis (``answer_unit`` eV/atom) the question never states, another basis the question states more
    often than any verified question ("the formation energy per formula unit", beside energies given per formula unit)."""
    stated = [_basis(text, ("atom", "mol")) for text in verified]  # "g/mol" of the verified question says per mole
    answered_basis = _basis_name(normal_unit(answer_unit).rpartition("/")[2]) if answer_unit and "/" in answer_unit else None
    for denied in _denied_bases(query):  # "the formation energy (not per atom)" of a skill that gives eV/atom
        if denied == answered_basis or any(denied in bases for bases in stated):
            return f"the question asks not per {denied}; the skill was verified per {denied}"
    asked = _basis(query)
    for basis in dict.fromkeys(asked):
        if all(basis not in bases for bases in stated):
            return f"the question asks per {basis}; the skill was verified otherwise"
    answered = _basis_name(normal_unit(answer_unit).rpartition("/")[2]) if answer_unit and "/" in answer_unit else None
    if answered in _ANSWER_BASES and answered not in _basis(query, _ANSWER_BASES):
        for basis in dict.fromkeys(asked):
            if basis != answered and asked.count(basis) > max(bases.count(basis) for bases in stated):
                return f"the question asks per {basis}; the skill gives {answer_unit}"
    return None


_ANSWER_BASES = ("atom", "formula unit", "cell", "molecule", "mol")
# A basis written after a unit's slash that the unit reader does not take: "eV/f.u.", "eV/formula unit".
_SLASH_BASIS = re.compile(r"(?<=[A-Za-z])\s*/\s*(formula[\s-]+unit|f\.u\.?|fu)(?![A-Za-z])", re.I)


def _denied_bases(text: str) -> list[str]:
    """The bases a text turns down: "not per atom", "rather than eV/atom"."""
    return _basis(" ".join(_NEGATION.sub("", m.group()) for m in _DENIED_BASIS.finditer(text)), ("atom", "mol"))


def _basis(text: str, of_units: tuple[str, ...] = ("atom",)) -> list[str]:
    """The bases a text states: "per atom", "per formula unit", "eV/f.u.", "per Li2O", "of one Li2O unit", and those
    ``of_units`` a unit says ("eV/atom"); not one it denies ("per formula unit (not per atom)")."""
    text = _DENIED_BASIS.sub(" ", text)
    units = [normal_unit(unit).rpartition("/")[2] for _, _, unit in unit_spans(text)]
    slashed = [_basis_name(m.group(1)) for m in _SLASH_BASIS.finditer(text)]
    written = [m.group(1) or m.group(2) for m in _FORMULA_BASIS.finditer(text)]
    formula_units = ["formula unit" for formula in written if is_formula(formula) and not is_element(formula)]
    return [_basis_name(m.group(1)) for m in _BASIS.finditer(text)] + slashed + formula_units + [u for u in units if u in of_units]


_DENIED_BASIS = re.compile(
    r"\b(?:not|rather\s+than|instead\s+of|as\s+opposed\s+to)\s+(?:in\s+)?(?:per\s+[A-Za-z][\w.]*(?:\s+unit)?|[A-Za-z]*eV\s*/\s*[\w.]+)", re.I
)
"""A basis the question turns down: "not per atom", "rather than eV/atom"."""
_NEGATION = re.compile(r"^\s*(?:not|rather\s+than|instead\s+of|as\s+opposed\s+to)\s+(?:in\s+)?", re.I)
# "per Li2O", "of one Li2O unit": a basis of one formula unit, written with the formula itself.
_FORMULA_BASIS = re.compile(r"\bper\s+(?:one\s+)?([A-Z][A-Za-z0-9]*)\b(?!\s*-)|\bone\s+([A-Z][A-Za-z0-9]*)\s+(?:formula\s+)?unit\b")


def _basis_name(phrase: str) -> str:
    """One spelling of a basis: "formula unit", "f.u." → "formula unit"; "mole", "mol" → "mol"."""
    phrase = re.sub(r"[\s-]+", " ", phrase.lower()).rstrip("s")
    return {"f.u.": "formula unit", "fu": "formula unit", "f.u": "formula unit", "mole": "mol", "unit cell": "cell"}.get(phrase, phrase)


def other_units(verified: Sequence[str], query: str, answer_unit: str | None) -> str | None:
    """A unit the question gives values in ("energies (kJ/mol)", "(eV per atom)") that no verified question gives them in.

    Units written beside a number are the number's own (checked where it binds), and one statement of the answer's unit is
    the answer's (the one the text asks for, else ``answer_unit``, the skill's). A unit written without the basis the verified question gave ("(eV)" for "(eV, per formula unit)") is
    that unit."""
    given = [_free_units(text, answer_unit) for text in verified]
    for unit, count in _free_units(query, answer_unit).items():
        if all(_matching(units, unit) < count for units in given):
            written = next((u for _, _, u in unit_spans(query) if normal_unit(u) == unit.split("|")[0]), unit)
            return f"the question gives values in {written}{unit.partition('|')[2] and ' per ' + unit.partition('|')[2]}, which the verified question did not"
    return None


def _matching(units: Counter[str], unit: str) -> int:
    return sum(n for u, n in units.items() if u == unit or ("|" not in unit and u.split("|")[0] == unit))


def _numbers_in(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"[-−+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text)]


def _sentence(text: str, position: int) -> str:
    """The sentence of ``text`` that ``position`` lies in."""
    starts = [0, *(m.end() for m in re.finditer(r"[?!]\s+|\.\s+(?=[A-Z(])", text) if m.end() <= position)]
    end = re.search(r"[?!]|\.(?:\s+(?=[A-Z(])|$)", text[position:])
    return text[starts[-1] : position + end.end() if end else len(text)]


def _asks(sentence: str) -> bool:
    """Whether a sentence asks for the answer ("…, in eV per atom?", "Give it in electronvolts.") and states no value."""
    asking = sentence.rstrip().endswith("?") or re.match(r"\s*(?:please\s+)?(?:give|return|report|express|quote|state)\b", sentence, re.I)
    return bool(asking) and not re.search(r"(?<![\w.])[-−+]?\d+(?:\.\d+)?(?![\w.])", re.sub(r"\(\s*units?\s*:[^)]*\)", "", sentence))


def _free_units(text: str, answer_unit: str | None) -> Counter[str]:
    """The units a text writes apart from a number, in one spelling ("eV per atom" is eV/atom; "eV, per formula unit" is
    ``ev|formula unit``), counted; one that is the answer's unit left out."""
    ends = {end for _, end in _numbers_in(text)}
    answer_unit = read_answer_spec(text).unit or answer_unit  # the unit the text asks for, else the skill's
    found: Counter[str] = Counter()
    for start, end, unit in unit_spans(text):
        if any(0 <= start - e <= 1 for e in ends):
            continue
        power = re.search(r"\b(square|cubic)\s+$", text[:start], re.I)  # "square angstroms" is Å^2
        key = normal_unit(unit) + ({"square": "2", "cubic": "3"}[power.group(1).lower()] if power else "")
        basis = re.match(r",?\s*per\s+(?:[A-Za-z][A-Za-z0-9]*\s+)??(formula\s+unit|atom|molecule|mole?|site|cell)\b", text[end:], re.I)
        if basis:
            name = _basis_name(basis.group(1))
            key = f"{key}/{name}" if name in ("atom", "mol") else f"{key}|{name}"
        if answer_unit and "|" not in key and same_unit(key, answer_unit) and _asks(_sentence(text, start)):
            continue  # "how far above the hull does it sit, in electronvolts per atom?": the answer's unit, asked for
        found[key] += 1
    if answer_unit:
        for key in list(found):
            if same_unit(key.split("|")[0], answer_unit) and "|" not in key:
                found[key] -= 1
                break
    return +found


SUPERLATIVES = frozenset(
    "strongest weakest largest smallest biggest highest lowest shortest longest nearest closest furthest farthest deepest "
    "shallowest lightest heaviest densest hardest softest first last maximum minimum max min".split()
)
"""Words that pick one of several ("the *weakest* peak", "the *first* site"): a skill picks the one it was verified on."""


_PICKING_ALIKE = (frozenset("smallest shortest minimum min".split()),)
"""Superlatives that pick the same one of several ("the smallest distance" is the shortest, the code's ``min``): a skill
verified on one picks what the others ask for. Not "highest" for "strongest": the highest-angle peak is another."""


def other_superlative(vocabulary: frozenset[str], query: str) -> str | None:
    """A superlative ("weakest", "second-nearest" is caught as a modifier) the skill's vocabulary does not explain, itself
    or by another of the same pick (``_PICKING_ALIKE``); a minimum or maximum that names a setting given its value ("the
    minimum path length is 1 bond", "a maximum of 6") picks nothing."""
    for found in re.finditer(r"[A-Za-z]+", query):
        word = found.group()
        if word.lower() in ("minimum", "maximum", "min", "max") and (
            _SETTING_VALUE.match(query, found.end()) or (re.search(r"\b(?:a|an)\s+$", query[: found.start()]) and _OF_VALUE.match(query, found.end()))
        ):
            continue
        if word.lower() == "first" and (_THEN.match(query, found.end()) or _NAMED_FIRST.search(query[: found.start()]) and _ENDS.match(query, found.end())):
            continue  # "donors first, then acceptors", "a two-integer list, donors first.": an order, no pick (``other_order``)
        alike = next((group for group in _PICKING_ALIKE if word.lower() in group), frozenset({word.lower()}))
        if word.lower() in SUPERLATIVES and not any(explains(vocabulary, other) for other in alike):
            return f"the question asks for the {word.lower()}, which this skill was not verified to pick"
    return None


_EVERY_KIND = re.compile(
    r"\b(\w+)\s+or\s+(?:not|otherwise|non-?\1)\b|\bwhether\s+\w+\s+or\s+not\b|\b\w+\s+ones\s+(?:included|too|as\s+well)\b"
    r"|\b(?:of|in)\s+(?:any|every|all)\s+(?:kinds?|types?|sorts?)\b",
    re.IGNORECASE,
)
_LEFT_OUT = re.compile(
    r"\b(?:not\s+counting|without\s+counting|leaving\s+out|leave\s+out|left\s+out|excluding|except\s+for|apart\s+from|omitting|neglecting|disregarding)\b"
    r"|\b(?:is|are)\s+not\s+(?:used|counted|included|considered)\b|\b(?:does|do)\s+not\s+count\b|\b(?:doesn't|don't)\s+count\b"
    r"|\bwith\s+(?:zero|only|non-?zero)\s+\w+",
    re.IGNORECASE,
)
_RANKED = re.compile(
    r"\b(?:second|third|fourth|fifth)(?:[- ]\w+)?\b|\brunner[- ]up\b|\bnext[- ](?:strongest|largest|highest|most|nearest|brightest|smallest|lowest)\b"
    r"|\b(?:just\s+|right\s+)?(?:below|behind|after)\s+the\s+(?:most|strongest|largest|highest|brightest|top)\b|\branks?\s+(?:just\s+|right\s+)?(?:below|behind|after)\b",
    re.IGNORECASE,
)
_SWITCHED_OFF = re.compile(r"\b(?:switched|turned|toggled|set)\s+off\b|\b(?:disabled?|deactivated?|switch\s+off|turn\s+off)\b", re.IGNORECASE)
_PICKED = re.compile(r"\b[a-z]{3,}est\b|\bmost\s+[a-z]+", re.IGNORECASE)


def other_selection(verified: Sequence[str], query: str) -> str | None:
    """A selection of what is counted or picked that no verified question makes: every kind ("rings, aromatic or not"),
    some left out ("not counting the centring translations"), or a rank below the verified pick ("the runner-up peak")."""
    said = " ".join(verified)
    for pattern, why in ((_EVERY_KIND, "of every kind"), (_LEFT_OUT, "with some left out"), (_RANKED, "at another rank"), (_SWITCHED_OFF, "with a part switched off")):
        found = pattern.search(query)
        if found and not pattern.search(said) and (pattern is not _RANKED or _PICKED.search(said)):
            return f"the question asks {why} ({found.group()!r}), which no verified question of this skill does"
    return None


_SETTING_VALUE = re.compile(r"(?:\s+[a-z]+){0,3}?\s*(?:is|=|:)\s*[-+]?\d|(?:\s+(?!of\b)[a-z]+){1,3}\s+[-+]?\d")
_OF_VALUE = re.compile(r"\s+of\s+[-+]?\d")
_THEN = re.compile(r"\s*[,;]?\s*(?:and\s+)?then\b", re.IGNORECASE)
_NAMED_FIRST = re.compile(r"\b[A-Za-z]{3,}s\s+$")
_ENDS = re.compile(r"\s*(?:[.,;)]|$)")
"""After "minimum" or "maximum": the setting it names is given a value ("… path length is 1", "… = 0.5", "minimum path
1"; "a maximum of 6"), never "the minimum of 11 energies", which asks for one."""
_WORD_LIST = re.compile(r"\[\s*([A-Za-z][\w -]*(?:\s*,\s*[A-Za-z][\w -]*)+)\s*\]")


def other_order(verified: Sequence[str], query: str) -> str | None:
    """A list of named values asked in another order than the verified question gives it ("[acceptors, donors]",
    "acceptors first, then donors")."""
    orders = [[w.strip().lower() for w in match.group(1).split(",")] for match in _WORD_LIST.finditer(query)]
    orders += [[m.group(1).lower(), m.group(2).lower()] for m in _THEN_ORDER.finditer(query)]
    lists = [[w.strip().lower() for w in known.group(1).split(",")] for text in verified for known in _WORD_LIST.finditer(text)]
    for first in _FIRST_ONLY.finditer(query):  # "donors first.": the one named first must be the skill's first
        named = stem(first.group(1))
        for given in lists:
            if named in map(stem, given) and named != stem(given[0]):
                return f"the question asks for {first.group(1).lower()} first; the skill gives [{', '.join(given)}]"
    for asked in orders:
        for given in lists:
            if sorted(map(stem, given)) == sorted(map(stem, asked)) and list(map(stem, given)) != list(map(stem, asked)):
                return f"the question asks for [{', '.join(asked)}]; the skill gives [{', '.join(given)}]"
    return None


_THEN_ORDER = re.compile(
    r"\b([A-Za-z]+)(?:\s+(?:counts?|numbers?|values?))?(?:\s+first)?\s*[,;]?\s*(?:and\s+)?then\s+(?:the\s+)?([A-Za-z]+)", re.IGNORECASE
)
"""Two values in the order asked: "acceptors first, then donors", "Order: acceptors, then donors"."""
_FIRST_ONLY = re.compile(r"\b([A-Za-z]{3,}?)(?:\s+(?:counts?|numbers?|values?))?\s+first\b(?!\s*[,;]?\s*(?:and\s+)?then)", re.IGNORECASE)


_REPEATED = re.compile(r"(?<![\w.])(\d+)\s*[x×]\s*(\d+)\s*[x×]\s*(\d+)(?![\w.])")


def uneven_repeat(verified: Sequence[str], query: str) -> str | None:
    """A cell repeated unevenly ("2x2x3") that no verified question states: a skill with one repeat count cannot take it."""
    for match in _REPEATED.finditer(query):
        if len(set(match.groups())) > 1 and not any(match.group() in text for text in verified):
            return f"the question repeats the cell {match.group()}, which no parameter of this skill takes"
    return None


_NAMED = re.compile(r"([A-Za-z][\w-]*)\s*(?:=|is|of)\s*$")


def fixed_setting(verified: str, context: Iterable[Mention], query: str, fresh: Iterable[Mention]) -> str | None:
    """A setting the verified question fixed by name ("sigma = 1.0", which no parameter took) given another value."""
    fixed = {}
    for mention in context:
        named = _NAMED.search(verified[: mention.start])
        if mention.kind == "number" and named and len(named.group(1)) > 1:
            fixed[named.group(1).lower()] = mention
    for mention in fresh:
        named = _NAMED.search(query[: mention.start])
        constant = fixed.get(named.group(1).lower()) if named else None
        if mention.kind == "number" and constant is not None and not same_amount(constant, mention):
            said = f"{mention.text} {mention.unit}" if mention.unit and mention.unit not in mention.text else mention.text
            return f"the question sets {named.group(1)} to {said}; the skill was verified with {constant.text}, which its code fixes"  # type: ignore[union-attr]
    return None




_TERM = re.compile(
    r"(?P<sign>[-+])?\s*(?:(?P<number>\d+(?:\.\d+)?)\s*\*?\s*|(?P<symbol>\([^()]*\)\s*/\s*\w+|\w+\s*/\s*\w+)\s*\*?\s*)?"
    r"(?P<term>[EGHF](?:_\w+)?\s*\([^()]*\)|[EGHF]_\w+)"
)


def _shapes(text: str) -> list[tuple[str, str]]:
    """Each equation of energies a text writes, as written and by its shape: the signed terms, coefficients that are numbers
    dropped and a run of added terms as one ("E(C atom) + 4*E(H atom) - E(CH4)" and "2*E(N atom) - E(N2)" are both +T-T,
    the atoms' energies less the molecule's; "E(N-1) - (N-1)/N E(N)" is +T-cT)."""
    runs: list[list[re.Match[str]]] = []
    for term in _TERM.finditer(text):
        joined = runs and term.group("sign") and not text[runs[-1][-1].end() : term.start()].strip()
        if joined:
            runs[-1].append(term)
        else:
            runs.append([term])
    found = []
    for terms in (r for r in runs if len(r) > 1):
        shape = ""
        for term in terms:
            token = (term.group("sign") or "+") + ("c" if term.group("symbol") else "") + ("T" if "(" in term.group("term") else "B")
            if not (shape.endswith("+T") and token == "+T"):
                shape += token
        found.append((text[terms[0].start() : terms[-1].end()].strip(), shape))
    return list(dict.fromkeys(found))


def own_formula(verified: Sequence[str], query: str) -> str | None:
    """An equation the question writes for what to compute ("E_f = E(N-1) + E_atom - E(N)") of another shape than any a
    verified question wrote: the skill computes its own, which may not be that one."""
    said = {shape for text in verified for _, shape in _shapes(text)}
    for equation, shape in _shapes(query):
        if shape not in said:
            return f"the question writes its own formula ({equation}), which this skill was not verified to follow"
    return None
