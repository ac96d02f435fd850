"""Triage: does the query need a clarifying question before anyone writes code?"""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE
from pydantic import BaseModel, Field

from deployments.llm.client import LLMClient
from deployments.llm.transport import LLMBudgetExceeded, LLMSchemaError
from deployments.progress import report
from tasks.models import SolveRequest
from tasks.stage import retry_on_transient

__all__ = ["TriageReply", "triage"]


class TriageReply(BaseModel):
    conflict: str = Field(default="", description="the exact words of the question that are ambiguous or contradict each other; empty if none")
    question: str = Field(default="", description="what to ask the user; empty if nothing")

    def clarifies(self, query: str) -> bool:
        """A clarification counts only when it quotes the question's own conflicting words (3+ characters)."""
        quoted = self.conflict.strip()
        return len(quoted) >= 3 and quoted.lower() in query.lower() and bool(self.question.strip())


_SYSTEM = (
    "You check scientific questions before they are solved with code. If the question is ambiguous (several very different "
    "readings) or contradicts itself (for example a material id that does not match the named material, or two different "
    "requested formats), copy the exact conflicting words into conflict and write the question to ask. Most questions are "
    "clear: then conflict and question are empty strings."
)


@task(name="triage", task_run_name="triage", cache_policy=NONE, retry_condition_fn=retry_on_transient)
def triage(request: SolveRequest, llm: LLMClient) -> TriageReply:
    """One LLM call. A reply that fails its schema, or whose 'conflict' is not quoted from the question, means 'clear'."""
    try:
        reply = llm.structured("triage", _SYSTEM, f"Question: {request.query}", TriageReply)
    except (LLMSchemaError, LLMBudgetExceeded) as exc:
        report("triage", "failed", f"{exc}; solving as asked")
        return TriageReply()
    if not reply.clarifies(request.query):
        if reply.conflict.strip() or reply.question.strip():
            report("triage", "progress", f"ignored a clarification that does not quote the question: {reply.conflict[:80]!r}")
        reply = TriageReply()
    report("triage", "done", f"clarify: {reply.question}" if reply.question else "clear")
    return reply
