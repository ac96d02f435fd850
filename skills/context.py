"""Words of a question that frame it rather than say what to compute: another name of the substance it gives, the asker's purpose.

A skill whose answer follows from a substance alone (a composition or a molecule, no structure) answers a question
whose rare words only name that substance otherwise or tell why it is asked:

- ``substance_names``: a word the name database resolves to the very formula the question gives ("spinel" beside
  MgAl2O4, "periclase" beside MgO), and the words of a short aside right after a formula ("LiFePO4 (the olivine cathode)");
- ``framing_words``: the words of a sentence telling what the asker is doing ("We're triaging statins for oral
  bioavailability.", "I'm filtering a set of antidiabetics.") or of a purpose before the request ("For a fertiliser spec
  sheet I need …"),
  where that text states no value, asks nothing and says nothing of how to compute (no "with", "using", "only", …).

Neither ever covers a word that can change what is computed: a modifier ("average", "exact"), a word shaped like an
adjective ("monoisotopic", "deuterated", "anhydrous"), a capitalised acronym or an abbreviation of the glossary.

>>> sorted(framing_words("We're triaging statins for oral bioavailability. Does X pass? Return true or false.", []))
['bioavailability', 'statins', 'triaging', "we're"]
>>> sorted(framing_words("Our lab reports monoisotopic masses. What is the mass of caffeine?", []))
[]
"""

from __future__ import annotations

import re

from skills.chemistry import resolve_name
from skills.mentions import Mention, stem
from skills.minerals import names_formula, prototype_names
from skills.structures import structure_mentions
from skills.substances import equal_mentions
from skills.terms import GLOSSARY, MODIFIERS, domain_terms, explains, written_acronyms
from skills.units import unit_spans

__all__ = ["ALTERING", "substance_names", "framing_words", "instruction_words", "structure_names", "structural_words", "aside_words", "data_sources"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|approx|cf|fig|eq|ca|no|ref)\.|\b[A-Z]\.)$", re.IGNORECASE)
# The asker's activity: "We're triaging …", "Checking symmetry before …", "Weighing out precursors for …".
_ASKER = re.compile(r"^(?:(?:I'm|I am|We're|We are)\s+(?:\w+ly\s+)?(?P<doing>[\w-]+ing)|(?P<leading>[A-Z][a-z]+ing))\b")
_ACTIVITIES = frozenset(
    "checking comparing preparing writing drafting building compiling collecting reviewing screening "
    "filtering ranking triaging flagging studying planning designing benchmarking validating tabulating teaching revising "
    "assembling cataloguing cataloging sorting weighing setting working looking trying putting analysing analyzing exploring "
    "investigating testing evaluating selecting choosing shortlisting prioritising prioritizing updating curating annotating "
    "searching surveying summarising summarizing organising organizing documenting recording verifying gathering prepping "
    "scoping deciding thinking wondering reading learning going following archiving storing exporting".split()
)
"""What an asker does around a question (a gerund that frames): never what is done to the substance ("Deprotonating the acid
group.", "Straining it along c.", "Hydrating it before weighing out.")."""


def _activity(gerund: str) -> bool:
    """Whether a gerund is an asker's activity ("sanity-checking" is checking)."""
    return gerund.lower().split("-")[-1] in _ACTIVITIES


def data_sources(query: str) -> set[str]:
    """The methods the question says its given energies came from ("Given DFT total energies per formula unit: …", "PBE
    energies"): where values came from, not how the skill computes with them."""
    methods = "|".join(sorted(_OTHER_METHODS))
    given = re.findall(rf"\b(?:given|these|with|using|from)\s+(?:the\s+)?({methods})(?:[\s-]+(?:computed|calculated|total))*\s+energies\b", query, re.I)
    found = {m.lower() for m in given}
    said = [m.lower() for m in re.findall(rf"\b({methods})\b", query, re.I)]
    return {m for m in found if said.count(m) == 1}  # "Given PBE total energies …, the HSE formation energy": HSE is asked


