"""Solution Researcher: looks up documentation and examples with its tools, then writes a first complete script."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE
from pydantic import BaseModel, Field

from deployments.llm.client import LLMClient
from deployments.llm.transport import LLMBudgetExceeded, LLMSchemaError
from deployments.packages import imported_packages, module_names
from deployments.progress import report
from tasks.models import ResearchResult, Solution, SolveRequest
from tasks.stage import Stopwatch, retry_on_transient, settled
from tasks.tool_plans import model_tool_round, research_notes
from tasks.tools.registry import ToolBox

__all__ = ["CodeReply", "SCRIPT_RULES", "research", "answer_instructions"]

SCRIPT_RULES = (
    "Write one complete, self-contained Python 3 script that uses the installed scientific packages "
    "(e.g. pymatgen, ASE, RDKit, numpy). It runs non-interactively with no network. "
    "It must end by printing the final answer as JSON with print(json.dumps(answer)) as its last output line."
)


class CodeReply(BaseModel):
    """What a code-writing stage returns."""

    packages: list[str] = Field(default_factory=list, description="Top-level packages the script imports.")
    code: str = Field(description="The complete Python script.")

    def to_solution(self) -> Solution:
        """The script with the modules it needs: those it names and those it imports, sanitised."""
        return Solution(code=self.code, packages=module_names(self.packages + imported_packages(self.code)))


def answer_instructions(request: SolveRequest) -> str:
    """The answer format the script must print, as read from the query."""
    spec = request.spec
    parts = [f"type {spec.output_type}" if spec.output_type != "any" else "the value asked for"]
    if spec.unit:
        parts.append(f"in {spec.unit}")
    if spec.decimals is not None:
        parts.append(f"rounded to {spec.decimals} decimal places")
    return "The printed answer must be " + ", ".join(parts) + "."


@task(name="research", task_run_name="research", cache_policy=NONE, retry_condition_fn=retry_on_transient)
@settled
def research(request: SolveRequest, llm: LLMClient) -> ResearchResult:
    """Write an initial solution (code + packages) for the query."""
    watch = Stopwatch()
    report("research", "start")
    box = ToolBox(llm.settings, user=request.user)
    notes = research_notes(request.query, box) + model_tool_round("research", llm, box, request.query, request.context)
    user = f"Question: {request.query}\n\n{answer_instructions(request)}" + (f"\n\n{request.context}" if request.context else "")
    if notes:
        user += "\n\nDocumentation and examples found with tools:\n- " + "\n- ".join(notes)
    tool_calls = box.call_log()
    try:
        reply = llm.structured("research", f"You are a solution researcher. {SCRIPT_RULES}", user, CodeReply)
    except (LLMSchemaError, LLMBudgetExceeded) as exc:
        report("research", "failed", str(exc))
        return ResearchResult(
            stage="research", started_at=watch.started_at, wall_s=watch.elapsed(), llm_calls=llm.calls_for("research") + llm.calls_for("research:tools"),
            error=str(exc), tool_calls=tool_calls,
        )  # fmt: skip
    solution = reply.to_solution()
    report("research", "done", f"{len(solution.code.splitlines())} lines, packages {solution.packages}")
    return ResearchResult(
        stage="research",
        started_at=watch.started_at,
        wall_s=watch.elapsed(),
        llm_calls=llm.calls_for("research") + llm.calls_for("research:tools"),
        solution=solution,
        tool_calls=tool_calls,
    )
