"""Ground bound parameters in the question: the model proposes values, the question's own words decide.

A string value is kept only if it is written in the question; otherwise the one unused token of
the question shaped like the parameter's verified example (a formula for a formula, a SMILES for
a SMILES) is taken; otherwise the example itself if the question names it; otherwise binding
fails, so a skill never silently answers a different question. A number is kept if the question
states it, else read from "name = value" in the question, else the verified example stands.

>>> schema = {"properties": {"formula": {"type": "string", "default": "N2"}, "fmax": {"type": "number", "default": 0.01}}}
>>> ground_params(schema, {"formula": "{[{}]}", "fmax": 0.1}, "Atomization energy of O2 with EMT, fmax=0.05. Return a float.")
{'formula': 'O2', 'fmax': 0.05}
"""

from __future__ import annotations

import re
from typing import Any

from pymatgen.core.periodic_table import Element

__all__ = ["GroundingError", "ground_params", "shape"]

_TOKEN = re.compile(r"[A-Za-z0-9@+\-\[\]()=#/\\%.]+")
_NUMBER = re.compile(r"(?<![A-Za-z\d.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


class GroundingError(ValueError):
    """A parameter's value cannot be found in the question."""


def _is_formula(text: str) -> bool:
    parts = re.fullmatch(r"(?:[A-Z][a-z]?\d*)+", text) and re.findall(r"[A-Z][a-z]?", text)
    return bool(parts) and all(Element.is_valid_symbol(p) for p in parts)  # type: ignore[union-attr]  # parts is findall's list when truthy


def shape(text: str) -> str:
    """A coarse kind of a string value: ``formula``, ``smiles``, ``identifier`` or ``word``."""
    if _is_formula(text):
        return "formula"
    if re.fullmatch(r"[a-z]+-\d+", text):
        return "identifier"
    if re.search(r"[a-z]", text) and re.search(r"[\d=#()\[\]]", text) and _TOKEN.fullmatch(text):
        return "smiles"
    return "word"


def _tokens(query: str) -> list[str]:
    return [t.strip(".,;:()") for t in _TOKEN.findall(query) if t.strip(".,;:()")]


def _written(value: str, query: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", query, re.IGNORECASE) is not None


def _ground_string(name: str, value: Any, default: str, query: str, used: set[str]) -> str:
    if isinstance(value, str) and value.strip() and _written(value.strip(), query):
        return value.strip()
    kind = shape(default)
    candidates = [t for t in dict.fromkeys(_tokens(query)) if shape(t) == kind and t not in used] if kind != "word" else []
    if len(candidates) == 1:
        return candidates[0]
    if _written(default, query):
        return default
    found = f"candidates {candidates}" if candidates else f"no {kind} in it"
    raise GroundingError(f"cannot find the value of {name!r} in the question ({found}; the model proposed {value!r})")


def _ground_number(name: str, value: Any, default: float, query: str) -> float:
    stated = [float(n) for n in _NUMBER.findall(query)]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value) in stated:
        return value
    named = re.search(rf"\b{re.escape(name)}\s*(?:=|:|of|to|is)?\s*({_NUMBER.pattern})", query, re.IGNORECASE)
    return float(named.group(1)) if named else default


def ground_params(schema: dict[str, Any], proposed: dict[str, Any], query: str) -> dict[str, Any]:
    """The parameters to run with, each grounded in ``query`` (``GroundingError`` when a string cannot be)."""
    bound: dict[str, Any] = {}
    used: set[str] = set()
    for name, prop in schema.get("properties", {}).items():
        default, value = prop.get("default"), proposed.get(name)
        if prop.get("type") == "string" and isinstance(default, str):
            bound[name] = _ground_string(name, value, default, query, used)
            used.add(bound[name])
        elif prop.get("type") in ("number", "integer") and isinstance(default, (int, float)):
            number = _ground_number(name, value, default, query)
            bound[name] = int(number) if prop.get("type") == "integer" and float(number).is_integer() else number
        else:
            bound[name] = value if value is not None else default
    return bound
