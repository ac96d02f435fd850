"""Code Agent: installs what is missing (only when allowed), runs the solution exactly once."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE

from deployments.packages import missing_packages
from deployments.progress import report
from deployments.sandbox.execute import SandboxLimits, run_code
from deployments.sandbox.models import ExecutionResult
from deployments.settings import Settings
from skills.answer_spec import coerce_answer
from tasks.models import CodeAgentResult, ResearchResult, SolveRequest
from tasks.stage import Stopwatch, settled
from tasks.tools.packages import install_dependencies

__all__ = ["code_agent", "judge_execution"]


def judge_execution(execution: ExecutionResult, request: SolveRequest) -> str | None:
    """Why an execution does not answer the query, or None if it does."""
    if not execution.ok:
        return execution.error or "the script failed"
    _, problem = coerce_answer(execution.answer, request.spec)
    return f"the printed answer has the wrong format: {problem}" if problem else None


@task(name="code-agent", task_run_name="code-agent", cache_policy=NONE)
@settled
def code_agent(request: SolveRequest, researched: ResearchResult, settings: Settings) -> CodeAgentResult:
    """Execute the researched solution once and decide whether it needs debugging."""
    watch = Stopwatch()
    report("code-agent", "start")
    solution = researched.solution
    if solution is None:
        failure = f"no code to run: the researcher failed ({researched.error})"
        report("code-agent", "failed", failure)
        return CodeAgentResult(stage="code-agent", started_at=watch.started_at, wall_s=watch.elapsed(), error=failure)
    missing = missing_packages(solution.packages)
    install = install_dependencies(missing, settings) if missing else None
    execution = run_code(solution.code, settings.run_root(), SandboxLimits.from_settings(settings), f"{request.run_name}-first")
    error = judge_execution(execution, request)
    if error and install and install.refused:
        error += f" (missing packages not installed: {'; '.join(install.refused)})"
    report("code-agent", "failed" if error else "done", error or f"answer {execution.answer!r}")
    return CodeAgentResult(
        stage="code-agent",
        started_at=watch.started_at,
        wall_s=watch.elapsed(),
        solution=solution,
        execution=execution,
        missing_packages=missing,
        installed_packages=install.installed if install else [],
        needs_debug=error is not None,
        error=error,
    )
