"""DeepSolver: research → execute once → parallel debug branches → output processor."""

from __future__ import annotations

from typing import Any

from prefect import flow, unmapped
from prefect.futures import PrefectFuture
from pydantic import BaseModel, Field

from deployments.cancel import cancel_requested
from deployments.llm.client import LLMClient
from deployments.run_states import cancelled_state, failed_state, kept, outcome_of
from deployments.settings import Settings
from deployments.task_runners import task_runner
from tasks.code_agent import code_agent
from tasks.debug import debug
from tasks.debug_strategies import STRATEGIES, check_strategies
from tasks.models import (
    CodeAgentResult,
    DebugResult,
    FinalAnswer,
    ResearchResult,
    SolveRequest,
)
from tasks.output import output_processor
from tasks.research import research
from tasks.stage import run_stage

__all__ = ["DeepSolveOutcome", "deep_solve", "run_deep_solve", "debug_strategies"]


class DeepSolveOutcome(BaseModel):
    research: ResearchResult
    code_agent: CodeAgentResult
    debug: list[DebugResult] = Field(default_factory=list)
    answer: FinalAnswer


def debug_strategies(settings: Settings) -> list[str]:
    """The debug branches to run: none without debug agents, none that needs self-reflection tools without self-reflection."""
    if not settings.debug_agents:
        return []
    return [s for s in settings.debug_strategies if settings.self_reflection or not STRATEGIES[s].self_reflection]


def _branch(strategy: str, future: PrefectFuture[DebugResult]) -> DebugResult:
    """A branch's result; a branch that crashed becomes a failed result, not a failed solve."""
    future.wait()
    try:
        value = outcome_of(future.state)  # a branch that did not repair the script ends Failed, its result kept
    except Exception as exc:  # noqa: BLE001 - reported as the branch's error
        return DebugResult(stage=f"debug:{strategy}", strategy=strategy, error=f"{type(exc).__name__}: {exc}")
    if isinstance(value, DebugResult):
        return value
    return DebugResult(stage=f"debug:{strategy}", strategy=strategy, error=f"branch ended {future.state.type.value}")


@flow(name="deep-solve", flow_run_name="deep-solve", validate_parameters=False)
def deep_solve(request: SolveRequest, llm: LLMClient, settings: Settings) -> DeepSolveOutcome:
    """Solve ``request`` from scratch with the four-agent DeepSolver."""
    check_strategies(settings)
    retries: dict[str, Any] = dict(retries=settings.llm_transient_retries, retry_delay_seconds=1)
    researched = run_stage(research.with_options(**retries), request, llm)
    first = run_stage(code_agent, request, researched, settings)
    branches: list[DebugResult] = []
    strategies = debug_strategies(settings)
    if first.needs_debug and strategies:
        futures = debug.with_options(**retries).map(
            strategy=strategies, request=unmapped(request), first=unmapped(first), llm=unmapped(llm)
        )
        branches = [_branch(s, f) for s, f in zip(strategies, futures, strict=True)]
        for branch in branches:  # calls made by branches that ran on Dask workers
            llm.absorb(branch.llm_calls)
    answer = run_stage(output_processor, request, first, branches)
    outcome = DeepSolveOutcome(research=researched, code_agent=first, debug=branches, answer=answer)
    if not answer.success and cancel_requested():
        return cancelled_state(outcome, "cancelled by its caller")  # type: ignore[return-value]  # the run ends Cancelled, as its parent solve does
    return kept(outcome) if answer.success else failed_state(outcome, f"no answer: {answer.error or 'every attempt failed'}")  # type: ignore[return-value]  # the run ends Failed; run_deep_solve gives callers the outcome


def run_deep_solve(request: SolveRequest, llm: LLMClient, settings: Settings) -> DeepSolveOutcome:
    """``deep_solve`` on the task runner the settings choose: Dask when a cluster is configured, threads otherwise.

    A deep solve without an answer ends its flow run Failed; its outcome is returned all the same.
    """
    return outcome_of(deep_solve.with_options(task_runner=task_runner(settings))(request, llm, settings, return_state=True))
