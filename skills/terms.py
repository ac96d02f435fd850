"""Ordinary English or a technical term: the words of a question that can change what a skill computes.

A skill answers a question only when it explains every *technical* word of it; ordinary English
("work out", "them", "between", "equally", "two", "I'd") never makes it decline. A word is technical
when

- it is rare in general English (``wordfreq``'s Zipf frequency below ``RARE``, taken over its word
  forms so that "looser" counts as "loose"): jargon and names ("enthalpy", "GPAW", "rotatable", "bcc");
- it is a term of the domain, rarer than ``DOMAIN_RARE``: a word the scientific packages name their
  functions and classes with (RDKit's ``HeavyAtomCount``, pymatgen's ``BirchMurnaghan``, ASE's
  ``Morse``; harvested into ``domain_terms.txt`` by ``python -m skills.terms``), less the words of
  Python's own standard library ("calculate", "verify");
- or it is one of ``MODIFIERS``, common words that change what is computed ("exact mass", "heavy
  atoms", "total energy", "relaxed").

Two common words can name one thing together ("bond length", "point group", "band gap"): the word pairs
of the packages' names (``domain_phrases``) are terms as a pair. What a question asks for
(``asked_quantity``: "the molar *volume*") must be explained however ordinary its words.

A skill explains a word when the word, in one of its forms (stem, spelling, adjective of a noun,
an abbreviation's words), is among the words it was verified on. The frequency list is evidence for
routing a question to a skill, never a source of a value.

>>> is_technical("between"), is_technical("equally"), is_technical("heavy"), is_technical("Morse"), is_technical("looser")
(False, False, True, True, False)
>>> vocabulary = explaining_forms({"emt", "fmax", "relax", "atom"})
>>> [explains(vocabulary, w) for w in ("effective", "maximum", "atomic", "monovacancy", "heavy")]
[True, True, True, False, False]
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from skills.mentions import stem

__all__ = [
    "RARE", "DOMAIN_RARE", "EVERYDAY", "MODIFIERS", "GLOSSARY", "EQUIVALENTS", "asked_quantity", "named_packages", "is_everyday", "is_technical", "written_acronyms", "is_phrase", "forms", "explaining_forms", "explains", "domain_terms", "with_equivalents", "search_words",
    "domain_phrases",
]  # fmt: skip

RARE = 3.0
"""Zipf frequency below which a word is jargon or a name (``enthalpy`` 2.4, ``bcc`` 2.8; ``cohesive`` 3.3 is above)."""
DOMAIN_RARE = 4.0
"""A word the packages name things with is a term of the domain when rarer than this (``morse`` 3.5; ``force`` 5.2 is not)."""

MODIFIERS = frozenset(
    "exact heavy total average mean median net partial relaxed unrelaxed formation equilibrium primitive conventional "
    "reduced normalised normalized weighted strict corrected vibrational adiabatic vertical isotropic anisotropic "
    "harmonic anharmonic enthalpy entropy second third fourth fifth distribution cohesive".split()
)
"""Common words that change what is computed: a skill answers with one only when it was verified on it."""

GLOSSARY = {
    "emt": "effective medium theory",
    "tpsa": "topological polar surface area",
    "fmax": "maximum force convergence criterion",
    "eos": "equation of state",
    "logp": "octanol water partition coefficient",
    "lj": "lennard jones",
    "xrd": "x ray diffraction",
    "mol": "molecule",  # "relax the mol": a word where it is no unit (a unit's "mol" is read as a unit first)
    "bcc": "body centred cubic",
    "fcc": "face centred cubic",
    "hcp": "hexagonal close packed",
    "molwt": "molecular weight",
    "nn": "nearest neighbour",
    "dft": "density functional theory",
    "cif": "crystallographic information file",
    "hbd": "hydrogen bond donor",
    "hba": "hydrogen bond acceptor",
    "sasa": "solvent accessible surface area",
    "neb": "nudged elastic band",
    "ehull": "energy above hull",
    "vdw": "van der waals",
    "ro5": "rule of five",
    "ops": "operations",
    "wt": "weight",
    "mw": "molecular weight",
    "psa": "polar surface area",
    "clogp": "logp",
    "avg": "average",
    "coh": "cohesive",
    "vac": "vacancy",
    "conv": "conventional",
    "prim": "primitive",
    "sym": "symmetry",
    "frac": "fraction",
}
"""Abbreviations and the words they stand for: a skill verified on one explains the other."""
EQUIVALENTS = [
    ("charge neutrality", "charge balance"), ("isolated atom", "free atom"), ("lattice constant", "lattice parameter"),
    ("difference", "gap"), ("distance", "separation"), ("molecular weight", "molecular mass"), ("molar mass", "formula weight"), ("molecular weight", "molar mass"), ("bond length", "nearest neighbour distance"),
    ("h bond", "hydrogen bond"), ("read", "parse"), ("load", "deserialize"), ("store", "serialize"), ("save", "serialize"), ("write", "serialize"),
    ("international symbol", "hermann mauguin symbol"), ("mass fraction", "weight fraction"), ("equilibrium", "relaxed"),
    ("symmetry operations", "space group operations"), ("save", "write"), ("dump", "write"), ("load", "read"), ("shortest distance", "nearest neighbour distance"), ("bond length", "separation"),
]  # fmt: skip
"""Phrases that name one thing: a skill verified on all the words of one explains the words of the other."""

# British and American spellings meet (after lowercasing, before stemming).
_SPELLINGS = [
    (r"centre", "center"), (r"neighbour", "neighbor"), (r"aluminium", "aluminum"), (r"sulph", "sulf"), (r"caesium", "cesium"),
    (r"isation", "ization"), (r"ise([ds]?)$", r"ize\1"), (r"ising$", "izing"), (r"yse([ds]?)$", r"yze\1"), (r"our$", "or"),
]  # fmt: skip
# Derivational endings: "atomic" is about an atom, "neutrality" about being neutral, "strongly" about strong, "canonicalise" about canonical.
_DERIVED = ("ically", "ical", "ities", "ity", "ally", "ness", "ize", "ise", "ic", "al", "ly")


def _spelled(word: str) -> str:
    for pattern, replacement in _SPELLINGS:
        word = re.sub(pattern, replacement, word)
    return word


@cache
def forms(word: str) -> frozenset[str]:
    """The forms a word meets another in: its stem, its American spelling's stem, its root less a derivational ending or ``mono``."""
    word = word.lower().removesuffix("'s")
    found = {word, stem(word), stem(_spelled(word))}
    doubled = re.fullmatch(r"([a-z]*[aeiou])([bdgmnprt])\2(?:ed|ing)", word)
    if doubled:
        found.add(doubled.group(1) + doubled.group(2))  # "fitted", "summed", "scanning": fit, sum, scan
    found |= {w[:-1] for w in (word, _spelled(word)) if w.endswith("e") and len(w) >= 8}  # "serialise" meets "serialised"
    if word.endswith("ing") and len(word) >= 6:
        found |= {stem(word[:-3]), stem(word[:-3] + "e")}  # "saving" meets "save", "reading" meets "read"
    if len(word) == 4 and word.endswith("s"):
        found.add(word[:-1])  # the plural of a short word or acronym: "CIFs"
    for base in list(found):
        for ending in _DERIVED:
            if base.endswith(ending) and len(base) - len(ending) >= 4:
                found.add(stem(base[: -len(ending)]))
                break
    found |= {stem(w[4:]) for w in list(found) if w.startswith("mono") and len(w) > 8}  # a monovacancy is a vacancy
    return frozenset(found)


