"""Skill path: choose a recalled skill that computes *this* question, bind its parameters, run it — no code is written.

Binding is the question's words (``skills/binding.py``), precision first: a skill that is not
sure declines with its reason, and the next recalled skill is tried. No model is asked: a small
model's reading of the question, once a second opinion here, declined correct readings and caught
no wrong one on the transfer suite and the starter library's rewordings, at seconds per answer.
A skill that declines only for words (the question would bind were it one of its verified
questions, inside what it was verified on) is a near miss: its decline carries the values, to offer
it (``tasks/suggest.py``) and to grow it by evidence (``tasks/grow.py``).
"""

from __future__ import annotations

from typing import Any

from prefect import task
from prefect.cache_policies import NONE
from pydantic import BaseModel

from deployments.progress import report
from deployments.sandbox.models import ExecutionResult
from deployments.settings import Settings
from skills.answer_spec import AnswerSpec, coerce_answer, format_answer
from skills.binding import Binding, BindingDeclined, bind, ran_with
from skills.disclosure import shared_view
from skills.documents import BoundValue, Skill
from skills.domain import checked_params
from skills.params import ParameterError, validate_params
from skills.run_errors import explain_run_error
from skills.runner import run_skill
from tasks.models import Recall, SkillDecline, SkillMatch, SkillRun, SolveRequest
from tasks.stage import Stopwatch, retry_on_transient, settled

__all__ = ["SkillChoice", "choose_skill", "choose_recalled", "near_miss", "run_bound_skill"]


class SkillChoice(BaseModel):
    """The skill that binds the question, with its binding, and why the ones before it declined."""

    match: SkillMatch | None = None
    binding: Binding | None = None
    declined: list[SkillDecline] = []


def near_miss(skill: Skill, query: str) -> list[BoundValue] | None:
    """Every parameter bound from ``query``'s values had it been one of the skill's verified questions, inside what the
    skill was verified on (``checked_params``); None when more than words stand in the way."""
    taught = skill.model_copy(update={"provenance": skill.provenance.with_wording(query, "")})
    try:
        binding = bind(taught, query)
        params = checked_params(skill, binding.params)
    except (BindingDeclined, ParameterError):
        return None
    return ran_with(binding.bound, params, skill)


def choose_skill(request: SolveRequest, matches: list[SkillMatch]) -> SkillChoice:
    """The first of ``matches`` (best first) whose parameters the question binds without doubt (no LLM)."""
    choice = SkillChoice()
    for match in matches:
        try:
            binding = bind(match.skill, request.query)
            validate_params(match.skill.parameters, binding.params)
        except (BindingDeclined, ParameterError) as exc:
            near = near_miss(match.skill, request.query) if isinstance(exc, BindingDeclined) else None
            choice.declined.append(SkillDecline(skill_id=match.skill.id, similarity=match.similarity, reason=str(exc), near=near))
            report("skill", "progress", f"{match.skill.id} declined: {exc}" + (" (a near miss: only words stood in the way)" if near else ""))
            continue
        choice.match, choice.binding = match, binding
        break
    return choice


def choose_recalled(request: SolveRequest, found: Recall | None, settings: Settings) -> SkillChoice:
    """``choose_skill`` over the recalled skills close enough to try; the declined ones include those not tried, and why."""
    if found is None:
        return SkillChoice()
    choice = choose_skill(request, found.usable_skills(settings))
    choice.declined = sorted([*found.untried(settings), *choice.declined], key=lambda d: -d.similarity)
    return choice


def _failure(execution: ExecutionResult, params: dict[str, Any]) -> str:
    """Why the run failed: a sentence naming the parameter value it could not use, when it was one, over the raw error."""
    raw = execution.error or "the skill failed"
    sentence = explain_run_error(execution.stderr, params)
    return f"{sentence}\n{raw}" if sentence else raw


@task(name="skill", task_run_name="skill: {skill.name}", cache_policy=NONE, retry_condition_fn=retry_on_transient)
@settled
def run_bound_skill(request: SolveRequest, skill: Skill, binding: Binding, settings: Settings) -> SkillRun:
    """Run the skill with its binding in the sandbox, and hold its answer to the query's format."""
    watch = Stopwatch()
    report("skill", "start", skill.id)
    shown_code = shared_view(skill, request.user).code  # the code as the asker may see it (the stored skill is what runs)
    done: dict[str, Any] = dict(stage="skill", started_at=watch.started_at, skill_id=skill.id, code=shown_code, bound=binding.bound)
    try:
        params = validate_params(skill.parameters, binding.params)
    except ParameterError as exc:
        report("skill", "failed", str(exc))
        return SkillRun(**done, wall_s=watch.elapsed(), error=f"binding parameters: {exc}")
    report("skill", "progress", f"{skill.id}({params})")
    execution = run_skill(skill, params, settings)
    spec = request.spec if request.spec.output_type != "any" else AnswerSpec(output_type=skill.output_type, unit=skill.unit)
    value, problem = coerce_answer(execution.answer, spec) if execution.ok else (None, _failure(execution, params))
    done["bound"] = ran_with(binding.bound, params, skill)  # every parameter it ran with, defaults included
    result = SkillRun(
        **done,
        wall_s=watch.elapsed(),
        params=params,
        execution=execution,
        success=problem is None,
        answer=value,
        formatted=format_answer(value, spec) if problem is None else None,
        error=problem,
    )
    report("skill", "done" if result.success else "failed", result.formatted or problem or "")
    return result
