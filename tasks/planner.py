"""Planner: decomposes a multi-step query into sub-tasks, and decides after each one what comes next.

The planner sees only compressed traces of finished sub-tasks (key findings, failures,
parameters), never their full output; with ``compress_context=False`` it gets the full
trajectories instead (to measure what compression saves).
"""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE

from deployments.llm.client import LLMClient
from deployments.progress import report
from tasks.models import Plan, PlanDecision, SubTask
from tasks.stage import retry_on_transient

__all__ = ["plan", "replan"]

_SYSTEM = (
    "You are a planner for scientific computing tasks. Split the question into the fewest sub-tasks that can each be "
    "solved by one Python script; a later sub-task may use the answers of earlier ones. Reply with JSON."
)


@task(name="planner", task_run_name="plan", cache_policy=NONE, retry_condition_fn=retry_on_transient)
def plan(query: str, llm: LLMClient) -> Plan:
    """Decompose ``query`` into sub-tasks."""
    result = llm.structured("planner", _SYSTEM, f"Question: {query}", Plan)
    report("planner", "done", f"{len(result.steps)} steps: " + " | ".join(s.goal[:60] for s in result.steps))
    return result


@task(name="replanner", task_run_name="replan-{step}", cache_policy=NONE, retry_condition_fn=retry_on_transient)
def replan(query: str, step: int, done: list[str], remaining: list[SubTask], llm: LLMClient) -> PlanDecision:
    """Given what the finished sub-tasks found (``done``, one text each), decide the next move."""
    prompt = (
        f"Question: {query}\n\nFinished sub-tasks:\n" + "\n".join(done)
        + "\n\nRemaining steps:\n" + ("\n".join(f"- {s.goal}" for s in remaining) or "(none)")
        + "\n\nReply 'continue' to go on, 'replan' with new remaining steps if a step failed or the plan is wrong, "
        "or 'finish' with the final answer when the question is answered."
    )  # fmt: skip
    decision = llm.structured("replanner", _SYSTEM, prompt, PlanDecision)
    report("replanner", "done", f"{decision.action}" + (f": {decision.reason}" if decision.reason else ""))
    return decision
