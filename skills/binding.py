"""Bind a skill's parameters from a question, precision first: bind only what the question ties to a parameter, else decline.

The question's stated values (``skills/mentions.py``; format and unit numbers left out) are
compared with the question the skill was verified on. Values both questions state the same way
are the skill's own context. Every other value must be bound to exactly one parameter of a
compatible kind: a formula to a formula, an element to an element, a SMILES to a SMILES, a
number to the parameter its words tie it to (its name, the words the verified question used
before it, its unit). A value nothing takes, a value two parameters could take, a parameter two
values could fill, a content word the skill was never verified on, or a verified default that
belonged to another material: each declines, with the reason, and the question goes on to code.

>>> from skills.documents import Skill, TestCase, Provenance
>>> schema = {"properties": {"formula": {"type": "string", "default": "N2", "kind": "formula", "source": "N2"}}}
>>> skill = Skill(name="atomization", code="def run(formula: str = 'N2'):\\n    return 1.0\\n", parameters=schema,
...     test_case=TestCase(expected=1.0), provenance=Provenance(query="Atomization energy of N2 with ASE's EMT. Return a float."))
>>> bind(skill, "Atomization energy of O2 with ASE's EMT, rounded to 4 decimal places.").params
{'formula': 'O2'}
>>> try:
...     bind(skill, "Ionization energy of O2 with ASE's EMT.")
... except BindingDeclined as exc:
...     print(exc)
the question asks about 'ionization', which this skill was not verified on
"""

from __future__ import annotations

import ast
import itertools
import re
from typing import Any

from pydantic import BaseModel, Field, JsonValue

from skills.answer_spec import read_answer_spec
from skills.chemistry import same_formula
from skills.documents import DEFAULT_WORDS, BoundValue, Skill
from skills.domain import ENTITY_KINDS, changed_substances, hidden_problem, parameter_kind, same_value, value_problem
from skills.mentions import GENERIC_WORDS, Mention, content_words, find_mentions, stem, words_after, words_before
from skills.retrieval import split_name

__all__ = ["BoundValue", "Binding", "BindingDeclined", "bind", "parameter_kind", "ran_with", "second_opinion"]

MAX_CANDIDATES = 8


class BindingDeclined(ValueError):
    """The skill will not answer this question; the message says why."""


class Binding(BaseModel):
    params: dict[str, JsonValue] = Field(default_factory=dict)
    bound: list[BoundValue] = Field(default_factory=list)


def _value(mention: Mention, kind: str) -> str | None:
    """What a mention means as a value of ``kind`` (None when it cannot be one)."""
    if kind == "element":
        return mention.element
    if kind == "formula":
        return mention.formula if mention.kind != "smiles" or mention.formula else None
    if kind == "smiles":
        return mention.smiles
    return None


def _equal_mentions(a: Mention, b: Mention) -> bool:
    """Whether two mentions state the same value (in some reading both allow)."""
    if a.kind == "number" or b.kind == "number":
        return a.kind == b.kind and a.number == b.number
    return any(_value(a, k) is not None and _value(b, k) is not None and same_value(k, _value(a, k), _value(b, k)) for k in ENTITY_KINDS)


def _merge(mentions: list[Mention]) -> list[list[Mention]]:
    """Entity mentions grouped by the value they state ("naphthalene (SMILES c1ccc2ccccc2c1)" is one value)."""
    groups: list[list[Mention]] = []
    for mention in mentions:
        home = next((g for g in groups if all(_equal_mentions(mention, other) for other in g)), None)
        if home is None:
            groups.append([mention])
        else:
            home.append(mention)
    return groups


def _group_value(group: list[Mention], kind: str) -> str | None:
    values = [_value(m, kind) for m in group]
    if any(v is None for v in values):
        return None
    written = next((m.text for m in group if m.kind in ("formula", "smiles") and _value(m, kind) is not None), None)
    return written or values[0]


