"""Triage: does the query need a clarifying question before anyone writes code?"""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE
from pydantic import BaseModel, Field

from tasks.llm import LLMBudgetExceeded, LLMClient, LLMSchemaError
from tasks.models import SolveRequest
from tasks.stage import report, retry_on_transient

__all__ = ["TriageReply", "triage"]


class TriageReply(BaseModel):
    clarify: bool = Field(description="true only if the question is ambiguous or contradicts itself")
    question: str = Field(default="", description="the question to ask the user when clarify is true")


_SYSTEM = (
    "You check scientific questions before they are solved with code. Answer clarify=true only when the question "
    "cannot be answered as asked: it is ambiguous (several very different readings) or contradicts itself (for example "
    "a material id that does not match the named material, or two different requested formats). Otherwise clarify=false."
)


@task(name="triage", task_run_name="triage", cache_policy=NONE, retry_condition_fn=retry_on_transient)
def triage(request: SolveRequest, llm: LLMClient) -> TriageReply:
    """One LLM call; a reply that fails its schema counts as 'no clarification needed'."""
    try:
        reply = llm.structured("triage", _SYSTEM, f"Question: {request.query}", TriageReply)
    except (LLMSchemaError, LLMBudgetExceeded) as exc:
        report("triage", "failed", f"{exc}; solving as asked")
        return TriageReply(clarify=False)
    if reply.clarify and not reply.question.strip():
        reply = TriageReply(clarify=False)
    report("triage", "done", f"clarify: {reply.question}" if reply.clarify else "clear")
    return reply
