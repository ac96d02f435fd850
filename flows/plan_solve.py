"""Plan-and-CodeAct: a planner outer loop dispatching sub-tasks to the DeepSolver, within a budget.

plan → for each sub-task: deep_solve (research → execute → debug) → compress its trace →
replan (continue | replan | finish) → … until finished, out of steps or replans, or out of LLM budget.
Each sub-task sees the compressed answers of the earlier ones, never their full trajectories.
"""

from __future__ import annotations

import time

from prefect import flow
from pydantic import BaseModel, Field, JsonValue

from deployments.llm.client import LLMClient, make_client
from deployments.llm.transport import LLMBudgetExceeded, LLMSchemaError
from deployments.progress import report
from deployments.settings import Settings, get_settings
from flows.deep_solve import DeepSolveOutcome, run_deep_solve
from skills.answer_spec import read_answer_spec
from tasks.context import compress_trace
from tasks.debug_strategies import check_strategies
from tasks.models import PlanDecision, SolveRequest, SubTask, TraceSummary
from tasks.planner import plan, replan

__all__ = ["PlanStep", "PlanOutcome", "plan_solve", "summarise_step"]


class PlanStep(BaseModel):
    subtask: SubTask
    summary: TraceSummary
    full_trace_chars: int = Field(default=0, description="Size of the full trajectory the summary stands for.")


class PlanOutcome(BaseModel):
    """The result of a planned solve: the answer, each step's summary, and what it cost."""

    query: str
    success: bool = False
    answer: JsonValue = None
    steps: list[PlanStep] = Field(default_factory=list)
    replans: int = 0
    stopped: str = Field(default="", description="Why the loop ended: finished, steps, replans, budget or error.")
    llm_calls: int = 0
    tokens: int = 0
    tokens_by_stage: dict[str, int] = Field(default_factory=dict)
    wall_s: float = 0.0


def summarise_step(goal: str, outcome: DeepSolveOutcome, settings: Settings) -> TraceSummary:
    """The compressed trace of one sub-task's DeepSolve."""
    errors = [outcome.code_agent.error] + [a.error for b in outcome.debug for a in b.attempts]
    outputs = [outcome.code_agent.execution.stdout] if outcome.code_agent.execution else []
    solution = outcome.code_agent.solution
    packages: list[JsonValue] = list(solution.packages) if outcome.answer.code and solution else []
    return compress_trace(
        goal, outcome.answer.success, outcome.answer.answer, errors,
        parameters={"packages": packages}, outputs=outputs, settings=settings,
    )  # fmt: skip


def _context(steps: list[PlanStep], full: list[str], compress: bool) -> str:
    if not steps:
        return ""
    if compress:
        return "Results of earlier sub-tasks:\n" + "\n".join(s.summary.render() for s in steps)
    return "Earlier sub-tasks (full trajectories):\n" + "\n".join(full)


@flow(name="plan-solve", flow_run_name="plan-solve", validate_parameters=False)
def plan_solve(query: str, settings: Settings | None = None, llm: LLMClient | None = None, max_steps: int = 6, max_replans: int = 2) -> PlanOutcome:
    """Solve a multi-step ``query``: plan, solve each sub-task with the DeepSolver, replan on feedback."""
    settings = check_strategies(settings or get_settings())
    llm = llm or make_client(settings)
    started = time.perf_counter()
    outcome = PlanOutcome(query=query)
    full: list[str] = []
    try:
        remaining = list(plan(query, llm).steps)
        while remaining:
            if len(outcome.steps) >= max_steps:
                outcome.stopped = "steps"
                break
            subtask = remaining.pop(0)
            context = _context(outcome.steps, full, settings.compress_context)
            request = SolveRequest(query=subtask.goal, spec=read_answer_spec(subtask.goal), run_name=f"step{len(outcome.steps) + 1}", context=context)
            report("plan-solve", "progress", f"step {len(outcome.steps) + 1}: {subtask.goal[:80]}")
            solved = run_deep_solve(request, llm, settings)
            trace = solved.model_dump_json(exclude={"research": {"llm_calls"}})
            full.append(f"{subtask.goal}: {trace}")
            outcome.steps.append(PlanStep(subtask=subtask, summary=summarise_step(subtask.goal, solved, settings), full_trace_chars=len(trace)))
            done = [s.summary.render() for s in outcome.steps] if settings.compress_context else full
            decision: PlanDecision = replan(query, len(outcome.steps), done, remaining, llm)
            if decision.action == "finish":
                outcome.answer = decision.answer if decision.answer is not None else solved.answer.answer
                outcome.success, outcome.stopped = outcome.answer is not None, "finished"
                break
            if decision.action == "replan":
                if outcome.replans >= max_replans:
                    outcome.stopped = "replans"
                    break
                outcome.replans += 1
                remaining = list(decision.steps)
        else:
            last = outcome.steps[-1].summary if outcome.steps else None
            outcome.success = bool(last and last.success)
            outcome.answer = solved.answer.answer if outcome.success else None
            outcome.stopped = "finished"
    except LLMBudgetExceeded as exc:
        outcome.stopped = f"budget: {exc}"
    except LLMSchemaError as exc:
        outcome.stopped = f"error: {exc}"
    outcome.llm_calls = len(llm.calls)
    outcome.tokens = llm.tokens_used()
    for call in llm.calls:
        outcome.tokens_by_stage[call.stage] = outcome.tokens_by_stage.get(call.stage, 0) + call.prompt_tokens
    outcome.wall_s = round(time.perf_counter() - started, 3)
    return outcome