def with_equivalents(words: Iterable[str], texts: Iterable[str] | None = None) -> set[str]:
    """``words`` (lowercase) with each abbreviation's words, each spelled-out abbreviation and each equivalent phrase's words.

    With the ``texts`` the words come from, a phrase of several words counts as said only where they stand together
    ("composition-weighted … formula" says no "formula weight", so no molar mass)."""
    words = {w.lower() for w in words}
    runs = None if texts is None else [_stems(text) for text in texts]

    def said(phrase: str) -> bool:
        parts = phrase.split()
        if runs is not None and len(parts) > 1:
            return any(_in_order(_stems(phrase), run) for run in runs)
        stems = {stem(w) for w in words}
        return all(part in words or stem(part) in stems or _spelled(part) in words for part in parts)

    def add(phrase: str) -> None:
        words.update(phrase.split())
        if runs is not None:
            runs.append(_stems(phrase))

    for _ in range(2):  # an equivalent may spell out an abbreviation's words ("H-bond donor" is a hydrogen bond donor, an HBD)
        for abbreviation, spelled in GLOSSARY.items():
            if abbreviation in words:
                add(spelled)
            elif said(spelled):
                add(abbreviation)
        for one, other in EQUIVALENTS:
            if said(one):
                add(other)
            elif said(other):
                add(one)
    return words


