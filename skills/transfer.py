"""Export and import skills as JSON files; an imported skill is re-verified in the sandbox before it is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jobflow import Flow, Job
from monty.json import MontyEncoder
from pydantic import TypeAdapter

from deployments.settings import Settings
from skills.answer_check import check_answer
from skills.documents import Skill
from skills.domain import checked_params
from skills.gpu import prefers_gpu
from skills.maker import SkillMaker
from skills.params import SkillCodeError, signature_schema
from skills.runner import run_skill
from skills.store import SkillStore

__all__ = ["SkillFileError", "export_skill", "export_workflow", "import_skills"]


class SkillFileError(ValueError):
    """A skill file that cannot be imported."""


def export_skill(skill: Skill) -> str:
    return json.dumps(skill.model_dump(mode="json", exclude={"id", "content_hash"}), indent=2)


def export_workflow(skill: Skill, param_sets: list[dict[str, Any]]) -> str:
    """A jobflow ``Flow`` (one job per parameter set) as JSON, runnable with plain jobflow where evoskill is installed.

    No LLM and no store is needed to run it: ``run_locally(monty.serialization.loadfn("flow.json"))``. Each set is
    checked first (``checked_params``: one outside what the skill was verified on is refused), and again by its job.
    """
    maker = SkillMaker.from_skill(skill)
    jobs: list[Flow | Job] = [maker.make(**checked_params(skill, params)) for params in param_sets or [{}]]
    return json.dumps(Flow(jobs, name=skill.id).as_dict(), cls=MontyEncoder, indent=1)


def _verify(skill: Skill, settings: Settings) -> str | None:
    """Why the skill does not pass its own test case here, or None."""
    try:
        if signature_schema(skill.code)["properties"].keys() != skill.parameters.properties.keys():
            return "its parameters do not match run()'s signature"
        params = checked_params(skill, dict(skill.test_case.params))  # a test case outside the skill's own domain: rejected
    except (SkillCodeError, ValueError) as exc:
        return str(exc)
    execution = run_skill(skill, params, settings, gpu=False)  # a file's own word is no reason to show it the GPU
    if not execution.ok:
        return f"its test case failed: {execution.error}"
    check = check_answer(execution.answer, skill.test_case.expected, skill.test_case.tolerance)
    if not check.passed:
        return f"its test case failed: {check.reason}"
    return None


def import_skills(path: Path, store: SkillStore, settings: Settings) -> list[tuple[str, str]]:
    """Import one skill or a list from ``path``; returns (skill, 'stored ID' | 'known ID' | 'rejected: why') rows."""
    try:
        data = json.loads(Path(path).read_text())
        skills: list[Skill] = TypeAdapter(list[Skill]).validate_python(data if isinstance(data, list) else [data])
    except (OSError, ValueError) as exc:  # unreadable, not UTF-8, not JSON, or not skills (ValidationError)
        raise SkillFileError(f"{path}: not a skill file ({str(exc).splitlines()[0]})") from exc
    rows = []
    for skill in skills:
        # Its words are now its importer's: shown to them alone (skills/disclosure.py).
        skill = skill.model_copy(update={"provenance": skill.provenance.model_copy(update={"source": "import", "user": settings.user})})
        gpu = prefers_gpu(skill.code)  # read from the code, as when learned: the file's own flags could ask for the GPU's devices
        skill = skill.model_copy(update={"resources": skill.resources.model_copy(update={"gpu": skill.resources.gpu and gpu, "gpu_preferred": gpu})})
        problem = _verify(skill, settings)
        if problem:
            rows.append((skill.name, f"rejected: {problem}"))
            continue
        stored, new = store.put_skill(skill)
        rows.append((skill.name, f"{'stored' if new else 'known'} {stored.id}"))
    return rows
