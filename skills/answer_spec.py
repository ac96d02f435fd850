"""Read the answer format a query asks for, and hold answers to it.

The reading is deliberate and rule-based rather than left to the model: the query's own
words ("return a float rounded to 4 decimal places", "(unit: eV)", "return an integer")
decide the type, the rounding and the unit.

>>> spec = read_answer_spec("Compute it (unit: eV). Return a float rounded to 4 decimal places.")
>>> spec.output_type, spec.unit, spec.decimals
('float', 'eV', 4)
>>> coerce_answer(9.937249, spec)
(9.9372, None)
"""

from __future__ import annotations

import json
import math
import re
from typing import Literal

from pydantic import BaseModel, JsonValue

from skills.units import unit_spans

__all__ = ["read_answer_spec", "coerce_answer", "consensus_key", "format_answer", "AnswerSpec"]

_TYPES = [
    ("list", r"(?<!\bmy )(?<!\bour )(?<!\byour )(?<!\btheir )(?<!\bthis )\b(list|array|tuple)\b"),  # never "my list" of compounds
    ("bool", r"\b(boolean|bool|true or false)\b"),
    ("int", r"\b(integer|an int|int)\b"),
    ("float", r"\b(float|floating[- ]point|decimal number|real number)\b"),
    ("str", r"\b(string|str)\b"),
]


_TWO_IN_ORDER = re.compile(r"\bfirst\s*[,;]?\s*(?:and\s+)?then\b", re.IGNORECASE)


def read_answer_spec(query: str) -> AnswerSpec:
    """The output type, unit and decimals a query asks for (``any``/None where it is silent)."""
    text = query.replace("\u00c5", "Å")
    ask = re.search(r"\b(return|give|output|report|answer)\b(.*)", text, re.IGNORECASE | re.DOTALL)
    where = ask.group(2) if ask else text
    output_type = "any"
    for name, pattern in _TYPES:
        found = re.search(pattern, where, re.IGNORECASE)
        if found and not (name == "list" and ask is None and _a_named_list(where, found.start())):
            output_type = name
            break
    if output_type == "any" and _TWO_IN_ORDER.search(text):
        output_type = "list"  # "acceptors first, then donors": two values, in that order
    decimals = re.search(r"(\d+)\s*(?:decimal(?: place)?s?\b|d\.\s?p\.|dp\b)", text, re.IGNORECASE)
    step = re.search(r"\bround(?:ed)?\s+(?:off\s+)?to\s+(?:the\s+nearest\s+)?0\.(0*)1\b", text, re.IGNORECASE)  # "round to 0.001"
    unit = re.search(r"\(units?:\s*([^)]+?)\s*\)", text, re.IGNORECASE)
    return AnswerSpec(
        output_type=output_type,  # type: ignore[arg-type]  # "any" or a name from _TYPES: the Literal's values
        unit=unit.group(1) if unit else _unit_asked(text),
        decimals=int(decimals.group(1)) if decimals else len(step.group(1)) + 1 if step else None,
    )


def _a_named_list(text: str, start: int) -> bool:
    """Whether the list word at ``start`` is a list of the asker's, named by the word before it ("a vendor list keyed on …"),
    not the answer's form ("as a list", "a Python list"), where the question says nothing of what to return."""
    before = re.search(r"\b([A-Za-z]+)\s+$", text[:start])
    if before is None or before.group(1).lower() in ("a", "an", "the", "as", "python", "json", "sorted", "plain", "single", "in"):
        return False
    return re.search(r"\b(?:as|in)\s+(?:a|an)\s+$", text[: before.start()], re.IGNORECASE) is None  # "as a distance list": the form


def _unit_asked(text: str) -> str | None:
    """The unit a question asks for in words ("in g/cm^3", "in units of eV/atom"): the whole expression, ``Å^2`` not ``Å``."""
    asked = [(start, end, unit) for start, end, unit in unit_spans(text) if re.search(r"\bin (?:units of )?$", text[:start], re.IGNORECASE)]
    # "energies in eV per formula unit: ..., E_above_hull in eV/atom?": the unit the question ends on, not one of its data.
    answered = [unit for _, end, unit in asked if re.match(r"\s*\?", text[end:])]
    plain = [(start, unit) for start, end, unit in asked if not re.match(r"\s+per\b", text[end:])]
    # "lattice parameters from a paper in nanometres: … What is the volume in cubic angstroms?": the question's own sentence
    starts = [0, *(m.end() for m in re.finditer(r"[.?!]\s+(?=[A-Z])", text))]  # where each sentence begins
    questions = [(max(s for s in starts if s <= m.start()), m.end()) for m in re.finditer(r"\?", text)]
    in_question = [unit for start, unit in plain if any(a <= start < b for a, b in questions)]
    for unit in answered or in_question or [unit for _, unit in plain]:
        return unit
    return None


def coerce_answer(value: JsonValue, spec: AnswerSpec) -> tuple[JsonValue, str | None]:
    """``value`` in the form ``spec`` asks for, or the reason it cannot be."""
    kind = spec.output_type
    if kind in ("float", "int") and isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None, f"expected a number, got the string {value!r}"
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None, f"expected a float, got {value!r}"
        return (round(float(value), spec.decimals) if spec.decimals is not None else float(value)), None
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or float(value) != int(value):
            return None, f"expected an integer, got {value!r}"
        return int(value), None
    if kind == "bool":
        return (value, None) if isinstance(value, bool) else (None, f"expected true/false, got {value!r}")
    if kind == "list":
        return (value, None) if isinstance(value, list) else (None, f"expected a list, got {value!r}")
    if kind == "str":
        return (value, None) if isinstance(value, str) else (None, f"expected a string, got {value!r}")
    return value, None


def _rounded(value: JsonValue) -> JsonValue:
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def consensus_key(value: JsonValue) -> str:
    """A key under which outputs that agree (floats to 6 significant digits) are equal."""
    return json.dumps(_rounded(value), sort_keys=True)


def format_answer(value: JsonValue, spec: AnswerSpec) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return f"{text} {spec.unit}" if spec.unit else text


class AnswerSpec(BaseModel):
    """The answer format a query asks for, read from its wording."""

    output_type: Literal["float", "int", "bool", "str", "list", "any"] = "any"
    unit: str | None = None
    decimals: int | None = None
