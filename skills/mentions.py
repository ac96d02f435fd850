"""The problem-defining values a question states: numbers, formulas, element symbols, SMILES and chemical names.

Numbers that belong to the answer's format or unit ("4 decimal places", "(unit: g/cm^3)",
"as an integer") are not values of the problem and are left out; so are unit words after a
number ("300 K" is a temperature, not potassium).

>>> [(m.kind, m.text) for m in find_mentions("Relax N2 to fmax=0.01 eV/Å (unit: eV). Return a float rounded to 4 decimal places.")]
[('formula', 'N2'), ('number', '0.01')]
>>> [(m.kind, m.formula) for m in find_mentions("the atomization energy of a nitrogen molecule")]
[('name', 'N2')]
>>> [(m.kind, m.text, m.unit) for m in find_mentions("NaCl at 300 K with SMILES CCO")]
[('formula', 'NaCl', None), ('number', '300', 'K'), ('smiles', 'CCO', None)]
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, replace
from typing import Literal

from skills.chemistry import WORD_LIKE_SYMBOLS, canonical_smiles, element_symbol, homonuclear, is_element, is_formula, resolve_name
from skills.units import converted, is_unit, same_unit, unit_spans

__all__ = ["NUMBER_WORDS", 
    "GENERIC_WORDS", "Mention", "chemical_words", "find_mentions", "format_spans", "words_before", "words_after", "content_words", "question_words", "stem",
    "topic_words", "same_amount",
]  # fmt: skip

Kind = Literal["number", "formula", "smiles", "name"]

_FORMAT = [
    r"\(\s*units?\s*:[^)]*\)",
    r"(?<!formula )\bunits?\s*:\s*\S+",  # "per formula unit: Mg -1.60" is a basis, not the answer's unit
    r"\b(?:rounded|round(?:ed)?\s+off)?\s*(?:to\s+)?\d+\s*(?:decimal\s+places?|decimals?|d\.?p\.?|significant\s+(?:figures|digits)|sig\.?\s*figs?|digits?)\b",
    r"\bto\s+\d+\s+places\b",
    r"\bround(?:ed)?\s+(?:off\s+)?to\s+(?:the\s+nearest\s+)?0\.0*1\b",  # "round to 0.001": three decimals
    r"\bbetween\s+0(?:\.0)?\s+and\s+1(?:\.0)?\b",
    # "a float in [0, 1]", "a weight fraction (0 to 1)": the answer's range, never "path lengths in [0, 1]"
    r"\b(?:float|fraction|number|value)\s+(?:in\s+(?:the\s+range\s+)?)?[\[(]\s*0(?:\.0)?\s*(?:,|to|-|–)\s*1(?:\.0)?\s*[\])]",
    # "— pymatgen Composition, 0–1, 4 decimals": a terse answer format, the range alone between commas
    r"(?<=,)\s*0(?:\.0)?\s*(?:–|-|to)\s*1(?:\.0)?(?=\s*,)",
    r"\b(?:float|fraction|number|value)\s+0(?:\.0)?\s*(?:\.\.|–|-)\s*1(?:\.0)?\b",  # "float 0..1 4 dp"
    r"\^\s*[-+]?\d+",
    r"\b(?:cm|m|Å|A|nm|bohr)\d\b",
    # How close the answer must be, not a value of the problem: "(±5% is fine)", "a tolerance of ±2 %".
    r"(?:±|\+/-|\+-)\s?\d+(?:\.\d+)?\s?%\s*(?:is\s+)?(?:fine|ok(?:ay)?|acceptable|good\s+enough)\b",
    r"\btolerance\s+(?:of\s+)?(?:±|\+/-|\+-)?\s?\d+(?:\.\d+)?\s?%",
]
_UNITS = frozenset(
    "eV meV eV/atom meV/atom eV/Å eV/A eV/Å^3 K °C C GPa MPa Pa bar atm Å A nm pm bohr Å^3 Å3 g/cm^3 g/cm3 g/mol amu kJ/mol "
    "kcal/mol Ha Hartree % fs ps ns s Debye degrees deg ° T angstrom angstroms Angstrom Angstroms Ångström ångström Ångströms ångströms "
    "electronvolt electronvolts kelvin gigapascal gigapascals nanometre nanometres nanometer nanometers picometre picometres".split()
)
# Counted things: "a 5-layer slab", "an 8-atom cell", "five layers" (a number word counts only before one of them).
_COUNTED = r"-(atom|fold|layer|site|cell|image|point|pt|step)s?"
_COUNTED_NAMES = {"pt": "point"}
_PER_LENGTH = re.compile(r"\s*(\S+)?\s+per\s+(angstroms?|ångströms?|Å|atoms?)\b", re.IGNORECASE)
_PER_UNITS = {"angstrom": "Å", "ångström": "Å", "å": "Å", "atom": "atom"}  # "11 pts"
NUMBER_WORDS = "one two three four five six seven eight nine ten eleven twelve".split()
_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_PLUS_MINUS = re.compile(r"(?:±|\+/-|\+-)\s?(\d+(?:\.\d+)?)\s?%")
_NUMBER = re.compile(r"[-+\u2212]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_SUPERCELL = re.compile(r"(\d+)\s*[x×]\s*(\d+)\s*[x×]\s*(\d+)")
_SMILES_CALL = re.compile(r"[=#\[\]@]|[a-z]\d")
_SMILES_ONLY = re.compile(r"[a-z=#()\[\]@/\\+]|\d")
_STRIP = "'\"`,;:!?[]{}"
_CHEMICAL_SUFFIX = re.compile(r"(?:ine|ol|ene|ane|yne|ide|ate|ite|one|in|ose|ium|ole|al|yl)$")
_TRIVIAL_NAMES = frozenset(
    "water ammonia alumina urea rutile quartz diamond graphite silica titania zirconia magnesia ceria corundum calcite "
    "magnetite hematite perovskite methane".split()
)
# Words that the chemical name database reads as a substance but that questions use as ordinary words.
_NOT_NAMES = frozenset(
    "crystal salt lime soda alcohol acid base gas air oil glass sugar oxide chloride spirit ice fuel powder solid liquid water "
    "metal alloy ion ions atom atoms molecule bond energy charge mass".split()
)
# Names of structure types, not of the substance a question asks about ("KCl in the rock salt structure", "GaAs, zinc blende").
_PROTOTYPES = frozenset({"rock salt", "rocksalt", "zinc blende", "zincblende", "zinc-blende"})
_GENERIC = frozenset(
    "a an and are as at be by for from has have how in into is it its of on or that the this to was what which with using use "
    "return give rounded round decimal decimals places place float integer int string list value values unit units please "
    "calculate compute determine find get obtain report tell estimate evaluate show me us i we you need want would like can "
    "could do does result answer number python code script package library first then after before positive negative "
    "boolean true false whether if bool str exactly approximately about only just also given following here there "
    "their each per".split()
)
# Words a reworded question adds without changing what is computed: asking, supposing, describing the input.
_PARAPHRASE = frozenset(
    "suppose assume assuming consider imagine let say take whose which much many how what question asked asking ask "
    "large small larger smaller big tiny new now still instead again other another same different such "
    "crystallises crystallizes crystallise crystallize crystallised crystallized adopts adopt forms form has having "
    "material compound substance sample system species molecule molecular crystal structure structured cell unit "
    "parameter parameters constant constants lattice value values quantity number count counts counted "
    "expanded expand compressed strained enlarged stretched shrunk increased decreased raised lowered changed set "
    "hypothetical experimental reported known measured literature typical room standard tabulated listed published "
    "according via through within inside where when while made built build builds constructed construct model modelled "
    "modeled described describe given give gives yields yield find finds found predicted predict predicts "
    "sit sits lie lies occupy occupies lowers raise raises better worse good calculation calculations computed computing "
    "obtained using used uses result results outcome answer answers value".split()
)


GENERIC_WORDS = _GENERIC | _PARAPHRASE
"""Words of a question that never say what is computed (question words, format words, ways to reword)."""


@dataclass(frozen=True)
class Mention:
    """One stated value: ``text`` as written at ``start`` in the question, and what it means."""

    text: str
    start: int
    kind: Kind
    number: float | None = None
    unit: str | None = None
    formula: str | None = None
    element: str | None = None
    smiles: str | None = None
    counted: str | None = None  # what a number counts: "layer" for "5-layer", "5 layers" and "five layers"
    part: bool = False  # an element named as a part of a substance: "two oxygen atoms", the Mg and O of "the Mg-O system"
    plus_minus: bool = False  # "±5 %": a spread of ``number`` per cent either side

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def same_amount(a: Mention, b: Mention) -> bool:
    """Whether two numbers state the same amount: the same number, or the same length in two units (1.0 Å is 0.1 nm, not 1.0 nm);
    a number without a unit is taken in the other's."""
    if a.number is None or b.number is None:
        return a.number == b.number
    if a.unit and b.unit and not same_unit(a.unit, b.unit):
        in_b = converted(a.number, a.unit, b.unit)
        return in_b is not None and abs(in_b - b.number) <= 1e-9 * max(1.0, abs(b.number))
    return a.number == b.number


