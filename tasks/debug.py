"""Debug Agent: one task, parameterised by strategy, making a bounded number of fix attempts.

Each strategy (its goal, prompt and tool plan) is declared in ``tasks/debug_strategies/``.
"""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE

from deployments.llm.client import LLMClient
from deployments.llm.transport import LLMBudgetExceeded, LLMSchemaError
from deployments.progress import report
from deployments.sandbox.execute import SandboxLimits, run_code
from tasks.code_agent import judge_execution
from tasks.debug_strategies import STRATEGIES, DebugStrategy
from tasks.models import CodeAgentResult, DebugAttempt, DebugResult, SolveRequest
from tasks.research import SCRIPT_RULES, CodeReply, answer_instructions
from tasks.stage import Stopwatch, retry_on_transient, settled
from tasks.tool_plans import model_tool_round
from tasks.tools.registry import ToolBox

__all__ = ["debug"]


def _stderr_tail(stderr: str, lines: int = 15) -> str:
    return "\n".join(stderr.strip().splitlines()[-lines:])


def _prompt(strategy: DebugStrategy, request: SolveRequest, code: str, error: str, stderr: str, notes: list[str]) -> str:
    parts = [f"Question: {request.query}", answer_instructions(request), f"Task: {strategy.goal}"]
    if code and strategy.shows_failure:
        parts.append(f"Script:\n```python\n{code}\n```")
    parts.append(f"Error: {error}")
    if stderr and strategy.shows_failure:
        parts.append(f"stderr (end):\n{_stderr_tail(stderr)}")
    if notes:
        parts.append("Found with tools:\n- " + "\n- ".join(notes))
    return "\n\n".join(parts)


@task(name="debug", task_run_name="debug-{strategy}", cache_policy=NONE, retry_condition_fn=retry_on_transient)
@settled
def debug(strategy: str, request: SolveRequest, first: CodeAgentResult, llm: LLMClient) -> DebugResult:
    """Repair the failed first execution with one strategy, up to ``debug_max_attempts`` times."""
    stage = f"debug:{strategy}"
    declared = STRATEGIES[strategy]
    settings = llm.settings
    limits = SandboxLimits.from_settings(settings)
    watch = Stopwatch()
    report(stage, "start")
    code = first.solution.code if first.solution else ""
    error = first.error or "the first execution failed"
    stderr = first.execution.stderr if first.execution else ""
    result = DebugResult(stage=stage, strategy=strategy, started_at=watch.started_at)
    box = ToolBox(settings, user=request.user)
    for attempt in range(1, settings.debug_max_attempts + 1):
        notes = declared.tool_plan(request.query, code, error + "\n" + _stderr_tail(stderr), box, limits)
        notes += model_tool_round(stage, llm, box, request.query, f"Error: {error}")
        try:
            reply = llm.structured(stage, f"You are a debugging agent. {SCRIPT_RULES}", _prompt(declared, request, code, error, stderr, notes), CodeReply)
        except (LLMSchemaError, LLMBudgetExceeded) as exc:
            result.attempts.append(DebugAttempt(attempt=attempt, error=str(exc)))
            if isinstance(exc, LLMBudgetExceeded):
                break
            continue
        solution = reply.to_solution()
        execution = run_code(reply.code, settings.run_root(), limits, f"{request.run_name}-{strategy}-{attempt}")
        problem = judge_execution(execution, request)
        result.attempts.append(DebugAttempt(attempt=attempt, solution=solution, execution=execution, error=problem))
        report(stage, "done" if problem is None else "progress", f"attempt {attempt}: " + (problem or f"answer {execution.answer!r}"))
        if problem is None:
            result.success = True
            break
        code, error, stderr = reply.code, problem, execution.stderr
    result.wall_s = watch.elapsed()
    result.llm_calls = llm.calls_for(stage) + llm.calls_for(f"{stage}:tools")
    result.tool_calls = box.call_log()
    if not result.success:
        result.error = result.attempts[-1].error if result.attempts else "no attempt was made"
        report(stage, "failed", result.error or "")
    return result