def instruction_words(query: str) -> list[str]:
    """The gerunds that open a sentence of the question, other than an asker's activity ("Deprotonating the acid group.",
    "Doubling the formula."): they say what is done, so the skill must explain them, however ordinary."""
    found = []
    for sentence in _SENTENCE.split(query):
        leading = re.match(r"(?:(?:I'm|I am|We're|We are)\s+(?:\w+ly\s+)?)?([A-Za-z-]+ing)\b", sentence.strip())
        if leading and not _activity(leading.group(1)) and not _says_how(leading.group(1).lower()) and leading.group(1).lower() not in _PREPOSITIONS:
            found.append(leading.group(1).lower())
    return found
_PREPOSITIONS = frozenset("according regarding concerning during notwithstanding".split())
"""Words ending in -ing that are prepositions ("According to ASE's EMT, …"): they do nothing to the question."""
_PURPOSE = re.compile(
    r"^For (?:a|an|my|our|the|this|some)\b(?P<purpose>[^,.?!]{1,80}?),?\s+(?:(?:I|we)(?:\s+|(?='))(?:need|want|would like|'d like)"
    r"|(?:my|our|the)\s+(?:supervisor|advisor|adviser|boss|pi|group|team|reviewer|colleague|referee)s?\s+(?:wants?|needs?|asked\s+for))\b",
    re.IGNORECASE,
)  # fmt: skip
_DESCRIBING = re.compile(r"^(?:[A-Z][\w-]*(?:\s+[\w-]+){0,3}|It|This|These)\s+(?:is|are)\s+(?:a|an|the)\s+(?P<description>[^,;.!?]{3,80})")
"""A sentence that says what the substance is ("Serotonin is a monoamine neurotransmitter."): its description frames."""
_PACKAGES = frozenset("pymatgen rdkit ase spglib".split())
_OTHER_METHODS = frozenset("dft vasp pbe hse b3lyp".split())
"""Methods the asker mentions in framing ("before moving on to DFT", "for a DFT benchmark table"): passed over where the
question names the skill's own method outside its framing (its calculator or package)."""
_HOW = frozenset(
    stem(w)
    for w in (
        "with using use via by per assume consider include exclude ignore only count treat take compute calculate report "
        "method model potential functional basis level theory approximation correction convention instead rather not no "
        "without except add skip drop omit leave remove strip turn apply allow merge keep off out after cutoff threshold limit"
    ).split()
)
"""Words (stemmed) that say how to compute or what to count: a text holding one is no framing, whatever else it says."""
_ADJECTIVE = re.compile(r"(?:ic|ical|al|ive|ous|ed|ary|ar|ly)$")


def _inflections(word: str) -> set[str]:
    """The forms ``word`` (lowercase) may be an inflection of ("adds", "skipped", "counting", "excluding")."""
    forms = {word, stem(word), word.removesuffix("s"), word.removesuffix("ed"), word.removesuffix("ing")}
    return forms | {f[:-1] for f in forms if len(f) > 3 and f[-1] == f[-2]} | {f + "e" for f in forms}  # skipped, adding, excluding


def _says_how(word: str) -> bool:
    """Whether ``word`` (lowercase) is one of ``_HOW`` in any inflection ("adds", "skipped", "counting")."""
    return not _inflections(word).isdisjoint(_HOW)
_QUANTITY_WORDS = frozenset(
    stem(w)
    for w in "mass weight mole molar fraction percent percentage volume density energy charge ratio amount number count content "
    "concentration isotope ion peak spectrum".split()
)
"""Words naming a quantity: a framing text that names one may be asking for another, so they are never passed over."""
_PROPERTY_SHAPED = re.compile(r"^(?:isotop|deuter|triti|enrich|label|electroneg|pauling|hydrate|anhydr)|hydrate$")
"""Words that say which isotopes, hydrate or scale a value is of (deuterium, enriched, dihydrate, electronegativity): never
another name of a formula, whatever the name database resolves them to."""
_SUBSTANCE_SHAPED = re.compile(
    r"(?:hydrate|mer|mers|cycle|cycles|ate|ates|ite|ites|ide|ides|ol|ols|ine|ines|ane|ene|yne|ium|ions?|esters?|salts?|analogues?"
    r"|analogs?|conjugates?|derivatives?|isomers?|tautomers?|forms?)$|" + _PROPERTY_SHAPED.pattern
)
"""Words shaped like a substance or a class of them (dihydrate, dimer, heterocycles, manganate, thiols, hydrogens) or like
a property of what is computed (isotopic, deuterated, electronegativity): never passed over as framing."""


