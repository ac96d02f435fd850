"""Side remarks a question sets aside itself: "(It was annealed at 500 °C, irrelevant.)", "Its pKa is about 10.4, which
doesn't matter here.", "We measured 1.98 g/cm^3, but I want the crystallographic value."

What such a remark says is not part of what is asked: its numbers are no inputs and its words ask nothing. Only a piece
that asks nothing holds one (a bracket, a sentence, or a part of either between semicolons): a condition inside the
asking sentence ("…, if the amide nitrogen does not count as a donor?") is part of what is asked. Within the piece, a
dismissal of what was just said ("…, irrelevant", "…, ignore that", "…, which doesn't matter here") sets aside the clause
before it too; one that names its subject ("the experimental value is irrelevant", "temperature plays no role") only
itself, and the clause before it where that names the subject again ("at pH 2, though pH doesn't matter"). "X, but I want Y"
sets X aside where X is a value from another source. Everything set
aside is returned, for the skill to check that none of it was an input of its own kind (``skills/binding.py``).

>>> without_side_remarks("Density of KCl with pymatgen? (It was annealed at 500 °C, irrelevant.) Float, 4 d.p.")
'Density of KCl with pymatgen? Float, 4 d.p.'
>>> without_side_remarks("What TPSA does RDKit give for glycine (NCC(=O)O)? Our assay ran at 37 °C, ignore that. 2 d.p.")
'What TPSA does RDKit give for glycine (NCC(=O)O)? 2 d.p.'
>>> without_side_remarks("Density of NaCl with pymatgen? Take a = 5.50 Å, the experimental value is irrelevant.")
'Density of NaCl with pymatgen? Take a = 5.50 Å.'
>>> without_side_remarks("The lab value is 4.44 eV/atom, but I want the EMT value. What is the cohesive energy of Ni?")
'I want the EMT value. What is the cohesive energy of Ni?'
"""

from __future__ import annotations

import re

__all__ = ["without_side_remarks", "split_side_remarks"]

_POINTING = r"(?:that|this|it|which|those|these)(?:\s+(?:number|value|figure|one|part|detail|bit|remark))?"
_IS = r"(?:'s|\s+is|\s+are|\s+was)?"
_DISMISSED = (
    r"(?:irrelevant|not\s+relevant|not\s+an?\s+input|not\s+needed|beside\s+the\s+point|just\s+for\s+(?:context|reference|information)"
    r"|for\s+(?:context|reference)\s+only)"
)
_NOT_MATTERING = r"(?:does\s+not|doesn't|do\s+not|don't|should\s+not|shouldn't|won't|will\s+not)\s+(?:matter|apply|count|enter)"
_BARE = re.compile(
    rf"^\s*(?:(?:but|and|though|although)\s+)?(?:{_POINTING}{_IS}\s+(?:(?:totally|completely|entirely|quite)\s+)?{_DISMISSED}|{_DISMISSED}"
    rf"|{_POINTING}\s+{_NOT_MATTERING}|(?:please\s+)?(?:ignore|disregard|forget\s+about)\s+(?:that|this|it|them|those|these)"
    r"|which\s+(?:you|we|one)\s+(?:can|may|should)\s+(?:safely\s+)?ignore|(?:that|this|it)\s+(?:can|may|should)\s+be\s+(?:safely\s+)?ignored)"
    r"\b(?:\s+(?:here|for\s+(?:you|us|this|now)|anyway|though))?[\s.!)]*$",
    re.IGNORECASE,
)
"""A clause that sets aside what was just said: "irrelevant here", "ignore that", "but that's not an input"."""
_NAMING = re.compile(
    rf"^\s*(?:(?:but|and|though|although)\s+)?(?P<subject>(?:the\s+|its\s+|our\s+)?[\w-]+(?:\s+[\w'-]+){{0,3}}?)\s+(?:{_NOT_MATTERING}"
    rf"|(?:is|are)\s+{_DISMISSED}|plays?\s+no\s+(?:role|part)|has\s+no\s+(?:effect|bearing|influence))\b(?:\s+(?:here|for\s+(?:you|us|this)))?[\s.!)]*$",
    re.IGNORECASE,
)
"""A clause that sets aside what it names: "temperature plays no role", "the experimental value is irrelevant"."""
_WANT = re.compile(r",?\s+but\s+(?=(?:I|we)(?:'m|\s+am|\s+are)?\s+(?:just\s+|only\s+|really\s+)?(?:want|need|after)\b)", re.IGNORECASE)
_SOURCE = re.compile(r"\b(?:experiment\w*|measur\w*|lab|laboratory|literature|reported|handbook|quoted?|tabulated|paper)\b", re.IGNORECASE)
""""X, but I want Y" where X is a value from another source ("we measured 1.98 g/cm^3"): X is set aside for what follows."""
_ASKING = re.compile(
    r"\?|\b(?:what|how|compute|calculate|give|return|find|determine|report)\b"
    r"|\bwhich\b(?!\s+(?:does|doesn't|do|don't|is|isn't|you|we|one|should|shouldn't|won't|will|can|may|plays?|has))",
    re.IGNORECASE,
)
_BRACKET = re.compile(r"(^|\s+)\(([^()]*)\)(\s*)")  # a bracket of words, not a SMILES's branch "C(=O)O"
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")
_CLAUSE = re.compile(r",\s+|\s+(?=(?:but|though|although)\s)", re.IGNORECASE)


