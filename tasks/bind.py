"""Skill path: bind a skill's parameters from the query (one LLM call) and run it — no code is written."""

from __future__ import annotations

from typing import Any

from prefect import task
from prefect.cache_policies import NONE

from deployments.llm.client import LLMClient
from deployments.llm.transport import LLMError
from deployments.progress import report
from deployments.settings import Settings
from skills.answer_spec import AnswerSpec, coerce_answer, format_answer
from skills.documents import Skill
from skills.grounding import GroundingError, ground_params
from skills.params import ParameterError, params_model, validate_params
from skills.runner import run_skill
from tasks.models import SkillRun, SolveRequest
from tasks.stage import Stopwatch, retry_on_transient

__all__ = ["bind_parameters", "run_bound_skill"]


def bind_parameters(request: SolveRequest, skill: Skill, llm: LLMClient) -> dict[str, Any]:
    """Values for the skill's parameters: proposed by the model, grounded in the query, validated by the schema."""
    properties = skill.parameters.get("properties", {})
    if not properties:
        return {}
    lines = [f"- {name} ({prop.get('type')}): {prop.get('description', '')}" for name, prop in properties.items()]
    system = "Extract parameter values from the question. Copy each value exactly as it is written in the question; use null when it is not there."
    user = f"Question: {request.query}\n\nParameters:\n" + "\n".join(lines)
    reply = llm.structured("bind", system, user, params_model(skill.parameters, optional=True))
    proposed = {k: v for k, v in reply.model_dump().items() if v is not None}
    return validate_params(skill.parameters, ground_params(skill.parameters, proposed, request.query))


@task(name="skill", task_run_name="skill: {skill.name}", cache_policy=NONE, retry_condition_fn=retry_on_transient)
def run_bound_skill(request: SolveRequest, skill: Skill, llm: LLMClient, settings: Settings) -> SkillRun:
    """Bind parameters, run the skill in the sandbox, and hold its answer to the query's format."""
    watch = Stopwatch()
    report("skill", "start", skill.id)
    done: dict[str, Any] = dict(stage="skill", started_at=watch.started_at, skill_id=skill.id, code=skill.code)
    try:
        params = bind_parameters(request, skill, llm)
    except (LLMError, ParameterError, GroundingError) as exc:
        report("skill", "failed", str(exc))
        return SkillRun(**done, wall_s=watch.elapsed(), llm_calls=llm.calls_for("bind"), error=f"binding parameters: {exc}")
    report("skill", "progress", f"{skill.id}({params})")
    execution = run_skill(skill, params, settings)
    spec = request.spec if request.spec.output_type != "any" else AnswerSpec(output_type=skill.output_type, unit=skill.unit)
    value, problem = coerce_answer(execution.answer, spec) if execution.ok else (None, execution.error or "the skill failed")
    result = SkillRun(
        **done,
        wall_s=watch.elapsed(),
        llm_calls=llm.calls_for("bind"),
        params=params,
        execution=execution,
        success=problem is None,
        answer=value,
        formatted=format_answer(value, spec) if problem is None else None,
        error=problem,
    )
    report("skill", "done" if result.success else "failed", result.formatted or problem or "")
    return result
