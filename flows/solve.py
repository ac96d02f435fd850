"""The solve flow: a question in, an answer (or an honest failure) out, with its trajectory kept.

>>> from flows.solve import solve
>>> result = solve("Compute ... Return a float in eV.")   # doctest: +SKIP
>>> result.success, result.answer, result.stages[0].name  # doctest: +SKIP
(True, 9.9372, 'research')
"""

from __future__ import annotations

import os
import re
import time
import uuid
from pathlib import Path

from prefect import flow
from prefect.artifacts import create_markdown_artifact
from prefect.context import get_run_context

from flows.deep_solve import DeepSolveOutcome, deep_solve
from tasks.answer_spec import read_answer_spec
from tasks.llm import LLMClient, LLMError, make_client
from tasks.models import SolveRequest, SolveResult, StageOutcome, StageRecord, Trajectory
from tasks.settings import Settings, get_settings
from tasks.stage import report

__all__ = ["solve", "run_solve"]


def _record(outcome: StageOutcome, ok: bool) -> StageRecord:
    return StageRecord(name=outcome.stage, wall_s=round(outcome.wall_s, 4), ok=ok, detail=outcome.error)


def _stages(outcome: DeepSolveOutcome) -> list[StageRecord]:
    rows = [_record(outcome.research, outcome.research.solution is not None)]
    rows.append(_record(outcome.code_agent, not outcome.code_agent.needs_debug))
    rows += [_record(b, b.success) for b in outcome.debug]
    rows.append(_record(outcome.answer, outcome.answer.success))
    return rows


def _write(trajectory: Trajectory, settings: Settings) -> Path:
    """Write the trajectory atomically (a crash never leaves half a file)."""
    folder = settings.trajectory_root()
    folder.mkdir(parents=True, exist_ok=True)
    name = trajectory.result.flow_run_id or uuid.uuid4().hex
    path = folder / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(trajectory.model_dump_json(indent=2))
    os.replace(tmp, path)
    return path


def _artifact(result: SolveResult, query: str) -> None:
    rows = "\n".join(f"| {s.name} | {s.wall_s:.2f} | {'yes' if s.ok else 'no'} | {(s.detail or '')[:120]} |" for s in result.stages)
    answer = result.formatted if result.success else f"failed: {result.error}"
    markdown = (
        f"# evoskill solve\n\n**Query:** {query}\n\n**Answer:** {answer}\n\n"
        f"LLM calls: {result.llm_calls}, tokens: {result.tokens}, wall: {result.wall_s:.2f} s\n\n"
        f"| stage | wall s | ok | detail |\n|---|---|---|---|\n{rows}\n\n"
        f"```python\n{result.code or ''}\n```\n"
    )
    create_markdown_artifact(markdown=markdown, key="solve-result", description="evoskill answer, code and stage timings")


def _flow_run_id() -> str | None:
    try:
        return str(get_run_context().flow_run.id)  # type: ignore[union-attr]
    except Exception:  # noqa: BLE001 - outside a flow run
        return None


def run_solve(query: str, settings: Settings, llm: LLMClient | None = None) -> SolveResult:
    """Solve inside the current flow run (``llm`` is made from settings when not given)."""
    started = time.perf_counter()
    request = SolveRequest(
        query=query.strip(), spec=read_answer_spec(query), run_name=re.sub(r"\W+", "-", query[:24]).strip("-").lower() or "solve"
    )
    outcome: DeepSolveOutcome | None = None
    error = None
    try:
        llm = llm or make_client(settings)
        outcome = deep_solve(request, llm, settings)
    except LLMError as exc:
        error = str(exc)
        report("solve", "failed", error)
    calls = llm.calls if llm else []
    answer = outcome.answer if outcome else None
    result = SolveResult(
        success=bool(answer and answer.success),
        answer=answer.answer if answer else None,
        formatted=answer.formatted if answer else None,
        unit=request.spec.unit,
        path="deep",
        llm_calls=len(calls),
        tokens=sum(c.prompt_tokens + c.completion_tokens for c in calls),
        wall_s=round(time.perf_counter() - started, 4),
        stages=_stages(outcome) if outcome else [],
        flow_run_id=_flow_run_id(),
        code=(answer.code if answer and answer.success else _last_code(outcome)),
        error=error or (answer.error if answer else None),
    )
    trajectory = Trajectory(
        request=request,
        result=result,
        research=outcome.research if outcome else None,
        code_agent=outcome.code_agent if outcome else None,
        debug=outcome.debug if outcome else [],
        answer=answer,
        llm_calls=list(calls),
    )
    result.trajectory_path = str(_write(trajectory, settings))
    _artifact(result, request.query)
    return result


def _last_code(outcome: DeepSolveOutcome | None) -> str | None:
    """The most recent script tried, to show on failure."""
    if outcome is None:
        return None
    for branch in reversed(outcome.debug):
        if branch.last and branch.last.solution:
            return branch.last.solution.code
    return outcome.code_agent.solution.code if outcome.code_agent.solution else None


@flow(name="solve", flow_run_name="solve: {query:.60}", log_prints=False)
def solve(query: str, backend: str | None = None, model: str | None = None) -> SolveResult:
    """Answer a scientific question by writing, running and debugging code."""
    if not query or not query.strip():
        raise ValueError("the query is empty: ask a question, e.g. evoskill solve \"...\"")
    return run_solve(query, get_settings(llm_backend=backend, llm_model=model))
