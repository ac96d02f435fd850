"""Run a stored skill as a jobflow workflow, in this process or on Dask, its output stored in the JobStore.

>>> run_skill("atomization_energy", {"formula": "O2"}, executor="dask").answer   # doctest: +SKIP
8.5753
"""

from __future__ import annotations

import json
from typing import Any, Literal

from jobflow import Job, JobStore
from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from pydantic import BaseModel, Field, JsonValue

from deployments.job_runners import JobOutcome, JobRunner, job_runner
from deployments.progress import report
from deployments.run_states import failed_state, kept, outcome_of
from deployments.settings import get_settings
from skills.domain import checked_params
from skills.maker import SkillMaker
from skills.params import params_text
from skills.store import open_store

__all__ = ["SkillOutput", "run_skill", "run_skill_flow", "store_outcomes", "job_label"]


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


def job_label(skill_id: str, params: dict[str, Any], index: int | None = None) -> str:
    """A job's name in the Prefect UI: the skill and the parameters it runs with, e.g. ``atomization-v1(formula=O2)``."""
    where = f"[{index}]" if index is not None else ""
    return f"{skill_id}{where}({params_text(params)})"[:300]


@task(name="skill-job", task_run_name="{label}", cache_policy=NONE)
def _run_job(label: str, job: Job, runner: JobRunner) -> JobOutcome:
    """Run one skill job (in the sandbox, here or on a Dask worker); the task run ends Failed when the job did."""
    (outcome,) = runner.run(job)
    return outcome if outcome.ok else failed_state(outcome, outcome.error or "the job failed")  # type: ignore[return-value]  # the run ends Failed; outcome_of gives the outcome


@flow(name="run-skill", flow_run_name="run-skill: {skill_ref}", log_prints=False)
def run_skill_flow(skill_ref: str, params: dict[str, Any] | None = None, executor: Literal["local", "dask"] | None = None) -> SkillOutput:
    """Run a learned skill with parameters through jobflow, in this process or on the Dask cluster. No LLM is involved.

    The run ends Failed, with the skill's error as its message, when the skill gives no answer; parameters that do not
    fit the skill's schema (``ParameterError``) or lie outside what it was verified on (``OutsideDomain``, each reason
    named) fail it before anything runs.

    Args:
        skill_ref: The skill's id (e.g. ase_emt_atomization-v1) or its name for the latest version.
        params: The skill's parameters by name, e.g. {"formula": "O2"}; the skill's defaults fill the rest.
        executor: Where the job runs: "local" (this process) or "dask" (the configured cluster); the settings' when empty.
    """
    settings = get_settings()
    store = open_store(settings)
    skill = store.get_skill(skill_ref)
    bound = checked_params(skill, params or {})  # outside what the skill was verified on: refused with the reason, nothing runs
    job = SkillMaker.from_skill(skill).make(**bound)
    chosen = executor or settings.skill_executor
    report("run-skill", "start", f"{job_label(skill.id, bound)} on {chosen}")
    runner = job_runner(settings, chosen, lambda message: report("run-skill", "progress", message))
    outcome = outcome_of(_run_job(job_label(skill.id, bound), job, runner, return_state=True))
    store_outcomes(store.job_store(), [outcome])
    output = SkillOutput(skill_id=skill.id, params=bound, job_uuid=job.uuid, worker=outcome.worker, error=outcome.error, success=outcome.ok)
    if outcome.ok and outcome.document is not None:
        output.answer = outcome.document["output"]
    store.record_use(skill, output.success)
    result = f"`{json.dumps(output.answer)}`" if output.success else f"failed: {output.error}"
    create_markdown_artifact(markdown=f"**{skill.id}**({params_text(bound)}) → {result}", key="skill-run", description="skill run")
    report("run-skill", "done" if output.success else "failed", repr(output.answer) if output.success else output.error or "")
    if output.success:
        return kept(output)
    return failed_state(output, f"{skill.id} gave no answer: {output.error or 'no result'}")  # type: ignore[return-value]  # the run ends Failed; run_skill gives callers the output


def run_skill(skill_ref: str, params: dict[str, Any] | None = None, executor: Literal["local", "dask"] | None = None) -> SkillOutput:
    """Run the ``run-skill`` flow and give its ``SkillOutput``, answered or not (a run without an answer ends Failed)."""
    return outcome_of(run_skill_flow(skill_ref, params, executor, return_state=True))
