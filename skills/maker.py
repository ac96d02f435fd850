"""``SkillMaker``: a stored skill as a jobflow Job, runnable locally, on Dask or by any jobflow manager.

>>> from jobflow import run_locally
>>> maker = SkillMaker.from_skill(skill)                              # doctest: +SKIP
>>> job = maker.make(formula="O2")                                    # doctest: +SKIP
>>> responses = run_locally(job, store=store.job_store(), log=False)  # doctest: +SKIP
>>> responses[job.uuid][1].output                                     # doctest: +SKIP
8.5753
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobflow import Job, Maker, job

from deployments.job_runners import GPU_OPTIONAL, prefer_gpu
from deployments.settings import get_settings
from skills.documents import Skill
from skills.domain import checked_params
from skills.runner import run_skill

__all__ = ["SkillMaker", "run_skill_job"]


class SkillRunError(RuntimeError):
    """The skill ran but gave no answer."""


@job
def run_skill_job(skill: dict[str, Any], params: dict[str, Any]) -> Any:
    """Check ``params`` against the skill's schema and what it was verified on (``skills/domain.py``), then run it in the
    sandbox of the machine running the job; values outside its domain fail the job with the reason, before anything runs."""
    model = Skill.model_validate(skill)
    execution = run_skill(model, checked_params(model, params), get_settings())
    if not execution.ok:
        raise SkillRunError(f"skill {model.id} failed: {execution.error}")
    return execution.answer


@dataclass
class SkillMaker(Maker):
    """Makes a Job running one skill; its ``config.manager_config["resources"]`` is ``{"GPU": 1}`` when the skill needs a GPU
    or prefers one (``manager_config["gpu_optional"]``: then it runs on the CPU where no worker has a GPU).

    The job runs the skill in the sandbox of the machine running it and needs only evoskill installed
    there (no LLM, no store): ``run_locally``, Dask (``deployments.job_runners``) or any jobflow manager.
    """

    name: str = "skill"
    skill: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_skill(cls, skill: Skill) -> SkillMaker:
        return cls(name=skill.id, skill=skill.model_dump(mode="json"))

    def make(self, **params: Any) -> Job:
        made = run_skill_job(self.skill, params)
        made.name = self.name
        made.metadata = {**(made.metadata or {}), "skill_id": self.name}
        wanted = self.skill.get("resources", {})
        if wanted.get("gpu"):  # needs one: waits for a GPU worker, or fails with the reason
            made.config.manager_config = {**made.config.manager_config, "resources": {"GPU": 1}, GPU_OPTIONAL: False}
        elif wanted.get("gpu_preferred"):
            prefer_gpu(made)
        else:
            made.config.manager_config = {**made.config.manager_config, "resources": {}, GPU_OPTIONAL: False}
        return made
