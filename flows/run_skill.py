"""Run a stored skill as a jobflow workflow, with its outputs in a JobStore on the same backend as the skills."""

from __future__ import annotations

from typing import Any

from jobflow import run_locally
from prefect import flow
from pydantic import BaseModel, Field, JsonValue

from skills.maker import SkillMaker
from skills.params import validate_params
from skills.store import open_store
from tasks.settings import get_settings
from tasks.stage import report

__all__ = ["SkillOutput", "run_skill"]


class SkillOutput(BaseModel):
    skill_id: str
    params: dict[str, JsonValue] = Field(default_factory=dict)
    success: bool = False
    answer: JsonValue = None
    job_uuid: str | None = None
    error: str | None = None


@flow(name="run-skill", flow_run_name="run-skill: {skill_ref}", log_prints=False)
def run_skill(skill_ref: str, params: dict[str, Any] | None = None) -> SkillOutput:
    """Run skill ``skill_ref`` (id or name) with ``params`` through jobflow ``run_locally``; no LLM is involved."""
    settings = get_settings()
    store = open_store(settings)
    skill = store.get_skill(skill_ref)
    bound = validate_params(skill.parameters, params or {})
    job = SkillMaker.from_skill(skill).make(**bound)
    report("run-skill", "start", f"{skill.id}({bound})")
    responses = run_locally(job, store=store.job_store(), log=False)
    response = responses.get(job.uuid, {}).get(1)
    output = SkillOutput(skill_id=skill.id, params=bound, job_uuid=job.uuid)
    if response is None:
        output.error = f"the job did not finish; see the sandbox folders under {settings.run_root()}"
    else:
        output.success, output.answer = True, response.output
    store.record_use(skill, output.success)
    report("run-skill", "done" if output.success else "failed", repr(output.answer) if output.success else output.error or "")
    return output