def _in_order(wanted: list[str], run: list[str], gap: int = 2) -> bool:
    """Whether ``run`` holds the ``wanted`` stems in order, at most ``gap`` other words between two ("international
    space-group symbol" says "international symbol")."""
    for start in (i for i, s in enumerate(run) if s == wanted[0]):
        at = start
        for part in wanted[1:]:
            following = run[at + 1 : at + 2 + gap]
            if part not in following:
                break
            at += 1 + following.index(part)
        else:
            return True
    return False


def _stems(text: str) -> list[str]:
    return [stem(_spelled(w)) for w in re.findall(r"[a-z]+", text.lower())]


def explaining_forms(words: Iterable[str], texts: Iterable[str] | None = None) -> frozenset[str]:
    """Every form of ``words`` (a skill's vocabulary), with each abbreviation's words and each spelled-out abbreviation
    (equivalent phrases of several words where they stand together in ``texts``, when given)."""
    found: set[str] = set()
    for word in with_equivalents(words, texts):
        found |= forms(word)
    return frozenset(found)


def search_words(text: str) -> str:
    """What a question adds to its own words for retrieval: the words of its code names (``CalcTPSA`` → calc TPSA,
    ``oxi_state_guesses`` → oxi state guesses) and of the abbreviations and equivalent phrases of its words ("formula
    weight" → molar mass)."""
    code = [w for w in re.findall(r"[A-Za-z_][\w.]*", text) if re.search(r"[a-z]{2}[A-Z]|[._]", w)]
    spelled = " ".join(re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|[._]+", " ", w) for w in code)
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", f"{text} {spelled}")}
    return " ".join([spelled, *sorted(with_equivalents(words) - words)])


def explains(vocabulary: frozenset[str], word: str) -> bool:
    """Whether a vocabulary (``explaining_forms``) explains ``word``."""
    return not forms(word).isdisjoint(vocabulary)


_ASKING = (
    r"what(?:'s|\s+is|\s+are|\s+was|\s+would\s+be)?|which|how\s+many|how\s+much|how\s+(?:large|big|high|long|far|strong)\s+(?:is|are)"
    r"|compute|calculate|determine|estimate|find|give|report|predict|evaluate|obtain|need|want|work\s+out|count"
)
_QUANTITY = re.compile(
    rf"\b(?:{_ASKING})\s+(?:me\s+|us\s+)?(?:the\s+|an?\s+|its\s+)?(?!to\b)(?P<q>(?:[A-Za-z][\w'-]*\s+){{0,4}}?[A-Za-z][\w-]*)"
    r"(?=\s*\(|\s*[,?.:;]|\s+(?:of|for|in|does|do|is|are|at|with|without|from|between|using|by|according|after|when|if|that|via|on"
    r"|the|an?|comes?|gives?|results?|remains?|survives?|returns?|yields?|has|have|was|were|will|would|can|could|should"
    r"|it|they|we|you|one)\b)",
    re.IGNORECASE,
)


def asked_quantity(text: str) -> list[str]:
    """The words of what the question asks for ("What is the molar volume of …" → ``["molar", "volume"]``), lowercased."""
    match = _QUANTITY.search(text)
    return [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z']*", match.group("q"))] if match else []


def _zipf(word: str) -> float:
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, "en"))