def _frames(word: str, acronyms: set[str], written: str = "", named: bool = False) -> bool:
    """Whether ``word`` of a framing text can be passed over: never a modifier, adjective- or substance-shaped word, acronym,
    abbreviation, a name the name database knows, or a word written like code (``NOCount``)."""
    if word in MODIFIERS or word in acronyms or word in GLOSSARY or _ADJECTIVE.search(word) or _SUBSTANCE_SHAPED.search(word):
        return False
    if stem(word) in _QUANTITY_WORDS:
        return False
    if re.search(r"[a-z][A-Z]|[A-Z]{2,}|\d|_", written):  # NOCount, NHOHCount, use_pauling_test
        return False
    return named or resolve_name(word) is None


ALTERING = frozenset(
    "supercell slab surface film films layer layers monolayer strained doped defect defects melt melts molten liquid liquids "
    "amorphous glass glasses wire wires nanowire nanowires cluster clusters nanocluster nanoclusters nanoparticle nanoparticles "
    "interface interfaces grain grains boundary boundaries vacancy vacancies divacancy divacancies double doubled doubling triple "
    "tripled halve halved".split()
)
"""Ordinary words that make a crystal another thing (a surface, a melt, a defect, a doubled cell): a skill that builds a
crystal must explain them, however common."""
_STRUCTURAL = ALTERING | frozenset(
    "cubic hexagonal tetragonal orthorhombic monoclinic triclinic trigonal rhombohedral structure structures phase phases "
    "polymorph polymorphs type lattice cell".split()
)
"""Words that can say which structure is meant: never framing for a skill that builds one."""


def structure_names(text: str) -> set[str]:
    """The words (lowercase) of ``text`` naming a structure type ("rock salt", "olivine") or a mineral prototype ("cuprite")."""
    words = {w.lower() for m in structure_mentions(text) for w in re.findall(r"[A-Za-z]+", m.text)}
    return words | ({w.lower() for w in re.findall(r"[A-Za-z]+", text)} & prototype_names())


def structural_words(query: str) -> set[str]:
    """The words (lowercase) of ``query`` that can name or change a structure: the structure types it names, crystal
    systems, mineral and prototype names, and the terms of the packages' own vocabulary."""
    found = structure_names(query)
    for word in {w.lower() for w in re.findall(r"[A-Za-z]+", query)}:
        if word in _STRUCTURAL or not domain_terms().isdisjoint({word, stem(word)}):
            found.add(word)
    return found


_NAMING_HOW = frozenset(stem(w) for w in "count compute calculate report".split())
"""How-words that can only name what the skill itself does ("comparing fragment counts across analgesics"): no
disqualification where the skill's vocabulary explains them."""


_LIMITING = frozenset(
    stem(w)
    for w in "only not no without except exclude ignore skip drop omit leave remove strip instead rather off out cutoff threshold limit".split()
)
"""How-words that narrow or change what is counted ("counting only …", "skips heterocycles"): a sentence holding one
frames nothing."""


def _limits(word: str) -> bool:
    """Whether ``word`` is one of ``_LIMITING`` in any inflection ("skips", "excluding", "dropped")."""
    return not _inflections(word).isdisjoint(_LIMITING) or word.endswith("n't")


def _varies(word: str, vocabulary: frozenset[str]) -> bool:
    """Whether ``word`` is another form of what the skill computes that its vocabulary does not explain ("divacancies" of
    a vacancy skill): it says which thing, never frames."""
    if explains(vocabulary, word):
        return False
    stems = {stem(w) for w in vocabulary if len(w) >= 5}
    return any(len(s) >= 5 and s in word for s in stems)


