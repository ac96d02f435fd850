"""The compile stage: a verified skill from accepted code (``skills.compile``), kept in the store."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE

from deployments.llm.client import LLMClient
from deployments.progress import report
from deployments.settings import Settings
from skills.compile import CompileRequest, CompileResult, compile_skill
from skills.store import SkillStore

__all__ = ["compile_and_store"]


@task(name="compile-skill", task_run_name="compile-skill", cache_policy=NONE)
def compile_and_store(request: CompileRequest, settings: Settings, store: SkillStore, llm: LLMClient | None = None) -> CompileResult:
    """Compile a verified skill and keep it; nothing is stored when verification fails."""
    report("compile", "start")
    result = compile_skill(request, settings, llm)
    if result.ok and result.skill is not None:
        result.skill, result.new = store.put_skill(result.skill)
        report("compile", "done", f"{'stored' if result.new else 'already known'}: {result.skill.id} ({result.method})")
    else:
        report("compile", "failed", "; ".join(result.reasons))
    return result