def _lemmas(word: str) -> set[str]:
    """The word and what it is an inflection of ("looser" → "loose", "tabulated" → "tabulate", "pruning" → "prune")."""
    found = {word}
    for ending, replacements in (("est", ("", "e")), ("er", ("", "e")), ("ed", ("", "e")), ("ing", ("", "e")), ("s", ("",)), ("ly", ("",))):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            found |= {word[: -len(ending)] + r for r in replacements}
    return found


DOMAIN_WORDS = frozenset({"hull"})
"""Terms of the domain that are common elsewhere (a ship's hull), so their frequency does not tell: the convex hull is
what the energy above it is measured from."""

EVERYDAY = 5.0
"""Zipf frequency from which a word is everyday English ("round", "sure", "energy"): denying it says little."""


@cache
def is_everyday(word: str) -> bool:
    """Whether ``word`` is among the commonest English words (in any of its inflections)."""
    return max(_zipf(w) for w in _lemmas(word.lower().removesuffix("'s"))) >= EVERYDAY


@cache
def is_technical(word: str) -> bool:
    """Whether ``word`` is a technical term (rare, a term of the domain, or a modifier) rather than ordinary English."""
    word = word.lower().removesuffix("'s")
    if word in MODIFIERS or stem(word) in MODIFIERS or stem(word) in DOMAIN_WORDS:
        return True
    frequency = max(_zipf(w) for w in _lemmas(word))
    if frequency < RARE:
        return True
    return frequency < DOMAIN_RARE and not domain_terms().isdisjoint({word, stem(word), *_lemmas(word)})


_PLAIN_ACRONYMS = frozenset("cpu gpu ram pdf doi url api csv json png svg html txt ascii utf faq usa eu".split())
"""Capitals that name where or how the answer is delivered, never what is computed."""


def written_acronyms(text: str) -> set[str]:
    """The short words ``text`` writes in capitals as a name (lowercase): "MACE", "GAP", "SCAN", "DOS" name a potential,
    a functional, a quantity, whatever the ordinary word means. Not a word written loud for emphasis (the commonest
    words, "NOT", "ONLY"; longer ones, "WARNING", "CAREFULLY"), the computer's and the document's own ("CPU", "PDF"),
    nor any word of a text written all in capitals.

    >>> sorted(written_acronyms("Relax it with the MACE potential, NOT with EMT; only the DOS. WARNING: see the PDF."))
    ['dos', 'emt', 'mace']
    """
    tokens = re.findall(r"\b[A-Za-z][A-Za-z0-9]+\b", text)
    loud = [t for t in tokens if re.fullmatch(r"[A-Z][A-Z0-9]{2,4}", t)]
    if len(loud) * 2 > len(tokens):
        return set()
    return {t.lower() for t in loud if not is_everyday(t) and t.lower() not in _PLAIN_ACRONYMS}


_PACKAGE_PHRASES = (
    (re.compile(r"\b(?:the\s+)?Materials\s+Project'?s?\s+(?:own\s+)?(?:open[-\s]source\s+)?(?:python\s+)?(?:library|package|code|toolkit|software)\b", re.I), "pymatgen"),
    (re.compile(r"\bPython\s+Materials\s+Genomics\b", re.I), "pymatgen"),
)  # fmt: skip
"""A package named by what it is ("the Materials Project's python library"), not by its name; "the Materials Project"
alone is its database, whose values are another source."""


def named_packages(text: str) -> str:
    """``text`` with a package named by what it is written as its name: "the Materials Project's python library" → pymatgen;
    unchanged where it speaks of the Materials Project's database too (an mp- id, its API client)."""
    if re.search(r"\bmp-\d+|\bmp[-_]api\b|MPRester|\bdatabase\b|\bentry\b", text, re.IGNORECASE):
        return text
    for pattern, name in _PACKAGE_PHRASES:
        text = pattern.sub(name, text)
    return text


_TERMS_FILE = Path(__file__).with_name("domain_terms.txt")


