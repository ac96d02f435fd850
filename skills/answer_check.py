"""Check an agent's answer against a task's expected answer.

The rules, in order:

- **Numbers** pass when ``|got - expected| <= absolute_tolerance`` (a relative slack of 1e-9 absorbs
  float noise at the boundary); with a null tolerance they must be equal. ``NaN`` and infinities never pass.
- **Text standing for a number** is accepted only when the whole text is the number, optionally followed by
  the task's unit (``"9.937"``, ``"9.937 eV"``). A number inside prose (``"the energy is 9.937 eV"``) is
  *not* accepted: the agent must print the answer, not a sentence about it.
- **Booleans** pass only against booleans, or the words ``true``/``false`` (any case); ``0``/``1`` do not.
- **Lists** (or a text that is a JSON list) pass element-wise with the same length and the same tolerance;
  **dicts** key-wise.
- **Strings** are compared after Unicode NFKC, trimming, collapsing whitespace, and dropping surrounding
  quotes and a trailing period. The comparison ignores case only for plain words (no digits, no capital
  after the first letter, longer than two letters), so ``"Cubic"`` matches ``"cubic"`` but formulas,
  element symbols, SMILES and space-group symbols (``"NaCl"``, ``"Co"``, ``"Fm-3m"``) must match exactly.

>>> check_answer("9.9379 eV", 9.9372, 0.001, unit="eV").passed
True
>>> check_answer("The energy is 9.9372 eV", 9.9372, 0.001, unit="eV").reason
"a number inside prose is not an answer: 'The energy is 9.9372 eV'"
"""

from __future__ import annotations

import json
import math
import re
import unicodedata

from pydantic import BaseModel, JsonValue

__all__ = ["AnswerCheck", "check_answer", "normalise_text"]

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


class AnswerCheck(BaseModel):
    """Whether an answer passed, and why not when it did not."""

    passed: bool
    reason: str | None = None


def normalise_text(text: str) -> str:
    """Text as the string rule compares it (before any case folding)."""
    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        text = text[1:-1].strip()
    return text[:-1].rstrip() if text.endswith(".") and not re.search(r"\d\.$", text) else text


def _case_blind(expected: str) -> bool:
    return len(expected) > 2 and not re.search(r"\d", expected) and expected[1:] == expected[1:].lower()


def _as_number(text: str, unit: str | None) -> float | None:
    body = normalise_text(text)
    if unit and body.lower().endswith(unit.lower()):
        body = body[: -len(unit)].strip()
    return float(body) if re.fullmatch(_NUMBER, body) else None


def _fail(reason: str) -> AnswerCheck:
    return AnswerCheck(passed=False, reason=reason)


def _numbers(got: float, expected: float, tolerance: float | None) -> AnswerCheck:
    if not math.isfinite(got):
        return _fail(f"got {got}, not a finite number")
    if tolerance is None:
        return AnswerCheck(passed=True) if got == expected else _fail(f"got {got!r}, expected exactly {expected!r}")
    if abs(got - expected) <= tolerance * (1 + 1e-9) + 1e-12:
        return AnswerCheck(passed=True)
    return _fail(f"got {got!r}, expected {expected!r} ± {tolerance:g} (off by {abs(got - expected):.6g})")


def check_answer(got: JsonValue, expected: JsonValue, tolerance: float | None, unit: str | None = None) -> AnswerCheck:
    """Whether ``got`` (the agent's final JSON answer) matches ``expected`` under the rules above."""
    if got is None:
        return _fail("no answer")
    if isinstance(expected, bool):
        if isinstance(got, str) and normalise_text(got).lower() in ("true", "false"):
            got = normalise_text(got).lower() == "true"
        return AnswerCheck(passed=True) if got is expected else _fail(f"got {got!r}, expected {expected!r}")
    if isinstance(expected, (int, float)):
        if isinstance(got, bool):
            return _fail(f"got the boolean {got!r}, expected a number")
        if isinstance(got, str):
            number = _as_number(got, unit)
            if number is None:
                prose = re.search(_NUMBER, got) is not None
                return _fail(f"a number inside prose is not an answer: {got!r}" if prose else f"got the text {got!r}, expected a number")
            got = number
        if not isinstance(got, (int, float)):
            return _fail(f"got {type(got).__name__} {got!r}, expected a number")
        return _numbers(float(got), float(expected), tolerance)
    if isinstance(expected, list):
        if isinstance(got, str):
            try:
                got = json.loads(got)
            except json.JSONDecodeError:
                return _fail(f"got the text {got!r}, expected a list")
        if not isinstance(got, list):
            return _fail(f"got {got!r}, expected a list")
        if len(got) != len(expected):
            return _fail(f"got {len(got)} items, expected {len(expected)}")
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            item = check_answer(g, e, tolerance, unit)
            if not item.passed:
                return _fail(f"item {i}: {item.reason}")
        return AnswerCheck(passed=True)
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            return _fail(f"got {got!r}, expected the keys {sorted(expected)}")
        for key in expected:
            item = check_answer(got[key], expected[key], tolerance, unit)
            if not item.passed:
                return _fail(f"{key}: {item.reason}")
        return AnswerCheck(passed=True)
    if isinstance(expected, str):
        if not isinstance(got, str):
            return _fail(f"got {got!r}, expected the text {expected!r}")
        a, b = normalise_text(got), normalise_text(expected)
        same = a.lower() == b.lower() if _case_blind(b) else a == b
        return AnswerCheck(passed=True) if same else _fail(f"got {got!r}, expected {expected!r}")
    return _fail(f"cannot compare with an expected answer of type {type(expected).__name__}")