def format_spans(text: str) -> list[tuple[int, int]]:
    """Where the question speaks of the answer's format or unit (numbers there are not problem values)."""
    return [m.span() for pattern in _FORMAT for m in re.finditer(pattern, text, re.IGNORECASE)]


_COUNT_VARIABLE = re.compile(r"(?<![A-Za-z])([A-Z])\s?[-−+]\s?1\b")  # the N of "N-1": a count in a formula, not nitrogen


def _written_whole(token: str) -> bool:
    """Whether a token with brackets is a formula (``Ca3(PO4)2``) or a SMILES (``CC(C)O``) rather than a call (``E(V)``)."""
    return is_formula(token) or (re.fullmatch(r"[A-Z][A-Za-z0-9()=#@+\-\[\]]*", token) is not None and canonical_smiles(token) is not None)


def _balanced(token: str) -> str:
    """``token`` without the closing brackets it does not open (a bracket around it closed after it)."""
    while token.endswith(")") and token.count(")") > token.count("("):
        token = token[:-1]
    return token


def _tokens(text: str) -> list[tuple[int, str]]:
    """(position, token) pairs: words with outer punctuation stripped, ``name=value`` split at ``=``; a formula written
    with a count variable ("E(N-1) - (N-1)/N E(N)") states no value."""
    variables = set(_COUNT_VARIABLE.findall(text))
    found = []
    pieces = [
        (m.start() + part.start(), part.group())
        for m in re.finditer(r"(?:[^\s'\"….]|(?<!\.)\.(?!\.))+", text)  # an ellipsis ("4.0…4.2", "4.0...4.2") parts two tokens
        for part in re.finditer(r"(?:^|(?<=,))(?:[^,]|,(?![A-Za-z_]\w*=))+", m.group())  # "a=3.615,cubic=True)": two arguments
    ]
    for start, token in pieces:
        standalone = set(re.findall(r"(?<![A-Za-z])[A-Z](?![a-z(_])", token))
        if standalone and standalone <= variables and re.search(r"[-−+*/()]", token) and not re.search(r"[a-z]{2}", token):
            continue
        call = re.fullmatch(r"([A-Za-z_][\w.]*)\((.*?)\)?[.,;]?", token)
        if call and _written_whole(_balanced(token.rstrip(".,;:!?"))):
            call = None  # Ca3(PO4)2, CC(C)O, "(SMILES OCC1OC(O)C1O)": a formula or a SMILES, not a call
        if call and re.fullmatch(r"[A-Za-z_]\w*\s*=\s*[-+]?\d[\w.+-]*,?", call.group(2) or ""):
            token, start, call = call.group(2).rstrip(","), start + call.start(2), None  # LennardJones(sigma=3.4, → sigma=3.4
        if call and re.fullmatch(r"[A-Za-z]", call.group(1)) and re.fullmatch(r"[VTPa-z]", call.group(2)):
            continue  # a function of a variable, "E(V)", "G(T)": no value stated
        if call and call.group(2) and (not _SMILES_CALL.search(call.group(2)) or is_formula(call.group(2).strip(",)"))):  # E(Li2S)
            found += [(start, call.group(1)), (start + call.start(2), call.group(2).strip(",)"))]
            continue
        span = _span(token)
        if span:
            found += [(start, span.group(1)), (start + span.start(2), span.group(2))]
            continue
        inner = token.rstrip(".,;:!?")[1:-1]
        if len(token) > 2 and token[0] == "(" and token.rstrip(".,;:!?")[-1:] == ")" and (is_formula(inner) or canonical_smiles(inner)):
            token, start = inner, start + 1  # "(CaCO3)", "(Ge)", "(CCO)"
        while token and (token[0] in _STRIP or (token[0] == "(" and token.count("(") > token.count(")"))):
            token, start = token[1:], start + 1
        while token and (token[-1] in _STRIP + "." or (token[-1] == ")" and token.count(")") > token.count("("))):
            token = token[:-1]
        if token.endswith("'s"):
            token = token[:-2]
        parts = token.split("-")
        if len(parts) > 1 and all(is_element(part) for part in parts):  # "Si-Si", "Mg-O": elements, each a value of its own
            offsets = itertools.accumulate([0, *(len(part) + 1 for part in parts[:-1])])
            found += [(start + offset, part) for offset, part in zip(offsets, parts, strict=True)]
            continue
        assignment = re.fullmatch(r"([A-Za-z_][\w.]*)\s*=\s*(\S+)", token)
        if assignment and (span := _span(assignment.group(2))):  # "a=3.42-3.62Å"
            at = start + assignment.start(2)
            found += [(start, assignment.group(1)), (at, span.group(1)), (at + span.start(2), span.group(2))]
        elif assignment and _NUMBER.match(assignment.group(2)):
            found += [(start, assignment.group(1)), (start + assignment.start(2), assignment.group(2))]
        elif token:
            found.append((start, token))
    return found