@cache
def _harvested() -> frozenset[str]:
    lines = _TERMS_FILE.read_text().splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


@cache
def domain_terms() -> frozenset[str]:
    """The words the scientific packages name their functions and classes with (``domain_terms.txt``)."""
    return frozenset(t for t in _harvested() if " " not in t)


@cache
def domain_phrases() -> frozenset[tuple[str, str]]:
    """Pairs of words (stemmed) that the packages name one thing with: ``("bond", "length")``, ``("point", "group")``."""
    return frozenset((a, b) for a, _, b in (t.partition(" ") for t in [*_harvested(), *WRITTEN_PHRASES] if " " in t))


WRITTEN_PHRASES = ("convex hull", "decomposition energy", "reaction energy")
"""Terms the packages' documentation uses but no name of theirs spells (``PhaseDiagram.get_e_above_hull``'s convex hull)."""


def is_phrase(first: str, second: str) -> bool:
    """Whether two adjacent words of a question name one thing of the domain ("bond length", "heavy atoms", "band gap")."""
    return (stem(first), stem(second)) in domain_phrases()


# -- harvesting domain_terms.txt from the installed packages (python -m skills.terms) -------------------------------------

HARVESTED = ("pymatgen", "ase", "smact", "spglib")
"""Packages whose public functions, classes and methods name the domain's terms (RDKit's are read from its modules)."""


def _identifier_words(name: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|[._\-\d]+", " ", name)
    return [w.lower() for w in spaced.split() if w.isalpha() and len(w) >= 3]


def _defined_names(roots: Iterable[Path], deep: bool) -> list[str]:
    """Public function and class names defined in the Python files under ``roots``: at module level and in classes, or
    everywhere when ``deep``."""
    import ast

    names = []
    for root in roots:
        for file in sorted(root.rglob("*.py")):
            inside = file.relative_to(root).parts
            if any(part.startswith("test") or part in ("site-packages", "idlelib") for part in inside):
                continue
            try:
                tree = ast.parse(file.read_text(errors="ignore"))
            except (SyntaxError, ValueError):
                continue
            nodes = ast.walk(tree) if deep else [n for top in tree.body for n in [top, *getattr(top, "body", [])]]
            names += [n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")]
    return names


def _terms_of(name: str) -> list[str]:
    """The words of a name and its adjacent pairs, stemmed ("HeavyAtomCount" → heavy, atom, count, "heavy atom", "atom count")."""
    words = _identifier_words(name)
    return words + [f"{stem(a)} {stem(b)}" for a, b in itertools.pairwise(words)]


def harvest_domain_terms(minimum: int = 2, below: float = 4.5) -> list[str]:
    """Words and word pairs of the packages' public names, each used at least ``minimum`` times and not the stdlib's; the
    single words rarer than ``below`` (the commoner ones are terms only in a pair: "bond length", "point group")."""
    import importlib
    import sysconfig
    from collections import Counter

    counts: Counter[str] = Counter()
    for package in HARVESTED:
        module = importlib.import_module(package)
        for name in _defined_names([Path(p) for p in module.__path__], deep=False):
            counts.update(_terms_of(name))
    from rdkit.Chem import AllChem, Crippen, Descriptors, Lipinski, rdFreeSASA, rdMolDescriptors

    for module in (Descriptors, rdMolDescriptors, Lipinski, Crippen, AllChem, rdFreeSASA):
        counts.update(term for name in dir(module) if not name.startswith("_") for term in _terms_of(name))
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    programming = {term for name in _defined_names([stdlib], deep=True) for term in _terms_of(name)}
    kept = [t for t, n in counts.items() if n >= minimum and t not in programming]
    return sorted(t for t in kept if " " in t or _zipf(t) < below)


if __name__ == "__main__":
    terms = harvest_domain_terms()
    header = "# Words the scientific packages name their functions and classes with; written by python -m skills.terms.\n"
    _TERMS_FILE.write_text(header + "\n".join(terms) + "\n")
    print(f"{len(terms)} terms written to {_TERMS_FILE}")
