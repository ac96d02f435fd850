"""Run a stored skill as a jobflow workflow, in this process or on Dask, its output stored in the JobStore.

>>> run_skill("atomization_energy", {"formula": "O2"}, executor="dask").answer   # doctest: +SKIP
8.5753
"""

from __future__ import annotations

import json
from typing import Any, Literal

from jobflow import JobStore
from prefect import flow
from prefect.artifacts import create_markdown_artifact
from pydantic import BaseModel, Field, JsonValue

from deployments.job_runners import JobOutcome, job_runner
from deployments.progress import report
from deployments.settings import get_settings
from skills.maker import SkillMaker
from skills.params import validate_params
from skills.store import open_store

__all__ = ["SkillOutput", "run_skill", "store_outcomes"]


class SkillOutput(BaseModel):
    skill_id: str
    params: dict[str, JsonValue] = Field(default_factory=dict)
    success: bool = False
    answer: JsonValue = None
    job_uuid: str | None = None
    worker: str | None = None
    error: str | None = None


def store_outcomes(job_store: JobStore, outcomes: list[JobOutcome]) -> None:
    """Write finished jobs' documents to the JobStore in one update (by uuid and index: a rerun replaces, never duplicates)."""
    documents = [o.document for o in outcomes if o.ok and o.document is not None]
    if documents:
        job_store.update(documents, key=["uuid", "index"])


@flow(name="run-skill", flow_run_name="run-skill: {skill_ref}", log_prints=False)
def run_skill(skill_ref: str, params: dict[str, Any] | None = None, executor: Literal["local", "dask"] | None = None) -> SkillOutput:
    """Run skill ``skill_ref`` (id or name) with ``params``; ``executor`` defaults to ``EVOSKILL_SKILL_EXECUTOR``. No LLM is involved."""
    settings = get_settings()
    store = open_store(settings)
    skill = store.get_skill(skill_ref)
    bound = validate_params(skill.parameters, params or {})
    job = SkillMaker.from_skill(skill).make(**bound)
    chosen = executor or settings.skill_executor
    report("run-skill", "start", f"{skill.id}({bound}) on {chosen}")
    (outcome,) = job_runner(settings, chosen, lambda message: report("run-skill", "progress", message)).run(job)
    store_outcomes(store.job_store(), [outcome])
    output = SkillOutput(skill_id=skill.id, params=bound, job_uuid=job.uuid, worker=outcome.worker, error=outcome.error, success=outcome.ok)
    if outcome.ok and outcome.document is not None:
        output.answer = outcome.document["output"]
    store.record_use(skill, output.success)
    result = f"`{json.dumps(output.answer)}`" if output.success else f"failed: {output.error}"
    create_markdown_artifact(markdown=f"**{skill.id}**({json.dumps(bound)}) → {result}", key="skill-run", description="skill run")
    report("run-skill", "done" if output.success else "failed", repr(output.answer) if output.success else output.error or "")
    return output