def _span(token: str) -> re.Match[str] | None:
    """A range written as one token ("3.42-3.62", "3.42–3.62Å"), its unit after the second number; else None."""
    span = re.fullmatch(r"([-+]?\d+(?:\.\d+)?)[-–]([-+]?\d+(?:\.\d+)?(?P<unit>[^\d\s]*))", token.rstrip(".,;:!?"))
    return span if span and (not span["unit"] or _unit(span["unit"])) else None


def _unit(token: str | None) -> bool:
    """Whether a token is a unit: one of the symbols, or a composite (``g/cm^3``, ``Å^2``) never taken for a word."""
    return token is not None and (token in _UNITS or (is_unit(token) and re.search(r"[/^²³·]", token) is not None))


def _number(token: str, start: int, following: str | None) -> Mention | None:
    cubic = _SUPERCELL.fullmatch(token)
    if cubic and len(set(cubic.groups())) == 1:
        return Mention(token, start, "number", number=float(cubic.group(1)))
    counted = re.fullmatch(_COUNTED.removeprefix("-"), (following or "").lower())
    word = re.fullmatch(rf"({'|'.join(NUMBER_WORDS)})({_COUNTED})?", token.lower())
    if word and (word.group(2) or counted):
        noun = (word.group(2) or "") or (counted.group(1) if counted else "")
        number = float(NUMBER_WORDS.index(word.group(1)) + 1)
        noun = noun.strip("-").removesuffix("s")
        return Mention(token, start, "number", number=number, unit=word.group(2), counted=_COUNTED_NAMES.get(noun, noun) or None)
    m = _NUMBER.match(token)
    if not m:
        return None
    rest = token[m.end() :]
    suffix = re.fullmatch(_COUNTED, rest)
    if rest and not _unit(rest) and not suffix:
        return None
    unit = rest or (following if _unit(following) else None)
    noun = suffix.group(1) if suffix else counted.group(1) if counted and not rest else None
    noun = _COUNTED_NAMES.get(noun, noun) if noun else None
    return Mention(token, start, "number", number=float(m.group().replace("\u2212", "-")), unit=unit, counted=noun)


