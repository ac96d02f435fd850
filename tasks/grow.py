"""Skills grow by evidence: a recalled skill that declined a question only for its words (a near miss, ``tasks/bind.py``)
is run with the question's values once the code path's answer is accepted. When its answer agrees with the accepted one
within the skill's tolerance, the question joins its verified questions (``Provenance.queries``, asked by the asker), so
its words count as the skill's when binding next time; when it disagrees, or cannot run, nothing is added and the
reason is logged.
"""

from __future__ import annotations

import logging

from prefect import task
from prefect.cache_policies import NONE
from pydantic import JsonValue

from deployments.progress import report
from deployments.settings import Settings
from skills.answer_check import check_answer
from skills.answer_spec import AnswerSpec, coerce_answer
from skills.domain import checked_params
from skills.params import ParameterError, params_text
from skills.runner import run_skill
from skills.store import SkillStore
from tasks.models import Growth, SkillDecline, SolveRequest

__all__ = ["grow_near_misses"]

log = logging.getLogger(__name__)


def _grow(request: SolveRequest, decline: SkillDecline, accepted: JsonValue, store: SkillStore, settings: Settings) -> Growth:
    """Run one near miss with the question's values and keep the question as one of its verified ones if it agrees."""
    try:
        skill = store.get_skill(decline.skill_id)
        params = checked_params(skill, {b.name: b.value for b in decline.near or []})
    except (KeyError, ParameterError) as exc:
        return Growth(skill_id=decline.skill_id, reason=str(exc))
    execution = run_skill(skill, params, settings)
    if not execution.ok:
        return Growth(skill_id=skill.id, reason=f"it failed with {params_text(params) or 'its defaults'}: {execution.error or 'no answer'}")
    spec = request.spec if request.spec.output_type != "any" else AnswerSpec(output_type=skill.output_type, unit=skill.unit)
    value, problem = coerce_answer(execution.answer, spec)
    check = check_answer(value, accepted, skill.test_case.tolerance, unit=spec.unit)  # within the skill's own tolerance
    if problem or not check.passed:
        return Growth(skill_id=skill.id, answer=value, reason=f"its answer disagrees with the accepted one: {problem or check.reason}")
    store.add_wording(skill, request.query, request.user)
    return Growth(skill_id=skill.id, grown=True, answer=value, reason=f"it answers {value!r}, as accepted")


@task(name="grow-skills", task_run_name="grow-skills", cache_policy=NONE)
def grow_near_misses(
    request: SolveRequest, declined: list[SkillDecline], accepted: JsonValue, store: SkillStore, settings: Settings
) -> list[Growth]:
    """Each near miss of ``declined`` run with the question's values; those agreeing with ``accepted`` learn its wording."""
    grown = []
    for decline in (d for d in declined if d.near is not None):
        growth = _grow(request, decline, accepted, store, settings)
        if growth.grown:
            report("grow", "done", f"{growth.skill_id} learned this question's wording: {growth.reason}")
        else:
            report("grow", "progress", f"{growth.skill_id} not grown: {growth.reason}")
            log.info("%s not grown by %r: %s", growth.skill_id, request.query[:120], growth.reason)
        grown.append(growth)
    return grown
