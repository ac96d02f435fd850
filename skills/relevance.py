"""Which lifted parameters matter, and which unstated constants do: one sandbox run of other values.

A lifted substance must change the answer when given another valid value; one that does not is
put back as a constant. A stated number that did not change it is a setting (fmax, a supercell size): it stays a
parameter, run as the question states it, and its default may stand for another substance (``tunables``), as does a
bound the question sets ("molecular weight at most 500") or a count of how it is computed (11 points of a fit): the
criterion's or the method's, not the substance's. A stated substance (an element, formula or SMILES) is tried with
values that differ in what the code reads of it (``skills/probes.py``), and put back only when those values prove the
answer independent of it; when they cannot, it stays a parameter (``inconclusive``). A constant the question never
states but that changes the answer (a lattice constant, a supercell size) is a *hidden input*: it may belong to the
verified example's material, so the skill declines to answer for
another material (``skills/binding.py``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, JsonValue

from deployments.settings import Settings
from skills.answer_check import check_answer
from skills.chemistry import same_formula
from skills.lifting import Lifted, LiftedDraft, bound_name, render, schema_of, where
from skills.mentions import Mention, find_mentions
from skills.params import is_count_setting
from skills.probes import code_names, code_reads, perturbed, probe_values, shown_independent
from skills.runner import run_skill_code_many

__all__ = ["RelevanceReport", "perturbed", "check_relevance"]

SUBSTANCES = ("element", "formula", "smiles")


class RelevanceReport(BaseModel):
    """The parameters kept, those put back as constants, and the constants that matter though unstated."""

    code: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    kept: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)
    untested: list[str] = Field(default_factory=list, description="Kept parameters for which no other value ran.")
    inconclusive: list[str] = Field(
        default_factory=list,
        description="Kept substances whose other values gave the same answer without differing in everything the code reads of them.",
    )
    hidden_inputs: list[str] = Field(default_factory=list)
    independent_of: list[str] = Field(
        default_factory=list, description="Kinds of stated value (element, formula, smiles) the answer was shown not to depend on."
    )
    tunables: list[str] = Field(
        default_factory=list,
        description=(
            "Kept numbers whose verified value may stand for another substance: stated settings whose other values gave the same "
            "answer (fmax, a supercell size), run as stated, and criteria the question sets as bounds (molecular weight at most 500)."
        ),
    )
    error: str | None = None


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
    peers = [e for e in draft.lifted if e.kind in ("number", "integer", "element")]
    names = code_names(script)
    for entry in entries:
        # Equal to another parameter of its kind: a = c is cubic; Cs on both sites of CsCl is bcc.
        others = [o.default for o in peers if o is not entry and o.kind == entry.kind and o.default != entry.default]
        if entry.kind == "formula":  # another substance of a list of entries: what the answer is asked of
            others += [row[0] for t in draft.lifted if t.kind == "entries" for row in t.default if not same_formula(row[0], entry.default)]
        for value in [*probe_values(entry.kind, entry.default, names), *others[:2]]:
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
    ran: dict[str, list[Any]] = {}  # the other values that ran, by parameter
    for owner, values, row in zip(owners[1:], sets[1:], rows[1:], strict=True):
        assert owner is not None
        if row.get("ok"):
            ran.setdefault(owner, []).append(values[owner])
            if not check_answer(row.get("answer"), base, tolerance).passed:
                changed[owner] = True
    report = RelevanceReport(code="")
    kept: list[Lifted] = []
    for entry in draft.lifted:
        if changed.get(entry.name):
            kept.append(entry)
            report.kept.append(entry.name)
            if entry.kind in ("number", "integer") and (bound_name(entry) or is_count_setting(entry.name)):
                report.tunables.append(entry.name)  # a criterion ("molecular weight at most 500") or a count of the method's (11 points)
        elif not ran.get(entry.name):
            kept.append(entry)
            report.kept.append(entry.name)
            report.untested.append(entry.name)
        elif entry.kind == "crystal" and len(ran[entry.name]) < len(perturbed(entry.kind, entry.default)):
            kept.append(entry)  # a crystal is shown not to matter only by every other crystal tried, all of which ran
            report.kept.append(entry.name)
            report.inconclusive.append(entry.name)
        elif entry.kind in ("number", "integer"):
            kept.append(entry)  # a stated setting: its value may matter for another substance, and runs as the question states it
            report.kept.append(entry.name)
            report.tunables.append(entry.name)
        elif entry.kind in SUBSTANCES and not shown_independent(entry.kind, entry.default, ran[entry.name], names):
            kept.append(entry)  # the same answer, but from values that may not differ in what the code reads
            report.kept.append(entry.name)
            report.inconclusive.append(entry.name)
        else:
            report.dropped.append(entry.name)
            if entry.kind in SUBSTANCES and entry.kind not in report.independent_of:
                report.independent_of.append(entry.kind)
            if entry.kind == "crystal" and len(set(entry.default["species"])) == 1 and "element" not in report.independent_of:
                report.independent_of.append("element")  # hcp magnesium's volume per atom: any element on its one site
    for kind in _unread_kinds(script, question, draft):
        if kind not in report.independent_of:
            report.independent_of.append(kind)
    for probe, site in zip(probes, draft.constants, strict=True):
        if changed.get(probe.name):
            report.hidden_inputs.append(f"{site.value!r} in {where(site)}")
    report.code = render(script, kept, question)
    report.parameters = {entry.name: schema_of(entry) for entry in kept}
    return report


def _unread_kinds(script: str, question: str, draft: LiftedDraft) -> list[str]:
    """Kinds of substance the question names that no parameter came from and the code never reads in any form (the
    magnesium of ``Lattice.hexagonal(3.209, 5.211).volume``): the answer cannot depend on which one it is."""
    lifted = {entry.mention.start for entry in draft.lifted}
    kinds: list[str] = []
    for mention in find_mentions(question):
        if mention.kind == "number" or mention.kind == "smiles" or mention.start in lifted or not mention.formula:
            continue
        if code_reads(script, mention.formula):
            return []  # one substance the code reads: the others may be read through it (a formula's elements)
        kinds.append("element" if mention.element else "formula")
    return list(dict.fromkeys(kinds))