_HYDRATE = re.compile(r"(?P<salt>[A-Z][A-Za-z0-9()]*)[·•∙*](?P<count>\d*)(?P<water>[A-Z][A-Za-z0-9]*)")


def _chemical(token: str, start: int, previous: list[str]) -> Mention | None:
    said_smiles = any(w.lower().startswith("smiles") for w in previous[-3:])
    hydrate = _HYDRATE.fullmatch(token)
    if hydrate and is_formula(hydrate["salt"]) and is_formula(hydrate["water"]):  # CuSO4·5H2O is CuSO4(H2O)5
        return Mention(token, start, "formula", formula=f"{hydrate['salt']}({hydrate['water']}){hydrate['count']}")
    ring = re.search(r"(?<=[A-Za-z])1(?![\d.])", token) is not None and canonical_smiles(token) is not None  # C1COCCN1
    if is_formula(token) and not said_smiles and not ring:
        return Mention(token, start, "formula", formula=token, element=token if is_element(token) else None)
    chain = ring or (len(token) >= 3 and re.fullmatch(r"[CNOS]+", token) is not None and "C" in token)  # CCO, CCCCCC
    if (said_smiles or chain or _SMILES_ONLY.search(token)) and set(re.findall(r"[a-z]", re.sub(r"\[[^\]]*\]|Cl|Br", "", token))) <= set("bcnops"):
        smiles = canonical_smiles(token)
        if smiles:
            return Mention(token, start, "smiles", smiles=smiles, formula=token if is_formula(token) and not ring else None)
    return None


