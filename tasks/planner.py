"""Planner: decomposes a multi-step query into sub-tasks, and decides after each one what comes next.

The planner sees only compressed traces of finished sub-tasks (key findings, failures,
parameters), never their full output; with ``compress_context=False`` it gets the full
trajectories instead (to measure what compression saves).
"""

from __future__ import annotations

from typing import Literal

from prefect import task
from prefect.cache_policies import NONE
from pydantic import BaseModel, Field, JsonValue

from tasks.llm import LLMClient
from tasks.stage import report, retry_on_transient

__all__ = ["SubTask", "Plan", "PlanDecision", "plan", "replan"]

_SYSTEM = (
    "You are a planner for scientific computing tasks. Split the question into the fewest sub-tasks that can each be "
    "solved by one Python script; a later sub-task may use the answers of earlier ones. Reply with JSON."
)


class SubTask(BaseModel):
    """One step of a plan: a self-contained question a script can answer."""

    goal: str = Field(min_length=1, description="The sub-question, with the answer format it needs.")


class Plan(BaseModel):
    steps: list[SubTask] = Field(min_length=1, max_length=6)


class PlanDecision(BaseModel):
    """After a sub-task: go on with the plan, replace the remaining steps, or finish with an answer."""

    action: Literal["continue", "replan", "finish"]
    steps: list[SubTask] = Field(default_factory=list, max_length=6, description="The new remaining steps (replan).")
    answer: JsonValue = Field(default=None, description="The final answer (finish).")
    reason: str = ""


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
