"""Side remarks a question sets aside itself: "(It was annealed at 500 °C, irrelevant.)", "Its pKa is about 10.4, which
doesn't matter here.", "We measured 1.98 g/cm^3, but I want the crystallographic value."

What such a remark says is not part of what is asked: its numbers are no inputs and its words ask for nothing. A remark
is the smallest piece that holds the dismissal: a part of a bracket or sentence between semicolons. Where the dismissal
names its subject ("temperature plays no role", "the 2.2 μB moment is not an input"), only that clause goes.

>>> without_side_remarks("Density of KCl with pymatgen? (It was annealed at 500 °C, irrelevant.) Float, 4 d.p.")
'Density of KCl with pymatgen? Float, 4 d.p.'
>>> without_side_remarks("What TPSA does RDKit give for glycine (NCC(=O)O)? Our assay ran at 37 °C, ignore that. 2 d.p.")
'What TPSA does RDKit give for glycine (NCC(=O)O)? 2 d.p.'
>>> without_side_remarks("For the diatomics section of our report, what is the EMT atomization energy of NO?")
'what is the EMT atomization energy of NO?'
>>> without_side_remarks("The lab value is 4.44 eV/atom, but I want the EMT value. What is the cohesive energy of Ni?")
'I want the EMT value. What is the cohesive energy of Ni?'
"""

from __future__ import annotations

import re

__all__ = ["without_side_remarks", "split_side_remarks"]

_ANAPHORIC = re.compile(
    r"(?:\b(?:that|this|it|which)(?:'s|\s+is)?\s+)?(?:\birrelevant\b|\bnot\s+relevant\b|\bnot\s+an?\s+input\b)"
    r"|\b(?:ignore|disregard|forget\s+about)\s+(?:that|this|it|them|those|these)\b(?=\s*(?:[,.;:)!]|$|and\b|but\b|I\b|we\b))"
    r"|\bwhich\s+(?:you|we|one)\s+(?:can|may|should)\s+(?:safely\s+)?ignore\b|\b(?:can|may|should)\s+be\s+(?:safely\s+)?ignored\b"
    r"|\bwhich\s+(?:does\s+not|doesn't|do\s+not|don't|should\s+not|shouldn't|won't|will\s+not)\s+(?:matter|count|apply)\b"
    r"|\b(?:that|this|it)(?:'s|\s+is)?\s+(?:just\s+|only\s+)?(?:for\s+(?:context|reference|information)|beside\s+the\s+point)\b",
    re.IGNORECASE,
)
"""A dismissal of what the remark said before it: "…, irrelevant", "…, ignore that", "…, which doesn't matter here"."""

_NAMED = re.compile(
    r"\b(?:does\s+not|doesn't|do\s+not|don't|should\s+not|shouldn't|won't|will\s+not)\s+(?:matter|enter|count|apply)\b"
    r"|\bplays?\s+no\s+(?:role|part)\b|\bhas\s+no\s+(?:effect|bearing|influence)\b|\bis\s+not\s+(?:needed|used|an?\s+input)\b",
    re.IGNORECASE,
)
"""A dismissal of what its own clause names: "though pH doesn't matter here", "temperature plays no role"."""

_WANT = re.compile(r",?\s+but\s+(?=(?:I|we)(?:'m|\s+am|\s+are)?\s+(?:just\s+|only\s+|really\s+)?(?:want|need|after)\b)", re.IGNORECASE)
""""X, but I want Y": X is said to be set aside for what follows."""

_PURPOSE = re.compile(
    r"^\s*(?:For|In)\s+(?:the|our|my|a|an)\s+(?:[\w-]+\s+){0,6}?(?:report|paper|table|thesis|section|notes|slides|draft|manuscript"
    r"|review|proposal|presentation|meeting|appendix|notebook|spreadsheet|screening|comparison|homework|assignment|lecture)"
    r"(?:\s+(?:of|for|in|on)\s+(?:the|our|my|a|an)\s+[\w-]+(?:\s+[\w-]+)?)?\s*,\s*(?=\S)",
    re.IGNORECASE,
)
"""A preface saying what the answer is for ("For the diatomics section of the report, …"): no part of what is asked."""

_ASKING = re.compile(r"\?|\b(?:what|how|which|compute|calculate|give|return|find|determine|report)\b", re.IGNORECASE)
_BRACKET = re.compile(r"(^|\s+)\(([^()]*)\)(\s*)")  # a bracket of words, not a SMILES's branch "C(=O)O"
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")
_CLAUSE = re.compile(r",\s*|\s+(?=(?:though|although|but|since|as)\s)", re.IGNORECASE)


def _kept(piece: str, removed: list[str]) -> str | None:
    """``piece`` less its dismissed part (added to ``removed``): None when the whole piece is a side remark."""
    if _ANAPHORIC.search(piece):
        return None
    if _NAMED.search(piece):
        clauses = _CLAUSE.split(piece)
        left = [c for c in clauses if not _NAMED.search(c)]
        if not any(_ASKING.search(c) for c in left):  # "the solution we titrated at pH 2, though pH doesn't matter here"
            removed += left  # what the dismissal does not name: set aside with it, though it may have been an input
            return None
        return ", ".join(left)
    want = _WANT.search(piece)
    if want and not _ASKING.search(piece[: want.start()]):
        return piece[want.end() :]
    return piece


def _without(text: str, removed: list[str]) -> str:
    """``text`` (no brackets) less the parts between semicolons that are side remarks."""
    parts = [_kept(part, removed) for part in text.split(";")]
    kept = ";".join(p for p in parts if p is not None).strip()
    ended = re.search(r"[.!?]$", text.rstrip())
    return kept + ended.group() if kept and ended and parts[-1] is None and not re.search(r"[.!?]$", kept) else kept


def split_side_remarks(query: str) -> tuple[str, list[str]]:
    """``query`` less the remarks it sets aside itself (a bracket, a sentence or a part of one, a preface saying what the
    answer is for), and the clauses set aside with a dismissal that named something else ("the solution we titrated at
    pH 2" of "though pH doesn't matter"), whose values may have been inputs; the query unchanged where it has none."""
    query = _PURPOSE.sub("", query, count=1)
    if not (_ANAPHORIC.search(query) or _NAMED.search(query) or _WANT.search(query)):
        return query, []
    removed: list[str] = []

    def bracket(match: re.Match[str]) -> str:
        kept = _without(match.group(2), removed)
        if kept:
            return f"{match.group(1)}({kept}){match.group(3)}"
        following = match.string[match.end() :]
        return "" if not following or following[0] in ",.;:?!)" or not match.group(1) else " "

    text = _BRACKET.sub(bracket, query)
    sentences = [_without(s, removed) for s in _SENTENCE.split(text)]
    return " ".join(s for s in sentences if s and not re.fullmatch(r"[\s.!?,;:]*", s)), removed


def without_side_remarks(query: str) -> str:
    """``query`` less the remarks it sets aside itself."""
    return split_side_remarks(query)[0]