def _naming(word: str) -> bool:
    """Whether ``word`` is one of ``_NAMING_HOW`` in any inflection ("counts", "computing")."""
    return not {stem(word), stem(word.removesuffix("s")), stem(word.removesuffix("ing"))}.isdisjoint(_NAMING_HOW)


def framing_words(query: str, asked: list[Mention], structural: bool = False, vocabulary: frozenset[str] = frozenset()) -> set[str]:
    """The words (lowercase) of the asker's framing sentences and purpose clause, less any that can change what is computed
    (and, for a skill that builds a structure, ``structural``, less any that can name one); a how-word that only names
    what the skill does (its ``vocabulary`` explains it) leaves a sentence framing."""
    acronyms = written_acronyms(query)
    spans: list[tuple[int, str]] = []
    start = 0
    sentences: list[tuple[int, str]] = []
    for piece in _SENTENCE.split(query):
        start = query.index(piece, start)
        if sentences and _ABBREVIATION.search(sentences[-1][1]):  # "e.g. NaCl": one sentence
            sentences[-1] = (sentences[-1][0], query[sentences[-1][0] : start + len(piece)])
        else:
            sentences.append((start, piece))
        start += len(piece)
    for position, sentence in sentences[:-1]:
        asker = _ASKER.match(sentence)
        if asker and "?" not in sentence and _activity(asker.group("doing") or asker.group("leading")):
            spans.append((position, sentence))
    for position, sentence in sentences:
        purpose = _PURPOSE.match(sentence)
        if purpose:
            spans.append((position + purpose.start("purpose"), purpose.group("purpose")))
    for position, sentence in sentences[:-1]:
        described = _DESCRIBING.match(sentence)
        if described and "?" not in sentence:
            spans.append((position + described.start("description"), described.group("description")))
    found: set[str] = set()
    blanked = list(query)
    for position, text in spans:
        blanked[position : position + len(text)] = " " * len(text)
    rest = {w.lower() for w in re.findall(r"[A-Za-z]+", "".join(blanked))}
    own_method = any(w in acronyms and explains(vocabulary, w) and not _says_how(w) for w in rest) or bool(rest & _PACKAGES)
    for position, text in spans:
        written = [w.removesuffix("'s").strip("'") for w in re.findall(r"[A-Za-z][A-Za-z0-9_']*", text)]
        words = [w.lower() for w in written]
        inside = [m for m in asked if position <= m.start < position + len(text)]
        outside = [m for m in asked if m.kind != "number" and m not in inside]
        # A number, or a substance the request does not name again ("I'm studying gold nanoclusters. What is the lattice
        # constant?"): what the sentence states is asked about, not framing.
        holds_value = any(m.kind == "number" or not any(equal_mentions(m, o) for o in outside) for m in inside)
        if holds_value or any(_limits(w) and not _particle(words, i) for i, w in enumerate(words)):
            continue
        # From its first how-word on ("… by aromatic ring count", "… with DFT"), the sentence says how: those words must be
        # explained on their own; the words before it only frame ("We're filtering an antimalarial set").
        how = next(
            (
                i for i, w in enumerate(words)
                if _says_how(w) and not (_naming(w) and explains(vocabulary, w)) and not _a_noun(words, i) and not _particle(words, i)
            ),
            len(words),
        )  # fmt: skip
        found |= {
            w for w, as_written in zip(words[:how], written[:how], strict=True)
            if _frames(w, acronyms, as_written) and not _varies(w, vocabulary)
        }  # fmt: skip
        if own_method and not any(_says_how(w) and not explains(vocabulary, w) and w not in _OTHER_METHODS for w in words):
            found |= {w for w in words if w in _OTHER_METHODS and not explains(vocabulary, w) and w not in rest}  # said only there
    return found - (structural_words(query) - _OTHER_METHODS) if structural else found  # DFT names no structure


_DETERMINERS = frozenset("a an the my our this that lab".split())


def _a_noun(words: list[str], index: int) -> bool:
    """Whether the how-word at ``index`` is a noun after a determiner ("a lab report", "my report"), saying no how."""
    return words[index] in ("report", "reports") and index > 0 and words[index - 1] in _DETERMINERS


