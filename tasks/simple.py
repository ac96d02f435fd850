"""SimpleSolver: write code from memory and run it once; the caller escalates to DeepSolver on failure."""

from __future__ import annotations

from typing import Any

from prefect import task
from prefect.cache_policies import NONE

from deployments.llm.client import LLMClient
from deployments.llm.transport import LLMBudgetExceeded, LLMSchemaError
from deployments.progress import report
from deployments.sandbox.execute import SandboxLimits, run_code
from deployments.settings import Settings
from tasks.code_agent import judge_execution
from tasks.models import CodeAgentResult, SolveRequest
from tasks.research import SCRIPT_RULES, CodeReply, answer_instructions
from tasks.stage import Stopwatch, retry_on_transient, settled

__all__ = ["simple_solve"]


@task(name="simple", task_run_name="simple", cache_policy=NONE, retry_condition_fn=retry_on_transient)
@settled
def simple_solve(request: SolveRequest, llm: LLMClient, settings: Settings) -> CodeAgentResult:
    """One script written with the recalled memories in view, executed exactly once."""
    watch = Stopwatch()
    report("simple", "start")
    done: dict[str, Any] = dict(stage="simple", started_at=watch.started_at)
    user = f"Question: {request.query}\n\n{answer_instructions(request)}\n\nAdapt what you can from these:\n{request.context}"
    try:
        solution = llm.structured("simple", f"You are a scientific programmer. {SCRIPT_RULES}", user, CodeReply).to_solution()
    except (LLMSchemaError, LLMBudgetExceeded) as exc:
        report("simple", "failed", str(exc))
        return CodeAgentResult(**done, wall_s=watch.elapsed(), llm_calls=llm.calls_for("simple"), error=str(exc))
    execution = run_code(solution.code, settings.run_root(), SandboxLimits.from_settings(settings), f"{request.run_name}-simple")
    error = judge_execution(execution, request)
    report("simple", "failed" if error else "done", error or f"answer {execution.answer!r}")
    return CodeAgentResult(
        **done,
        wall_s=watch.elapsed(),
        llm_calls=llm.calls_for("simple"),
        solution=solution,
        execution=execution,
        needs_debug=error is not None,
        error=error,
    )