def _source(question: str, mentions: list[Mention], name: str, prop: dict[str, Any], kind: str) -> Mention | None:
    """The mention of the verified question that a parameter's default came from."""
    default = prop.get("default")
    for mention in mentions:
        if kind == "number" or kind == "integer":
            if mention.kind == "number" and isinstance(default, (int, float)) and mention.number == float(default):
                return mention
        elif kind in ENTITY_KINDS and _value(mention, kind) is not None and same_value(kind, _value(mention, kind), default):
            return mention
        elif kind == "formula" and prop.get("derives") and mention.formula and same_formula(mention.formula, str(default)):
            return mention
    return None


def _ties(query: str, mention: Mention, name: str, prop: dict[str, Any], substance_words: frozenset[str] = frozenset()) -> int:
    """How strongly the question ties a number to a parameter: 3 by name, 2 by the verified question's words, 1 by unit.

    The verified question's words around the value count only when they describe it: not weak words,
    and not the substance's name ("magnesium with a = ..." does not make every number after magnesium an a).
    """
    if _units_differ(mention.unit, prop.get("unit")):
        return 0  # 300 K is never an fmax in eV/Å, whatever the words around it
    before = query[: mention.start]
    if len(name) <= 2:
        if re.search(rf"(?<![\w]){re.escape(name)}\s*(?:=|:|is|of)?\s*$", before):
            return 3
    elif stem(name) in words_before(query, mention.start, 3) or re.search(rf"{re.escape(name)}\s*=\s*$", before, re.IGNORECASE):
        return 3
    cue = {w for w in prop.get("cue", []) if len(w) > 2 and w not in _WEAK and w not in substance_words}
    cue_after = {w for w in prop.get("cue_after", []) if len(w) > 2 and w not in _WEAK and w not in substance_words}
    if cue & set(words_before(query, mention.start, 5)) or cue_after & set(words_after(query, mention.end, 2)):
        return 2
    if prop.get("unit") and mention.unit == prop.get("unit"):
        return 1
    return 0


# Words that tie nothing: articles and prepositions, and the words of questions, formats and rewording ("Return", "molecule").
_WEAK = frozenset("the with and for from into of at to in by a an per its".split()) | {stem(w) for w in GENERIC_WORDS} | GENERIC_WORDS


def _check_value(name: str, prop: dict[str, Any], value: Any) -> None:
    """Refuse a value outside what the skill was verified for (``skills/domain.py``: kind, bounds, make-up)."""
    problem = value_problem(name, prop, value)
    if problem:
        raise BindingDeclined(problem)


def _vocabulary(skill: Skill) -> set[str]:
    """What the skill was verified on, in words: its questions, description, parameter words and the names its code uses."""
    texts = [skill.provenance.query or skill.description, *skill.provenance.queries, skill.description, skill.name.replace("_", " ")]
    for name, prop in skill.parameters.get("properties", {}).items():
        texts += [name.replace("_", " "), str(prop.get("description", ""))]
    texts.append(" ".join(split_name(n) for n in _code_names(skill.code)))
    return set().union(*(content_words(t) for t in texts))


