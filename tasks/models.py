"""Typed data that crosses stage boundaries: what each agent stage takes and returns."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, JsonValue

__all__ = [
    "ObjectRef",
    "LLMCall",
    "SolveRequest",
    "Solution",
    "ExecutionResult",
    "StageOutcome",
    "ResearchResult",
    "CodeAgentResult",
    "DebugAttempt",
    "DebugResult",
    "AnswerSpec",
    "FinalAnswer",
    "StageRecord",
    "SolveResult",
    "Trajectory",
]


class ObjectRef(BaseModel):
    """A reference to a large text kept in a file, with a preview of its end (loaded on demand)."""

    uri: str
    size: int
    preview: str = ""

    def __str__(self) -> str:
        return f"<object {self.uri} ({self.size} chars); ends with: {self.preview[-200:]!r}>"


class LLMCall(BaseModel):
    """One request to the language model, as recorded for budgets and reports."""

    stage: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    ok: bool = True
    error: str | None = None


class AnswerSpec(BaseModel):
    """The answer format a query asks for, read from its wording."""

    output_type: Literal["float", "int", "bool", "str", "list", "any"] = "any"
    unit: str | None = None
    decimals: int | None = None


class SolveRequest(BaseModel):
    """A question as the stages see it."""

    query: str = Field(min_length=1)
    spec: AnswerSpec = Field(default_factory=AnswerSpec)
    run_name: str = Field(default="solve", description="Prefix of this solve's sandbox folders.")
    context: str = Field(default="", description="Recalled memories and session history the writing stages may use.")
    user: str = Field(default="local", description="Who asked: whose memories are recalled and kept.")


class Solution(BaseModel):
    """A candidate program for the query, as written by an agent."""

    code: str = Field(description="A complete Python script; its last stdout line is the answer as JSON.")
    packages: list[str] = Field(default_factory=list, description="Importable top-level packages it needs.")


class ExecutionResult(BaseModel):
    """What happened when a script ran in the sandbox."""

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    stdout_ref: ObjectRef | None = Field(default=None, description="The whole captured stdout when ``stdout`` holds only its head and tail.")
    stderr_ref: ObjectRef | None = Field(default=None, description="The whole captured stderr when ``stderr`` holds only its head and tail.")
    timed_out: bool = False
    answer_found: bool = False
    answer: JsonValue = None
    error: str | None = Field(default=None, description="A one-paragraph diagnosis an agent can act on.")
    wall_s: float = 0.0
    workdir: str = ""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.answer_found and not self.timed_out


class StageOutcome(BaseModel):
    """Fields every stage reports: timing, its LLM calls, and its error if it failed."""

    stage: str
    started_at: float = 0.0
    wall_s: float = 0.0
    llm_calls: list[LLMCall] = Field(default_factory=list)
    error: str | None = None


class ResearchResult(StageOutcome):
    solution: Solution | None = None
    tool_calls: list[str] = Field(default_factory=list, description="Each tool call: name and outcome.")


class CodeAgentResult(StageOutcome):
    solution: Solution | None = None
    execution: ExecutionResult | None = None
    missing_packages: list[str] = Field(default_factory=list)
    installed_packages: list[str] = Field(default_factory=list)
    needs_debug: bool = True


class DebugAttempt(BaseModel):
    attempt: int
    solution: Solution | None = None
    execution: ExecutionResult | None = None
    error: str | None = None


class DebugResult(StageOutcome):
    strategy: str
    attempts: list[DebugAttempt] = Field(default_factory=list)
    success: bool = False
    tool_calls: list[str] = Field(default_factory=list, description="Each tool call: name and outcome.")

    @property
    def last(self) -> DebugAttempt | None:
        return self.attempts[-1] if self.attempts else None


class FinalAnswer(StageOutcome):
    success: bool = False
    answer: JsonValue = None
    formatted: str | None = None
    spec: AnswerSpec = Field(default_factory=AnswerSpec)
    source: str | None = Field(default=None, description="Which execution produced the chosen answer.")
    agreeing_sources: list[str] = Field(default_factory=list)
    code: str | None = None


class StageRecord(BaseModel):
    name: str
    wall_s: float
    ok: bool
    detail: str | None = None


class SolveResult(BaseModel):
    """The stable summary of one solve (what ``evoskill solve --json`` prints)."""

    success: bool
    answer: JsonValue = None
    formatted: str | None = None
    unit: str | None = None
    path: Literal["deep", "simple", "skill", "clarify", "feedback"] = "deep"
    skill_id: str | None = Field(default=None, description="The skill that answered (skill path) or was learned.")
    learned: bool = Field(default=False, description="Whether this solve stored a new skill.")
    question: str | None = Field(default=None, description="The clarifying question (clarify path).")
    session: str | None = None
    llm_calls: int = 0
    tokens: int = 0
    wall_s: float = 0.0
    stages: list[StageRecord] = Field(default_factory=list)
    flow_run_id: str | None = None
    code: str | None = None
    output: str | None = Field(default=None, description="What the answering code printed (its stdout, cut to its tail).")
    images: list[str] = Field(default_factory=list, description="Image files the answering code wrote, as paths.")
    error: str | None = None
    trajectory_path: str | None = None


class Trajectory(BaseModel):
    """Everything one solve did, stage by stage (written as JSON under the workspace)."""

    request: SolveRequest
    result: SolveResult
    research: ResearchResult | None = None
    code_agent: CodeAgentResult | None = None
    debug: list[DebugResult] = Field(default_factory=list)
    answer: FinalAnswer | None = None
    llm_calls: list[LLMCall] = Field(default_factory=list)
