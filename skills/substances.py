"""The substances a question names, read as values: which mentions state one substance, and which parameter each fills.

A name and a formula or SMILES of one substance are one value ("caffeine (CN1C=NC2=C1C(=O)N(C(=O)N2C)C)", "L-methionine,
CSCC[C@H](N)C(=O)O": one molecule whichever stereoisomer the name database lists). An element named as a part of another
substance ("split O2 into two oxygen atoms", "the Mg-O system") and names set beside a formula that describe it
("lithium cobalt oxide, LiCoO2") are not values of their own. Every remaining value goes to exactly one parameter of a
kind it can be, in the order the verified question stated them, or the skill declines (``BindingDeclined``).

>>> from skills.mentions import find_mentions
>>> text = "How much energy does it take to split an O2 molecule into two oxygen atoms?"
>>> [[m.text for m in group] for group in merge(parts_left_out(find_mentions(text), text))]
[['O2']]
>>> assign_entities(merge(find_mentions("aspirin (CC(=O)Oc1ccccc1C(=O)O)")), [("smiles", "smiles")])["smiles"][1].text
'CC(=O)Oc1ccccc1C(=O)O'
"""

from __future__ import annotations

import itertools
import re

from skills.chemistry import flat_smiles, formula_elements, ring_chain_tautomers, same_formula, smiles_formula
from skills.domain import ENTITY_KINDS, same_value
from skills.mentions import Mention, same_amount
from skills.minerals import names_formula

__all__ = [
    "MAX_CANDIDATES", "BindingDeclined", "value_of", "equal_mentions", "merge", "group_value", "restates", "restated", "parts_left_out",
    "assign_entities", "fits", "assign_described", "whole_of", "mention_elements",
]  # fmt: skip

MAX_CANDIDATES = 8
"""More substances than this in one question are too many to assign safely."""


class BindingDeclined(ValueError):
    """The skill will not answer this question; the message says why."""


def value_of(mention: Mention, kind: str) -> str | None:
    """What a mention means as a value of ``kind`` (None when it cannot be one)."""
    if kind == "element":
        return mention.element
    if kind == "formula":
        return mention.formula if mention.kind != "smiles" or mention.formula else None
    if kind == "smiles":
        return mention.smiles
    return None


def equal_mentions(a: Mention, b: Mention) -> bool:
    """Whether two mentions state the same value (in some reading both allow); a name and a SMILES of one molecule do."""
    if a.kind == "number" or b.kind == "number":
        return a.kind == b.kind and same_amount(a, b) and a.plus_minus == b.plus_minus
    if any(value_of(a, k) is not None and value_of(b, k) is not None and same_value(k, value_of(a, k), value_of(b, k)) for k in ENTITY_KINDS):
        return True
    if {a.kind, b.kind} == {"name", "formula"}:  # "chalcopyrite (CuFeS2)", "cuprite, Cu2O": the formula's other name
        named, written = (a, b) if a.kind == "name" else (b, a)
        return written.formula is not None and names_formula(named.text, written.formula)
    written, named = (a, b) if a.kind == "smiles" else (b, a)
    if written.kind != "smiles" or named.kind not in ("name", "formula") or written.smiles is None:
        return False
    if named.smiles:  # the name's database SMILES: the same connectivity (a name seldom says which stereoisomer), or its other
        return flat_smiles(named.smiles) == flat_smiles(written.smiles) or ring_chain_tautomers(named.smiles, written.smiles)  # ring form
    return named.formula is not None and same_formula(named.formula, smiles_formula(written.smiles) or "")


def merge(mentions: list[Mention]) -> list[list[Mention]]:
    """Entity mentions grouped by the value they state ("naphthalene (SMILES c1ccc2ccccc2c1)" is one value)."""
    groups: list[list[Mention]] = []
    for mention in mentions:
        home = next((g for g in groups if all(equal_mentions(mention, other) for other in g)), None)
        if home is None:
            groups.append([mention])
        else:
            home.append(mention)
    return groups


