"""The learn step after a solve: critic → compile → store (and grow the near misses by the accepted answer), or keep the
failure as an experience."""

from __future__ import annotations

from typing import Any

from deployments.llm.client import LLMClient
from deployments.settings import Settings
from skills.compile import CompileRequest, default_tolerance
from skills.documents import Experience, Provenance, RunRecord
from skills.store import SkillStore
from tasks.compile import compile_and_store
from tasks.critic import critic
from tasks.grow import grow_near_misses
from tasks.models import (
    CriticInput,
    Learned,
    SolveRequest,
    SolveResult,
    SolveTrajectory,
)
from tasks.stage import Stopwatch
from tasks.tools.memory import save_to_memory

__all__ = ["learn_from_solve", "remember_failure", "record_run"]


def _agreement(t: SolveTrajectory) -> tuple[int, int, int]:
    """(final executions, how many gave the chosen answer, how many succeeded with another answer)."""
    answer = t.answer
    agreeing: set[str | None] = (set(answer.agreeing_sources) or {answer.source}) if answer else set()
    succeeded = {b.stage for b in t.debug if b.success}
    return 1 + len(t.debug), max(len(agreeing), 1), len(succeeded - agreeing)


def learn_from_solve(
    request: SolveRequest, t: SolveTrajectory, path: str, store: SkillStore, llm: LLMClient, settings: Settings
) -> Learned:
    """Judge the accepted answer; keep it as a skill and as memories, or as a rejected experience."""
    watch = Stopwatch()
    answer = t.answer
    assert answer is not None and answer.code is not None
    executions, agreeing, disagreeing = _agreement(t)
    tolerance = default_tolerance(answer.answer, request.spec)
    critique = critic(
        CriticInput(
            request=request,
            answer=answer.answer,
            code=answer.code,
            path=path,
            llm_calls=len(llm.calls),
            executions=executions,
            agreeing=agreeing,
            disagreeing=disagreeing,
            tolerance=tolerance,
        ),
        settings,
    )
    learned = Learned(critique=critique)
    if not critique.accepted:
        experience = Experience(
            query=request.query, path=path, verdict="rejected", reasons=critique.reasons, code=answer.code,
            answer=answer.answer, flow_run_id=t.result.flow_run_id,
        )
        store.put(experience)
        learned.experience_id = experience.id
    else:
        packages = sorted({p for r in (t.simple, t.code_agent) if r and r.solution for p in r.solution.packages})
        learned.compiled = compile_and_store(
            CompileRequest(
                code=answer.code,
                packages=packages,
                query=request.query,
                expected=answer.answer,
                tolerance=tolerance,
                spec=request.spec,
                provenance=Provenance(
                    query=request.query, source="solve", flow_run_id=t.result.flow_run_id, model=llm.model, user=request.user
                ),
            ),
            settings,
            store,
            llm,
        )
        learned.stored = learned.compiled.new
        kept: dict[str, Any] = dict(condition=request.query, source=t.result.flow_run_id, user=request.user)
        save_to_memory(store, "execution", request.query, answer.code, **kept)
        save_to_memory(store, "planning", request.query, _strategy(t, path), **kept)
        if any(d.near is not None for d in t.skill_declined):
            learned.grown = grow_near_misses(request, t.skill_declined, answer.answer, store, settings)
    learned.wall_s = watch.elapsed()
    return learned


def _strategy(t: SolveTrajectory, path: str) -> str:
    """What worked, in a sentence a later planner can use."""
    if path == "simple":
        return "Adapting remembered code worked on the first run."
    if t.code_agent is not None and not t.code_agent.needs_debug:
        return "The first researched script worked as written."
    fixed = [b.strategy for b in t.debug if b.success]
    first_error = (t.code_agent.error or "")[:200] if t.code_agent else ""
    return f"The first script failed ({first_error}); the {', '.join(fixed)} debug strategy fixed it."


def remember_failure(store: SkillStore, request: SolveRequest, path: str, result: SolveResult) -> None:
    """A solve that found no answer is kept as a failure mode."""
    store.put(
        Experience(
            query=request.query, path=path, verdict="failed", reasons=[result.error or "no answer"], code=result.code,
            flow_run_id=result.flow_run_id,
        )
    )


def record_run(store: SkillStore, result: SolveResult, request: SolveRequest) -> None:
    if result.flow_run_id:
        store.put(
            RunRecord(
                flow_run_id=result.flow_run_id, query=request.query, path=result.path, success=result.success,
                answer=result.answer, skill_id=result.skill_id, llm_calls=result.llm_calls, wall_s=result.wall_s,
            )
        )
