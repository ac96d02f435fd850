"""Which lifted parameters matter, and which unstated constants do: one sandbox run of perturbed values.

A lifted parameter must change the answer when given another valid value; one that does not is
put back as a constant. A constant the question never states but that changes the answer (a
lattice constant, a supercell size) is a *hidden input*: it may belong to the verified example's
material, so the skill declines to answer for another material (``skills/binding.py``).

>>> perturbed("number", 0.01)[:2], perturbed("element", "Cu")[:2], perturbed("formula", "NaCl")[:3]
([0.011, 0.02], ['Ag', 'Zn'], ['KCl', 'NaCl2', 'LiCl'])
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field, JsonValue

from deployments.settings import Settings
from skills.answer_check import check_answer
from skills.chemistry import canonical_smiles, element_neighbours, formula_elements
from skills.lifting import Lifted, LiftedDraft, render, schema_of, where
from skills.mentions import Mention
from skills.runner import run_skill_code_many

__all__ = ["RelevanceReport", "perturbed", "check_relevance"]

TRIES = 3


class RelevanceReport(BaseModel):
    """The parameters kept, those put back as constants, and the constants that matter though unstated."""

    code: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    kept: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)
    untested: list[str] = Field(default_factory=list, description="Kept parameters for which no other value ran.")
    hidden_inputs: list[str] = Field(default_factory=list)
    independent_of: list[str] = Field(
        default_factory=list, description="Kinds of stated value (element, formula, smiles) the answer was shown not to depend on."
    )
    error: str | None = None


def _formula_variants(formula: str) -> list[str]:
    """Another element in the first or last place, or one more of the last element."""
    elements = formula_elements(formula)
    found = []
    for old in (elements[0], elements[-1]):
        for new in element_neighbours(old)[:2]:
            if new not in elements:
                found.append(re.sub(rf"{old}(?![a-z])", new, formula, count=1))
    last = re.search(r"([A-Z][a-z]?)(\d*)$", formula)
    if last:
        found.insert(1, formula[: last.start(2)] + str(int(last.group(2) or 1) + 1))
    return list(dict.fromkeys(f for f in found if f != formula))


def perturbed(kind: str, value: Any) -> list[Any]:
    """Other valid values of the same kind, to try in turn."""
    if kind == "integer" and isinstance(value, int):
        return [value + 1, value + 2, max(value - 1, 1)]
    if kind == "number" and isinstance(value, (int, float)):
        return [round(value * 1.1, 12), round(value * 2, 12), round(value * 0.5, 12)] if value else [0.1, 1.0, -0.1]
    if kind == "element" and isinstance(value, str):
        return element_neighbours(value)[:TRIES]
    if kind == "formula" and isinstance(value, str):
        return _formula_variants(value)[:TRIES]
    if kind == "smiles" and isinstance(value, str):
        return [s for s in (value + "C", value + "O", "C" + value) if canonical_smiles(s)][:TRIES]
    return []


def _probe(index: int, site: Any, question: str) -> Lifted:
    kind = "integer" if isinstance(site.value, int) else "number"
    return Lifted(f"probe_{index}", kind, site.value, Mention(str(site.value), 0, "number", number=float(site.value)), question, [(site, None)])


def check_relevance(
    draft: LiftedDraft,
    script: str,
    question: str,
    expected: JsonValue,
    tolerance: float | None,
    packages: list[str],
    settings: Settings,
    name: str,
) -> RelevanceReport:
    """Run every parameter and unstated constant with other values; keep what changes the answer."""
    probes = [_probe(i, site, question) for i, site in enumerate(draft.constants)]
    entries = draft.lifted + probes
    sets: list[dict[str, Any]] = [{}]
    owners: list[str | None] = [None]
    numbers = [e for e in draft.lifted if e.kind in ("number", "integer")]
    for entry in entries:
        others = [o.default for o in numbers if o is not entry and o.kind == entry.kind and o.default != entry.default]
        for value in [*perturbed(entry.kind, entry.default), *others[:2]]:  # equal to another parameter: a = c is cubic
            sets.append({entry.name: value})
            owners.append(entry.name)
    code = render(script, entries, question)
    execution, rows = run_skill_code_many(code, packages, sets, settings, f"relevance-{name}")
    if len(rows) != len(sets) or not rows[0].get("ok"):
        reason = execution.error or (rows[0].get("error") if rows else "no result")
        return RelevanceReport(code=draft.code, parameters=draft.parameters, kept=list(draft.parameters), error=f"cannot test: {reason}")
    base = rows[0]["answer"]
    if not check_answer(base, expected, tolerance).passed:
        return RelevanceReport(code=draft.code, parameters=draft.parameters, kept=list(draft.parameters), error="defaults do not reproduce")
    changed: dict[str, bool] = {}
    ran: dict[str, int] = {}
    for owner, row in zip(owners[1:], rows[1:], strict=True):
        assert owner is not None
        if row.get("ok"):
            ran[owner] = ran.get(owner, 0) + 1
            if not check_answer(row.get("answer"), base, tolerance).passed:
                changed[owner] = True
    report = RelevanceReport(code="")
    kept: list[Lifted] = []
    for entry in draft.lifted:
        if changed.get(entry.name):
            kept.append(entry)
            report.kept.append(entry.name)
        elif not ran.get(entry.name):
            kept.append(entry)
            report.kept.append(entry.name)
            report.untested.append(entry.name)
        else:
            report.dropped.append(entry.name)
            if entry.kind in ("element", "formula", "smiles") and ran[entry.name] >= 2 and entry.kind not in report.independent_of:
                report.independent_of.append(entry.kind)
    for probe, site in zip(probes, draft.constants, strict=True):
        if changed.get(probe.name):
            report.hidden_inputs.append(f"{site.value!r} in {where(site)}")
    report.code = render(script, kept, question)
    report.parameters = {entry.name: schema_of(entry) for entry in kept}
    return report