_PHASE_LABEL = re.compile(r"(?:\b(?:alpha|beta|gamma|delta|theta|kappa)|[αβγδθκ])[\s-]*$", re.IGNORECASE)


def _names(text: str, taken: list[tuple[int, int]]) -> list[Mention]:
    """Chemical names: the longest run of up to three lowercase words the name database knows, locants and all
    ("4-hydroxy-3-methoxybenzaldehyde")."""
    locant = r"\d+(?:,\d+)*'?-"
    words = [
        (m.start(), m.group())
        for m in re.finditer(rf"(?<![\w,'])(?:{locant})?(?:[a-z]{{2,}}|[A-Z][a-z]{{3,}})(?:-(?:{locant})?[a-z]+)*\b(?![(-]|'(?!s\b))", text)
    ]
    found: list[Mention] = []
    i = 0
    while i < len(words):
        for n in (3, 2, 1):
            chunk = words[i : i + n]
            if len(chunk) < n:
                continue
            start, end = chunk[0][0], chunk[-1][0] + len(chunk[-1][1])
            phrase = text[start:end]
            if "\n" in phrase or any(s < end and start < e for s, e in taken):
                continue
            lowered = [w.lower() for _, w in chunk]
            if " ".join(lowered) in _PROTOTYPES:
                break
            if _PHASE_LABEL.search(text[:start]):  # "β-alumina" is NaAl11O17, "beta quartz" a phase: no name of one formula
                break
            if lowered[0] in _GENERIC or lowered[-1] in _GENERIC or (n == 1 and not _single_name(lowered[0])):
                continue
            named = resolve_name(phrase)
            if named is not None:
                found.append(Mention(phrase, start, "name", formula=named.formula, element=named.element, smiles=named.smiles))
                i += n - 1
                break
        i += 1
    return found