def group_value(group: list[Mention], kind: str) -> str | None:
    """The value a group states as ``kind``, as the question wrote it where it wrote it (a formula, a SMILES), else None."""
    values = [value_of(m, kind) for m in group]
    if any(v is None for v in values):
        return None
    written = next((m.text for m in group if m.kind in ("formula", "smiles") and value_of(m, kind) is not None and m.text == m.formula), None)
    written = written or next((m.text for m in group if m.kind == "smiles" and value_of(m, kind) is not None), None)
    return written or values[0]


def restates(mention: Mention, stated: Mention) -> bool:
    """Whether a mention of the question states what a constant of the verified question did: the same substance, or the
    same number written alike or counting the same thing ("5-layer" and "five layers")."""
    if not equal_mentions(mention, stated):
        return False
    return mention.kind != "number" or mention.text == stated.text or (mention.counted is not None and mention.counted == stated.counted)


def restated(context: list[Mention], asked: list[Mention], verified_mentions: list[Mention]) -> str | None:
    """Why the question states a constant of the verified question a different number of times (Li2O2 as an entry and as the
    compound asked about, then only as an entry: the one asked about is another), or None. A substance of the same kind
    the verified question never named plays the other part ("fcc Al ... the Cu Kα peak" for "fcc copper ... CuKa")."""
    for mention in context:
        verified = sum(equal_mentions(mention, other) for other in context)
        stated = sum(equal_mentions(mention, other) for other in asked)
        kinds = [k for k in ENTITY_KINDS if value_of(mention, k) is not None]
        other = any(
            o.kind != "number" and not any(equal_mentions(v, o) for v in verified_mentions) and any(value_of(o, k) is not None for k in kinds)
            for o in asked
        )
        if 0 < stated < verified and not other:
            return f"the verified question states {mention.text} {verified} times and this one {stated}: one of them plays another part"
    return None


def mention_elements(mention: Mention) -> list[str]:
    """The elements a substance mention consists of (a formula's, a name's or a SMILES's; none for a number)."""
    formula = mention.formula or (smiles_formula(mention.smiles) if mention.smiles else None)
    return formula_elements(formula) if formula else []


def whole_of(group: list[Mention], mentions: list[Mention]) -> Mention | None:
    """The compound among ``mentions`` that an element ``group`` is a part of ("chlorine" of NaCl), else None."""
    element = group_value(group, "element")
    return next((m for m in mentions if m not in group and len(mention_elements(m)) > 1 and element in mention_elements(m)), None) if element else None


def parts_left_out(mentions: list[Mention], text: str) -> list[Mention]:
    """The substance mentions less the elements named as parts of another ("split O2 into two oxygen atoms", "the Mg-O system")
    and the names set beside a formula that describe it ("lithium cobalt oxide, LiCoO2"; "magnetite (Fe3O4)")."""
    wholes = [m for m in mentions if not m.part]
    kept = [m for m in mentions if not (m.part and any(m.element in mention_elements(w) for w in wholes))]
    described: set[int] = set()
    for formula in (m for m in kept if m.kind == "formula" and len(mention_elements(m)) > 1):
        for side in (-1, 1):
            names = _beside(kept, formula, side, text)
            # A name of another formula of the same elements contradicts it ("magnetite (Fe2O3)", "sodium sulfite (Na2SO4)");
            # a generic one names any of them ("iron oxide (Fe3O4)", "lithium cobalt oxide, LiCoO2").
            other = (
                len(names) == 1 and bool(names[0].formula)
                and not (_GENERIC_NAME.search(names[0].text) and not re.search(r"(?i)\w(?:ous|ic)\b|\(", names[0].text))
                and not same_formula(names[0].formula or "", formula.formula or "")
            )  # fmt: skip
            if names and not other and {e for n in names for e in mention_elements(n)} == set(mention_elements(formula)):
                described |= {n.start for n in names}
    return [m for m in kept if m.start not in described]