def _names_again(subject: str, clause: str) -> bool:
    """Whether ``clause`` speaks of what a dismissal's ``subject`` names ("pH" of "at pH 2")."""
    words = [w for w in re.findall(r"[A-Za-z]+", subject.lower()) if w not in ("the", "its", "our", "but", "and", "though", "although")]
    return any(re.search(rf"\b{re.escape(w)}\b", clause, re.IGNORECASE) for w in words)


def _kept(piece: str, removed: list[str]) -> str | None:
    """``piece`` less what it sets aside (added to ``removed``); None when nothing of it is left."""
    if _ASKING.search(piece):
        return piece  # a condition of what is asked, however it is worded
    want = _WANT.search(piece)
    if want and _SOURCE.search(piece[: want.start()]):
        removed.append(piece[: want.start()])
        return piece[want.end() :]
    clauses = _CLAUSE.split(piece)
    gone: set[int] = set()
    for index, clause in enumerate(clauses):
        named = _NAMING.match(clause)
        if _BARE.match(clause):
            gone |= {index, index - 1} if index else {index}
        elif named:
            gone.add(index)
            if index and _names_again(named.group("subject"), clauses[index - 1]):
                gone.add(index - 1)
    if not gone:
        return piece
    removed += [clauses[i] for i in sorted(gone) if i >= 0 and not _BARE.match(clauses[i])]  # "relaxation is not needed" too
    left = [c for i, c in enumerate(clauses) if i not in gone]
    return ", ".join(left) if left else None


def _without(text: str, removed: list[str]) -> str:
    """``text`` (no brackets) less the side remarks of its parts between semicolons, keeping its closing stop."""
    parts = [_kept(part, removed) for part in text.split(";")]
    if parts == text.split(";"):
        return text
    kept = ";".join(p for p in parts if p is not None).strip()
    ended = re.search(r"[.!?]$", text.rstrip())
    return kept + ended.group() if kept and ended and not re.search(r"[.!?]$", kept) else kept


def split_side_remarks(query: str) -> tuple[str, list[str]]:
    """``query`` less the remarks it sets aside itself, and what was set aside (less a bare "irrelevant" or "ignore that"):
    the query unchanged where it has none."""
    if not re.search(rf"{_DISMISSED}|{_NOT_MATTERING}|ignore|disregard|forget\s+about|plays?\s+no|has\s+no|\bbut\s+(?:I|we)\b", query, re.IGNORECASE):
        return query, []
    removed: list[str] = []

    def bracket(match: re.Match[str]) -> str:
        kept = _without(match.group(2), removed)
        if kept == match.group(2):
            return match.group(0)
        if kept:
            return f"{match.group(1)}({kept.rstrip('.')}){match.group(3)}"
        following = match.string[match.end() :]
        return "" if not following or following[0] in ",.;:?!)" or not match.group(1) else " "

    text = _BRACKET.sub(bracket, query)
    sentences = [_without(s, removed) for s in _SENTENCE.split(text)]
    kept = " ".join(s for s in sentences if s and not re.fullmatch(r"[\s.!?,;:]*", s))
    return (kept, [r.strip() for r in removed if r.strip()]) if removed or kept != query else (query, [])


def without_side_remarks(query: str) -> str:
    """``query`` less the remarks it sets aside itself."""
    return split_side_remarks(query)[0]