def _code_names(code: str) -> set[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    return {n for n in names if not n.startswith("_")}


def _stated(mention: Mention) -> str:
    """A value of the verified question as its code has it (a number, a formula), never in its teacher's words."""
    if mention.kind == "number":
        return f"{mention.number:g}"
    return mention.formula or mention.smiles or mention.element or mention.kind


def _units_differ(asked: str | None, given: str | None) -> bool:
    def norm(unit: str) -> str:
        return re.sub(r"[\s^]", "", unit).replace("Å", "A").replace("angstroms", "A").replace("angstrom", "A").lower()

    return bool(asked and given) and norm(asked or "") != norm(given or "")


def _answer_differs(skill: Skill, query: str) -> str | None:
    """Why the answer the question asks for cannot be this skill's (another unit or kind of value), or None."""
    spec = read_answer_spec(query)
    if _units_differ(spec.unit, skill.unit):
        return f"the question asks for {spec.unit}; the skill gives {skill.unit}"
    kinds = {spec.output_type, skill.output_type}
    if "any" not in kinds and len(kinds) > 1 and kinds != {"int", "float"}:
        return f"the question asks for a {spec.output_type}; the skill gives a {skill.output_type}"
    return None


def _assign_entities(groups: list[list[Mention]], slots: list[tuple[str, str]]) -> dict[str, list[Mention]]:
    """The one way to give every entity value of the question to exactly one compatible parameter, else decline."""
    if len(groups) > MAX_CANDIDATES:
        raise BindingDeclined(f"the question names {len(groups)} substances; too many to bind safely")
    solutions = []
    for choice in itertools.product(range(len(slots)), repeat=len(groups)):
        if len(set(choice)) != len(choice) or len(choice) != len(slots):
            continue
        if all(_group_value(groups[g], slots[s][1]) is not None for g, s in enumerate(choice)):
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


def _fits(groups: list[list[Mention]], left_out: list[Mention], slots: list[tuple[str, str]]) -> bool:
    try:
        _assign_entities([g for g in groups if g is not left_out], slots)
    except BindingDeclined:
        return False
    return True


def bind(skill: Skill, query: str) -> Binding:
    """Parameters for ``skill`` from ``query``, each tied to the question's words; ``BindingDeclined`` when unsure."""
    verified = skill.provenance.query or skill.description
    properties: dict[str, dict[str, Any]] = skill.parameters.get("properties", {})
    kinds = {name: parameter_kind(prop) for name, prop in properties.items()}
    asked, known = find_mentions(query), find_mentions(verified)
    sources = {name: _source(verified, known, name, prop, kinds[name]) for name, prop in properties.items()}
    source_spans = {(m.start, m.text) for m in sources.values() if m is not None}
    context = [m for m in known if (m.start, m.text) not in source_spans]
    fresh = [m for m in asked if not any(m.text == c.text and _equal_mentions(m, c) for c in context)]

    differs = _answer_differs(skill, query)
    if differs:
        raise BindingDeclined(differs)
    unexplained = sorted(content_words(query, asked) - _vocabulary(skill))
    if unexplained:
        written = {stem(w): w.lower() for w in re.findall(r"[A-Za-z][A-Za-z']*", query)}
        shown = ", ".join(repr(written.get(w, w)) for w in unexplained[:4])
        raise BindingDeclined(f"the question asks about {shown}, which this skill was not verified on")
    if not properties:
        missing = [_stated(m) for m in known if not any(_equal_mentions(m, a) for a in asked)]
        if fresh or missing:
            parts = [m.text for m in fresh] + [f"no {t}" for t in missing]
            raise BindingDeclined(f"the skill has no parameters and answers only its own question; this one differs ({', '.join(parts[:4])})")
        return Binding()

    binding = Binding()
    entity_slots = sorted(
        ((n, k) for n, k in kinds.items() if k in ENTITY_KINDS),
        key=lambda nk: sources[nk[0]].start if sources[nk[0]] is not None else 10**9,  # type: ignore[union-attr]  # None sorted last
    )
    groups = _merge([m for m in fresh if m.kind != "number"])
    try:
        entities = _assign_entities(groups, entity_slots)
    except BindingDeclined:
        # A substance the answer was shown not to depend on (the element of a volume-per-atom from a lattice constant).
        free = [g for g in groups if any(_group_value(g, k) is not None for k in skill.independent_of)]
        if len(free) != 1 or not _fits(groups, free[0], entity_slots):
            raise
        entities = _assign_entities([g for g in groups if g is not free[0]], entity_slots)
    for name, group in entities.items():
        value = _group_value(group, kinds[name])
        _check_value(name, properties[name], value)
        binding.params[name] = value
        binding.bound.append(BoundValue(name=name, value=value, words=" / ".join(m.text for m in group)))

    numbers = [m for m in fresh if m.kind == "number"]
    substance_words = frozenset(stem(w) for m in known + asked if m.kind != "number" for w in re.findall(r"[A-Za-z]+", m.text))
    numeric = [n for n, k in kinds.items() if k in ("number", "integer")]
    for mention in numbers:
        strengths = {name: _ties(query, mention, name, properties[name], substance_words) for name in numeric}
        best = max(strengths.values(), default=0)
        tied = [name for name, s in strengths.items() if s == best and best > 0]
        if not tied:
            raise BindingDeclined(f"the question states {mention.text}{' ' + mention.unit if mention.unit and mention.unit not in mention.text else ''}, which no parameter of this skill takes")
        if len(tied) > 1:
            raise BindingDeclined(f"cannot tell whether {mention.text} is {' or '.join(tied)}")
        name = tied[0]
        if name in binding.params:
            raise BindingDeclined(f"the question gives two values for {name}: {binding.params[name]} and {mention.text}")
        number = float(mention.number or 0.0)
        _check_value(name, properties[name], number)
        binding.params[name] = int(number) if kinds[name] == "integer" else number
        binding.bound.append(BoundValue(name=name, value=binding.params[name], words=_words(query, mention)))

    changed = changed_substances(properties, binding.params)
    for name, prop in properties.items():
        if name in binding.params:
            continue
        if kinds[name] in ("number", "integer") and _speaks_of(query, name):
            raise BindingDeclined(f"the question speaks of {name} but gives it no value this skill can read")
        if changed and kinds[name] in ("number", "integer"):
            raise BindingDeclined(
                f"the question does not state {name} for {binding.params[changed[0]]}; "
                f"the verified {prop.get('default')} belongs to {properties[changed[0]].get('default')}"
            )
        if kinds[name] in ENTITY_KINDS:
            raise BindingDeclined(f"the question names no {kinds[name]} for {name}")
        binding.params[name] = prop.get("default")
        binding.bound.append(BoundValue(name=name, value=prop.get("default"), words=DEFAULT_WORDS))
    hidden = hidden_problem(skill, binding.params, unset="the question does not state")
    if hidden:
        raise BindingDeclined(hidden)
    return binding


def ran_with(bound: list[BoundValue], params: dict[str, Any]) -> list[BoundValue]:
    """Every parameter a skill runs with (``params``, defaults filled in), each with the question's words where it had them."""
    words = {b.name: b.words for b in bound}
    return [BoundValue(name=name, value=value, words=words.get(name, DEFAULT_WORDS)) for name, value in params.items()]


def _speaks_of(query: str, name: str) -> bool:
    """Whether the question names a parameter (``a =``, ``fmax``) without a value being bound to it."""
    if len(name) <= 2:
        return re.search(rf"(?<![\w]){re.escape(name)}\s*[=:]", query) is not None
    return re.search(rf"\b{re.escape(name)}\b", query, re.IGNORECASE) is not None


def _words(query: str, mention: Mention) -> str:
    before = re.findall(r"[^\s(]+", query[: mention.start])[-4:]
    return re.sub(r"([=:])\s+", r"\1", " ".join([*before, mention.text]))


def second_opinion(binding: Binding, proposed: dict[str, Any], query: str) -> None:
    """Decline when the model read another value of the question for a parameter (it can only make the skill decline)."""
    asked = find_mentions(query)
    for bound in binding.bound:
        value = proposed.get(bound.name)
        if value is None or value == bound.value or bound.words == DEFAULT_WORDS:
            continue
        if isinstance(value, (int, float)) and isinstance(bound.value, (int, float)) and float(value) == float(bound.value):
            continue
        other = [m for m in asked if (m.kind == "number" and isinstance(value, (int, float)) and m.number == float(value)) or m.text == str(value)]
        if other and not any(m.text in bound.words.split(" / ") for m in other):
            raise BindingDeclined(f"the question can be read two ways: {bound.name} = {bound.value} ({bound.words}) or {value}")
