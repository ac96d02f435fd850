"""Near misses are offered, not dropped: a recalled skill that every value of the question binds, declined only for words
it was not verified on, becomes a ``Suggestion`` the asker may accept.

Unaccepted, the question goes on to code as before and the suggestion comes back beside the answer. Accepted, the skill
answers through the skill path (``run_bound_skill``: its values checked against what it was verified on) and, when it answers, the question joins its verified questions: the wording binds next time.

>>> from skills.documents import BoundValue
>>> Suggestion(skill_id="ase_emt_atomization-v1", params={"formula": "CO"}, bound=[BoundValue(name="formula", value="CO", words="CO")],
...            verified_on="Atomization energy of N2 with EMT", reason="...").offer()
'This looks like ase_emt_atomization-v1 with formula=CO (it was verified on "Atomization energy of N2 with EMT"). Run it?'
"""

from __future__ import annotations

from deployments.progress import report
from deployments.settings import Settings
from skills.binding import Binding
from skills.disclosure import describe, shared_view
from skills.documents import Skill, Suggestion
from skills.store import SkillStore
from tasks.bind import run_bound_skill
from tasks.models import Recall, SkillDecline, SkillRun, SolveRequest
from tasks.stage import run_stage

__all__ = ["Suggestion", "suggestion", "answer_by_suggestion"]

VERIFIED_CHARS = 240


def verified_on(skill: Skill, user: str) -> str:
    """The question the skill was verified on as ``user`` may see it (``shared_view``), else what its code computes."""
    question = shared_view(skill, user).provenance.query
    if not question:
        return describe(skill)
    return question if len(question) <= VERIFIED_CHARS else question[: VERIFIED_CHARS - 1] + "…"


def suggestion(declined: list[SkillDecline], found: Recall | None, user: str) -> Suggestion | None:
    """The closest near miss of ``declined`` (its values bound, only words in the way) as an offer to ``user``, or None."""
    skills = {m.skill.id: m.skill for m in found.skills} if found else {}
    near = sorted((d for d in declined if d.near is not None and d.skill_id in skills), key=lambda d: -d.similarity)
    if not near:
        return None
    best = near[0]
    bound = best.near or []
    offer = Suggestion(
        skill_id=best.skill_id, params={b.name: b.value for b in bound}, bound=bound, verified_on=verified_on(skills[best.skill_id], user),
        reason=best.reason,
    )  # fmt: skip
    report("skill", "progress", offer.offer())
    return offer


def answer_by_suggestion(
    request: SolveRequest, offer: Suggestion, found: Recall, store: SkillStore, settings: Settings
) -> SkillRun:
    """Answer through the suggested skill (the skill path); when it answers, it learns the question's wording."""
    skill = next(m.skill for m in found.skills if m.skill.id == offer.skill_id)
    binding = Binding(params=dict(offer.params), bound=list(offer.bound))
    run = run_stage(run_bound_skill, request, skill, binding, settings)
    if not run.cancelled:  # a cancelled run says nothing of the skill
        store.record_use(skill, run.success)
    if run.success:
        store.add_wording(skill, request.query, request.user)
        offer.accepted = True
        report("skill", "done", f"{skill.id} learned this question's wording")
    return run