_GENERIC_NAME = re.compile(r"(?i)(?<!\w)(?:ox|sulf|sulph|selen|tellur|chlor|fluor|brom|iod|nitr|phosph|carb|hydr)ides?$")
"""A compound's name by its elements alone ("iron oxide", "lithium cobalt oxide"): it names every ratio of them, unless an
oxidation state says which ("cuprous oxide", "iron(III) oxide")."""


def _beside(mentions: list[Mention], formula: Mention, side: int, text: str) -> list[Mention]:
    """The run of names written right before (``side`` -1) or after (+1) a formula, set off only by spaces, a comma or brackets."""
    ordered = sorted(mentions, key=lambda m: m.start)
    at = ordered.index(formula)
    names: list[Mention] = []
    near = formula
    for other in reversed(ordered[:at]) if side < 0 else ordered[at + 1 :]:
        gap = text[other.end : near.start] if side < 0 else text[near.end : other.start]
        if other.kind != "name" or not re.fullmatch(r"[\s,()]*", gap):
            break
        names.append(other)
        near = other
    return names


def assign_entities(groups: list[list[Mention]], slots: list[tuple[str, str]]) -> dict[str, list[Mention]]:
    """The one way to give every entity value of the question to exactly one compatible parameter, else decline."""
    if len(groups) > MAX_CANDIDATES:
        raise BindingDeclined(f"the question names {len(groups)} substances; too many to bind safely")
    solutions = []
    for choice in itertools.product(range(len(slots)), repeat=len(groups)):
        if len(set(choice)) != len(choice) or len(choice) != len(slots):
            continue
        if all(group_value(groups[g], slots[s][1]) is not None for g, s in enumerate(choice)):
            solutions.append(choice)
    names = ", ".join(repr(g[0].text) for g in groups)
    if not solutions:
        wanted = ", ".join(f"{n} ({k})" for n, k in slots) or "no substance"
        raise BindingDeclined(f"the question names {names or 'no substance'}; the skill takes {wanted}")
    if len(solutions) > 1:
        ordered = [c for c in solutions if list(c) == sorted(c)]  # several of one kind: in the order the skill lists them
        if len(ordered) != 1:
            raise BindingDeclined(f"cannot tell which of {names} goes to which parameter")
        solutions = ordered
    return {slots[s][0]: groups[g] for g, s in enumerate(solutions[0])}


def fits(groups: list[list[Mention]], left_out: list[Mention], slots: list[tuple[str, str]]) -> bool:
    """Whether the groups but ``left_out`` can be assigned."""
    try:
        assign_entities([g for g in groups if g is not left_out], slots)
    except BindingDeclined:
        return False
    return True


def assign_described(groups: list[list[Mention]], slots: list[tuple[str, str]]) -> dict[str, list[Mention]] | None:
    """Assign the substances where a compound is named with its elements: either the elements describe the compound
    ("NaCl, of Na and Cl") or the compound the elements ("between Ga and As in GaAs"); None when neither reading fits."""
    lone = {m.element for g in groups for m in g if m.element and len(mention_elements(m)) == 1}
    compounds = [g for g in groups if len(mention_elements(g[0])) > 1]
    elements = [g for g in groups if g[0].element and any(g[0].element in mention_elements(c[0]) for c in compounds)]
    wholes = [c for c in compounds if set(mention_elements(c[0])) <= lone]
    readings = []
    elements_left = None
    for left_out in (elements, wholes):
        if not left_out:
            continue
        try:
            readings.append(assign_entities([g for g in groups if g not in left_out], slots))
        except BindingDeclined:
            continue
        if left_out is elements:
            elements_left = readings[-1]
    if len(readings) > 1:
        raise BindingDeclined(f"cannot tell whether {', '.join(repr(g[0].text) for g in groups)} name one substance or several")
    named = {g[0].element for g in elements}
    if readings and readings[0] is elements_left and not any(set(mention_elements(c[0])) <= named for c in compounds):
        parts = ", ".join(repr(g[0].text) for g in elements)  # "the iron in Fe2O3", "counting sulfur as polar": one part singled out
        raise BindingDeclined(f"the question singles out {parts} of {compounds[0][0].text}, which this skill does not take apart")
    return readings[0] if readings else None