def _single_name(word: str) -> bool:
    """A one-word name counts when it is an element, a common trivial name, or shaped like a chemical name."""
    if word in _NOT_NAMES or (len(word) < 4 and element_symbol(word) is None):  # "tin" is an element's name
        return False
    named = resolve_name(word)
    if named is None:
        return False
    return (
        named.element is not None or word in _TRIVIAL_NAMES or named.name == word or bool(_CHEMICAL_SUFFIX.search(word)) or homonuclear(word) == named.formula
        or re.match(r"\d", word) is not None  # a systematic name with locants: "4-hydroxy-3-methoxybenzaldehyde"
    )


def chemical_words(text: str) -> str:
    """The formulas and element symbols of the substances ``text`` names ("potassium permanganate" → ``KMnO4``): what a
    question and a skill share however each writes its substances, for retrieval."""
    return " ".join(dict.fromkeys(m.formula or m.element or "" for m in find_mentions(text) if m.kind == "name"))


def find_mentions(text: str) -> list[Mention]:
    """The question's problem values in the order written (format and unit numbers left out)."""
    text = text.translate(_SUBSCRIPTS)  # KMnO₄ is KMnO4 (one character for one: positions stay)
    text = re.sub(r"\boctanol/water\b", "octanol-water", text, flags=re.IGNORECASE)  # the partition's name, no two substances
    skip = format_spans(text)
    spreads = (m for m in _PLUS_MINUS.finditer(text) if not any(s <= m.start() < e for s, e in skip))
    found = [Mention(m.group(), m.start(), "number", number=float(m.group(1)), unit="%", plus_minus=True) for m in spreads]
    taken = skip + [(m.start, m.end) for m in found]
    tokens = _tokens(text)
    previous: list[str] = []
    after_number = False
    for index, (start, token) in enumerate(tokens):
        if any(s <= start < e for s, e in taken):
            previous.append(token)
            continue
        following = tokens[index + 1][1] if index + 1 < len(tokens) else None
        if following is not None and not re.fullmatch(r"[\s-]*", text[start + len(token) : tokens[index + 1][0]]):
            following = None  # "rc=10.2), atoms start": the 10.2 counts no atoms across a bracket or a comma
        mention = _number(token, start, following)
        if mention is not None and mention.unit and (per := _PER_LENGTH.match(text, start + len(token))):
            if per.group(1) is None or per.group(1) == mention.unit:  # "0.01 eV per angstrom" is 0.01 eV/Å
                mention = replace(mention, unit=f"{mention.unit}/{_PER_UNITS.get(per.group(2).lower().rstrip('s'), per.group(2))}")
        if mention is not None and re.match(r"\s*[*×·]?\s*E\(", text[start + len(token) :]):
            mention = None  # the 2 of "2 E(H) + E(O) - E(H2O)": a count of atoms in how the answer is formed, no value
        symbol = _quantity_symbol(token, tokens[index + 1 : index + 3]) and not re.search(r"\b(?:of|for|with)\s+$", text[:start])
        if mention is None and not (after_number and _unit(token)) and not symbol:
            mention = _chemical(token, start, previous)
        if mention is None and token in WORD_LIKE_SYMBOLS and len(token) == 2 and re.search(r"[^\s.!?:]\s*$", text[:start]):
            mention = Mention(token, start, "formula", formula=token, element=token)  # "between Ga and As": mid-sentence, a symbol
        if mention is not None:
            found.append(mention)
        after_number = mention is not None and mention.kind == "number"
        previous.append(token)
    found += _names(text, [(m.start, m.end) for m in found] + skip)
    value = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
    for keyword in re.finditer(rf"(?<![\w.])[A-Za-z_]\w*\s*=\s*(?P<v>{value})(?:\s*(?P<op>[*/])\s*(?P<w>{value}))?", text):
        if not any(m.start <= keyword.start("v") < m.end for m in found) and not any(s <= keyword.start("v") < e for s, e in skip):
            # a keyword argument written in code the tokens missed ("BFGS(dimer).run(steps=3).", "rc=1.2*2.0"): a value all the same
            number = float(keyword["v"])
            if keyword["op"]:
                number = number * float(keyword["w"]) if keyword["op"] == "*" else number / float(keyword["w"] or "nan")
            found.append(Mention(text[keyword.start("v") : keyword.end()], keyword.start("v"), "number", number=number))
    for multiple in re.finditer(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([σε])(?!\w)", text):  # "1.2σ": a multiple of sigma, stated
        if not any(m.start <= multiple.start(1) < m.end for m in found):
            found.append(Mention(multiple.group(), multiple.start(1), "number", number=float(multiple.group(1)), unit=multiple.group(2)))
    return sorted((_as_part(m, text) for m in found), key=lambda m: m.start)


def _quantity_symbol(token: str, following: list[tuple[int, str]]) -> bool:
    """Whether a one-letter element symbol is a quantity's symbol, given in a unit: "B in GPa", "V in Å^3", "E (eV)"."""
    if len(token) != 1 or not is_element(token) or not following:
        return False
    words = [w.strip("()[],;:.") for _, w in following]
    return (words[0] == "in" and len(words) > 1 and _unit(words[1])) or (following[0][1][:1] in "([" and _unit(words[0]))


def _as_part(mention: Mention, text: str) -> Mention:
    """An element named as a part of a substance: joined to another by a hyphen ("Mg-O", "Si-Si"), or its atoms ("two O atoms")."""
    if mention.element is None or mention.kind == "smiles":
        return mention
    joined = text[mention.end : mention.end + 1] == "-" or text[mention.start - 1 : mention.start] == "-"
    atoms = re.match(r"\s+(?:atom|ion)s?\b", text[mention.end :], re.IGNORECASE) is not None
    return replace(mention, part=True) if joined or atoms else mention


def words_before(text: str, position: int, count: int = 5) -> list[str]:
    """The ``count`` words just before ``position``, lowercased and stemmed."""
    return [stem(w) for w in re.findall(r"[A-Za-z][A-Za-z_]*", text[:position])[-count:]]


def words_after(text: str, position: int, count: int = 2) -> list[str]:
    """The ``count`` words just after ``position`` (unit words skipped), lowercased and stemmed."""
    found = [w for w in re.findall(r"[A-Za-zÅ][A-Za-z_]*", text[position:]) if w not in _UNITS]
    return [stem(w) for w in found[:count]]


_IRREGULAR_PLURALS = {
    "criteria": "criterion", "radii": "radius", "indices": "index", "matrices": "matrix", "vertices": "vertex", "formulae": "formula",
    "nuclei": "nucleus", "phenomena": "phenomenon", "spectra": "spectrum", "maxima": "maximum", "minima": "minimum",
}  # fmt: skip


def stem(word: str) -> str:
    """A light stem so that 'relaxing', 'relaxed' and 'relaxation' meet; 'energies' and 'energy' too."""
    word = word.lower().removesuffix("'s")
    word = _IRREGULAR_PLURALS.get(word, word)  # "criteria" meets "criterion"
    for suffix, repl in (("ies", "y"), ("ations", ""), ("ation", ""), ("ings", ""), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= (5 if "ation" in suffix else 4):  # "formation" is not "form"
            return word[: -len(suffix)] + repl
    return word


def content_words(text: str, mentions: list[Mention] | None = None) -> set[str]:
    """The question's own words (stemmed), less format phrases, generic question words and its stated values."""
    spans = format_spans(text) + [(m.start, m.end) for m in (mentions if mentions is not None else find_mentions(text))]
    kept = []
    for m in re.finditer(r"[A-Za-z][A-Za-z']*", text):
        if any(s <= m.start() < e for s, e in spans):
            continue
        for part in [m.group()]:
            word = part.lower().removesuffix("'s")
            if len(word) > 1 and word not in _GENERIC and word not in _PARAPHRASE:
                kept.append(stem(word))
    return set(kept) - _GENERIC - {stem(w) for w in _PARAPHRASE}


_NEGATIONS = frozenset("no not without non never nor nothing except excluding".split())
_PREPOSITIONS = frozenset("of for in on at to from by into onto".split())  # "no relaxation of atoms": the negation ends at "of"
_NEGATING_PAIRS = frozenset({("rather", "than"), ("other", "than"), ("instead", "of")})


_GROUP_SYMBOL = re.compile(r"(?<![\w-])[PIFCRAB][a-z0-9_/-]{1,10}(?![\w/-])")
"""What may be a Hermann–Mauguin space-group symbol as written ("Fm-3m", "P6_3/mmc", "P4_2/mnm", "R-3c")."""


@functools.lru_cache(maxsize=1024)
def _is_group_symbol(token: str) -> bool:
    """Whether pymatgen reads ``token`` (with a digit in it: "Pm", "Fe" are none) as a space group's symbol."""
    if not re.search(r"\d", token):
        return False
    from pymatgen.symmetry.groups import SpaceGroup

    try:
        SpaceGroup(token)
    except ValueError:
        return False
    return True


def group_symbol_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` writes a space group by its Hermann–Mauguin symbol."""
    return [m.span() for m in _GROUP_SYMBOL.finditer(text) if _is_group_symbol(m.group())]


def _plain_letters(text: str) -> str:
    """``text`` with each accented letter as its plain one ("wüstite" → "wustite", "Å" → "A"), one character for one."""
    import unicodedata

    return "".join(unicodedata.normalize("NFKD", c)[0] if unicodedata.normalize("NFKD", c)[0].isascii() else c for c in text)


def question_words(text: str, mentions: list[Mention] | None = None) -> list[tuple[str, str, bool]]:
    """The question's own words as written (lowercase), less its values, format, units and generic words: what a skill must
    explain (``skills/terms.py``: ordinary words or technical). Each comes with the word just before it ("" after
    punctuation) and whether a negation stands within three words before it ("no relaxation", "not the cohesive energy")."""
    found = mentions if mentions is not None else find_mentions(text)
    spans = format_spans(text) + [(m.start, m.end) for m in found] + [(s, e) for s, e, _ in unit_spans(text)]
    spans += group_symbol_spans(text)  # "P4_2/mnm" is a symbol, not the word "mnm"
    text = _plain_letters(text)  # "wüstite" is one word (the same length: spans keep their places)
    words: list[tuple[str, str, bool]] = []
    previous, end, negation = "", -1, 0
    for m in re.finditer(r"[A-Za-z][A-Za-z']*", text):
        word = m.group().lower().removesuffix("'s").strip("'")
        joined = re.fullmatch(r"[\s_-]+", text[end : m.start()]) is not None  # "E_above_hull" is written as one term
        negation = negation - 1 if joined and word not in _PREPOSITIONS else 0  # three words on, within its clause and phrase
        valued = any(s <= m.start() < e for s, e in spans)  # "relax NO with EMT": nitric oxide, no negation
        if len(word) > 1 and word not in GENERIC_WORDS and not valued:
            words.append((word, previous if joined else "", negation > 0))
        if not valued and (word in _NEGATIONS or word.endswith("n't") or (previous, word) in _NEGATING_PAIRS):
            negation = 4
        previous, end = word, m.end()
    return words


def topic_words(text: str) -> list[str]:
    """The question's content words in order, each once, as written (lowercase): what it asks, not about what."""
    mentions = find_mentions(text)
    spans = format_spans(text) + [(m.start, m.end) for m in mentions]
    words = []
    for m in re.finditer(r"[A-Za-z][A-Za-z]+", text):
        word = m.group().lower()
        if word not in _GENERIC and not any(s <= m.start() < e for s, e in spans):
            words.append(word)
    return list(dict.fromkeys(words))