def _particle(words: list[str], index: int) -> bool:
    """Whether the how-word at ``index`` is "out" of a verb that says no how ("weighing out", "working out"), not of one that
    does ("leave out", "strip out")."""
    return words[index] == "out" and (index == 0 or not _says_how(words[index - 1]))


def substance_names(query: str, asked: list[Mention]) -> set[str]:
    """Words (lowercase) the name database resolves to a formula the question gives ("spinel" beside MgAl2O4)."""
    formulas = [m.formula for m in asked if m.formula and m.kind in ("formula", "smiles")]
    if not formulas:
        return set()
    acronyms = written_acronyms(query)
    found = set()
    for mention in (m for m in asked if m.kind == "formula" and m.formula):
        aside = re.match(r"\s*\(([A-Za-z][A-Za-z\s-]{0,40})\)", query[mention.end :])  # "LiFePO4 (the olivine cathode)"
        if aside and len(aside.group(1).split()) <= 4:
            written = re.findall(r"[A-Za-z]+", aside.group(1))
            structural = structure_names(aside.group(1))
            if all(
                w.lower() in structural or (_frames(w.lower(), acronyms, w) and not _says_how(w.lower()))
                for w in written
                if w.lower() not in ("the", "a", "an")
            ):  # "the olivine cathode": a structure type's name says nothing of a composition
                found |= {w.lower() for w in written}
    for mention in (m for m in asked if m.kind == "formula" and m.formula):  # "V2O5 (vanadium pentoxide)", "barium titanate (BaTiO3)"
        formula = mention.formula or ""
        after = re.match(r"\s*[(,]\s*([A-Za-z][A-Za-z -]{2,40}?)\s*[),]", query[mention.end :])
        before = re.search(r"\b((?:[A-Za-z][a-z-]+\s+){0,2}[A-Za-z][a-z-]+)\s*[(,]\s*$", query[: mention.start])
        for phrase in (after.group(1) if after else "", before.group(1) if before else ""):
            words = phrase.split()
            for n in range(len(words), 0, -1):  # the longest run of the phrase's last words that names the formula
                if n > 1 and not any(_PROPERTY_SHAPED.search(w.lower()) for w in words[-n:]) and names_formula(" ".join(words[-n:]), formula):
                    found |= {w.lower() for w in words[-n:]}
                    break
    for written in set(re.findall(r"\b[A-Za-z]{4,}\b", query)):
        word = written.lower()
        if word in MODIFIERS or word in acronyms or word in GLOSSARY or stem(word) in _QUANTITY_WORDS or _says_how(word) or _PROPERTY_SHAPED.search(word):
            continue
        if any(names_formula(word, formula) for formula in formulas):  # "cuprite" beside Cu2O, "Periclase (MgO)"
            found.add(word)
    return found


_ASIDE_STOP = frozenset("the a an of in as its it is".split())


def aside_words(query: str, asked: list[Mention]) -> list[tuple[str, str]]:
    """(formula, word) for each word of a parenthesised aside right after a formula ("Fe2O3 (two formula units)"), less
    articles: what the question says of the substance beyond its formula, which the skill must explain or decline."""
    found = []
    taken = [(m.start, m.end) for m in asked if m.kind != "name"] + [(s, e) for s, e, _ in unit_spans(query)]  # a name in it counts
    for mention in (m for m in asked if m.kind in ("formula", "smiles")):
        aside = re.match(r"\s*\)?\s*\(([^()]{1,60})\)", query[mention.end :])
        if aside and not re.search(r"SMILES|\bunits?\s*:", aside.group(1), re.IGNORECASE):
            offset = mention.end + aside.start(1)
            if any(m.kind in ("formula", "smiles") and offset <= m.start < offset + len(aside.group(1)) for m in asked):
                continue  # "O2 (or was it N2?)": another substance, which binding weighs as such
            for word in re.finditer(r"[A-Za-z]+", aside.group(1)):  # its words, less the values and units it states
                position = offset + word.start()
                if word.group().lower() not in _ASIDE_STOP and not any(s <= position < e for s, e in taken) and len(word.group()) > 1:
                    found.append((mention.text, word.group().lower()))
    return found
