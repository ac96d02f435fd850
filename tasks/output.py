"""Output Processor: picks the answer, preferring one that several executions agree on, and formats it."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from prefect import task
from prefect.cache_policies import NONE
from pydantic import JsonValue

from deployments.progress import report
from deployments.sandbox.models import ExecutionResult
from skills.answer_spec import coerce_answer, consensus_key, format_answer
from tasks.models import (
    CodeAgentResult,
    DebugResult,
    FinalAnswer,
    Solution,
    SolveRequest,
)
from tasks.stage import Stopwatch, settled

__all__ = ["output_processor"]


def _executions(first: CodeAgentResult, branches: list[DebugResult]) -> list[tuple[str, Solution | None, ExecutionResult | None, str | None]]:
    """Every final execution in pipeline order: the first run, then each branch's last attempt."""
    rows = [("code-agent", first.solution, first.execution, first.error)]
    for branch in branches:
        last = branch.last
        rows.append((branch.stage, last.solution if last else None, last.execution if last else None, branch.error))
    return rows


@task(name="output-processor", task_run_name="output-processor", cache_policy=NONE)
@settled
def output_processor(request: SolveRequest, first: CodeAgentResult, branches: list[DebugResult]) -> FinalAnswer:
    """Choose among all valid answers (largest agreeing group, then pipeline order) and format it."""
    watch = Stopwatch()
    report("output-processor", "start")
    groups: dict[str, list[tuple[str, JsonValue, str]]] = defaultdict(list)
    failures = []
    for source, solution, execution, error in _executions(first, branches):
        if execution is None or not execution.ok or solution is None:
            failures.append(f"{source}: {error or 'no result'}")
            continue
        value, problem = coerce_answer(execution.answer, request.spec)
        if problem:
            failures.append(f"{source}: {problem}")
            continue
        groups[consensus_key(value)].append((source, value, solution.code))
    done: dict[str, Any] = dict(stage="output-processor", started_at=watch.started_at, spec=request.spec)
    if not groups:
        error = "no execution produced a valid answer — " + "; ".join(failures)
        report("output-processor", "failed", error)
        return FinalAnswer(**done, wall_s=watch.elapsed(), error=error)
    best = max(groups.values(), key=len)  # max keeps the first of equal groups: pipeline order
    source, value, code = best[0]
    formatted = format_answer(value, request.spec)
    report("output-processor", "done", f"{formatted} from {source}, agreed by {len(best)}")
    return FinalAnswer(
        **done,
        wall_s=watch.elapsed(),
        success=True,
        answer=value,
        formatted=formatted,
        source=source,
        agreeing_sources=[s for s, _, _ in best],
        code=code,
    )
