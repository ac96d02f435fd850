"""Words of a question that frame it rather than say what to compute: another name of the substance it gives, the asker's purpose.

A skill whose answer follows from a substance alone (a composition or a molecule, no structure) answers a question
whose rare words only name that substance otherwise or tell why it is asked:

- ``substance_names``: a word the name database resolves to the very formula the question gives ("spinel" beside
  MgAl2O4, "periclase" beside MgO), and the words of a short aside right after a formula ("LiFePO4 (the olivine cathode)");
- ``framing_words``: the words of a sentence of the asker's own ("We're triaging statins for oral bioavailability.",
  "I'm filtering a set of antidiabetics.") or of a purpose before the request ("For a fertiliser spec sheet I need …"),
  where that text states no value, asks nothing and says nothing of how to compute (no "with", "using", "only", …).

Neither ever covers a word that can change what is computed: a modifier ("average", "exact"), a word shaped like an
adjective ("monoisotopic", "deuterated", "anhydrous"), a capitalised acronym or an abbreviation of the glossary.

>>> sorted(framing_words("We're triaging statins for oral bioavailability. Does X pass? Return true or false.", []))
['bioavailability', 'for', 'statins', 'triaging', "we're"]
>>> sorted(framing_words("Our lab reports monoisotopic masses. What is the mass of caffeine?", []))
[]
"""

from __future__ import annotations

import re

from skills.chemistry import resolve_name, same_formula
from skills.mentions import Mention
from skills.terms import GLOSSARY, MODIFIERS, written_acronyms

__all__ = ["substance_names", "framing_words"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|approx|cf|fig|eq|ca|no|ref)\.|\b[A-Z]\.)$", re.IGNORECASE)
_ASKER = re.compile(r"^(?:I|I'm|I am|I've|I'd|We|We're|We are|We've|We'd|Our|My)\b")
_PURPOSE = re.compile(r"^For (?:a|an|my|our|the|this|some)\b(?P<purpose>[^,.?!]{1,80}?),?\s+(?:I|we)\s+(?:need|want|would like|'d like)\b")
_HOW = frozenset(
    "with using use used uses via by per assume assuming consider considering include including exclude excluding ignore "
    "ignoring only count counting treat treating take taking compute computed computing calculate calculated calculating "
    "report reports reported method model potential functional basis level theory approximation correction convention "
    "instead rather not no without except".split()
)
"""Words that say how to compute: a sentence holding one is no framing, whatever else it says."""
_ADJECTIVE = re.compile(r"(?:ic|ical|al|ive|ous|ed|ary|ar)$")


def _frames(word: str, acronyms: set[str]) -> bool:
    """Whether ``word`` of a framing text can be passed over: never a modifier, adjective-shaped word, acronym or abbreviation."""
    return word not in MODIFIERS and word not in acronyms and word not in GLOSSARY and not _ADJECTIVE.search(word)


def framing_words(query: str, asked: list[Mention]) -> set[str]:
    """The words (lowercase) of the asker's framing sentences and purpose clause, less any that can change what is computed."""
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
        if _ASKER.match(sentence) and "?" not in sentence:
            spans.append((position, sentence))
    for position, sentence in sentences:
        purpose = _PURPOSE.match(sentence)
        if purpose:
            spans.append((position + purpose.start("purpose"), purpose.group("purpose")))
    found: set[str] = set()
    for position, text in spans:
        words = [w.lower().removesuffix("'s").strip("'") for w in re.findall(r"[A-Za-z][A-Za-z']*", text)]
        holds_value = any(position <= m.start < position + len(text) for m in asked)
        if holds_value or any(w in _HOW for w in words):
            continue
        found |= {w for w in words if _frames(w, acronyms)}
    return found


def substance_names(query: str, asked: list[Mention]) -> set[str]:
    """Words (lowercase) the name database resolves to a formula the question gives ("spinel" beside MgAl2O4)."""
    formulas = [m.formula for m in asked if m.formula]
    if not formulas:
        return set()
    acronyms = written_acronyms(query)
    found = set()
    for mention in (m for m in asked if m.kind == "formula" and m.formula):
        aside = re.match(r"\s*\(([A-Za-z][A-Za-z\s-]{0,40})\)", query[mention.end :])  # "LiFePO4 (the olivine cathode)"
        if aside and len(aside.group(1).split()) <= 4:
            found |= {w.lower() for w in re.findall(r"[A-Za-z]+", aside.group(1)) if _frames(w.lower(), acronyms) and w.lower() not in _HOW}
    for word in {w.lower() for w in re.findall(r"\b[A-Za-z]{4,}\b", query)}:
        if not _frames(word, acronyms):
            continue
        named = resolve_name(word)
        if named is not None and named.formula and any(same_formula(named.formula, formula) for formula in formulas):
            found.add(word)
    return found
