"""Typed data that crosses stage boundaries: what each agent stage takes and returns."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from deployments.llm.client import LLMCall
from deployments.llm.quoting import quoted
from deployments.sandbox.models import ExecutionResult, ObjectRef
from deployments.settings import Settings
from skills.answer_spec import AnswerSpec
from skills.binding import BoundValue
from skills.compile import CompileResult
from skills.documents import Preference, Skill, StageRecord, Suggestion
from tasks.tools.memory import MemoryHit

__all__ = [
    "SolveRequest",
    "Solution",
    "StageOutcome",
    "ResearchResult",
    "CodeAgentResult",
    "DebugAttempt",
    "DebugResult",
    "FinalAnswer",
    "SolveResult",
    "Trajectory",
    "SolveTrajectory",
    "Learned",
    "CriticInput",
    "Critique",
    "SkillMatch",
    "Recall",
    "SkillRun",
    "SkillDecline",
    "Growth",
    "SubTask",
    "Plan",
    "PlanDecision",
    "TraceSummary",
]


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


class StageOutcome(BaseModel):
    """Fields every stage reports: timing, its LLM calls, and its error if it failed."""

    stage: str
    started_at: float = 0.0
    wall_s: float = 0.0
    llm_calls: list[LLMCall] = Field(default_factory=list)
    error: str | None = None

    @property
    def succeeded(self) -> bool:
        """Whether the stage did its job (its task run ends Completed; Failed otherwise)."""
        return self.error is None


class ResearchResult(StageOutcome):
    solution: Solution | None = None
    tool_calls: list[str] = Field(default_factory=list, description="Each tool call: name and outcome.")

    @property
    def succeeded(self) -> bool:
        return self.solution is not None


class CodeAgentResult(StageOutcome):
    solution: Solution | None = None
    execution: ExecutionResult | None = None
    missing_packages: list[str] = Field(default_factory=list)
    installed_packages: list[str] = Field(default_factory=list)
    needs_debug: bool = True

    @property
    def succeeded(self) -> bool:
        return not self.needs_debug


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
    def succeeded(self) -> bool:
        return self.success

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

    @property
    def succeeded(self) -> bool:
        return self.success


class SolveResult(BaseModel):
    """The stable summary of one solve (what ``evoskill solve --json`` prints)."""

    success: bool
    answer: JsonValue = None
    formatted: str | None = None
    unit: str | None = None
    path: Literal["deep", "simple", "skill", "clarify", "feedback", "none"] = "deep"
    skill_id: str | None = Field(default=None, description="The skill that answered (skill path) or was learned.")
    params: list[BoundValue] = Field(
        default_factory=list, description="Skill path: each bound parameter with the words of the question it came from."
    )
    declined: list[str] = Field(default_factory=list, description="Recalled skills that would not answer this question, and why.")
    suggestion: Suggestion | None = Field(
        default=None, description="A recalled skill declined only for words it was not verified on, offered; accepted: it answered."
    )
    grown: list[str] = Field(default_factory=list, description="Skills that took this question as a verified one (their answer agreed).")
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
    images: list[str] = Field(default_factory=list, description="Images the answering code wrote: paths of their kept copies (deployments/run_outputs.py).")
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


class SolveTrajectory(Trajectory):
    """The trajectory with the orchestrator's own stages."""

    recall: Recall | None = None
    skill_declined: list[SkillDecline] = Field(default_factory=list, description="Recalled skills that declined, and why.")
    skill_run: SkillRun | None = None
    simple: CodeAgentResult | None = None
    learned: Learned | None = None


class Learned(BaseModel):
    critique: Critique
    compiled: CompileResult | None = None
    experience_id: str | None = None
    wall_s: float = 0.0
    stored: bool = Field(default=False, description="A new skill (or version) was stored.")
    grown: list[Growth] = Field(default_factory=list, description="The declined near misses run with the question's values.")

    @property
    def accepted(self) -> bool:
        return self.critique.accepted and bool(self.compiled and self.compiled.ok)

    @property
    def skill_id(self) -> str | None:
        return self.compiled.skill.id if self.compiled and self.compiled.skill else None

    @property
    def summary(self) -> str:
        if not self.critique.accepted:
            return "rejected by the critic: " + "; ".join(self.critique.reasons)
        if self.compiled and self.compiled.ok:
            return f"{'stored' if self.stored else 'known'} skill {self.skill_id} ({self.compiled.method})"
        return "not compiled: " + "; ".join(self.compiled.reasons if self.compiled else [])


class CriticInput(BaseModel):
    request: SolveRequest
    answer: JsonValue
    code: str
    path: str
    llm_calls: int = 0
    executions: int = 1
    agreeing: int = 1
    disagreeing: int = 0
    tolerance: float | None = None


class Critique(BaseModel):
    accepted: bool
    scores: dict[str, float] = Field(default_factory=dict)
    reasons: list[str] = Field(default_factory=list)
    wall_s: float = 0.0


class SkillMatch(BaseModel):
    skill: Skill
    similarity: float


class Recall(BaseModel):
    skills: list[SkillMatch] = Field(default_factory=list)
    memories: list[MemoryHit] = Field(default_factory=list)
    preferences: list[Preference] = Field(default_factory=list)
    wall_s: float = 0.0

    def usable_skills(self, settings: Settings) -> list[SkillMatch]:
        """The skills close enough to try, best first; one without parameters must match more closely."""
        usable = []
        for match in self.skills:
            has_params = bool(match.skill.parameters)
            if match.similarity >= (settings.skill_match_threshold if has_params else settings.skill_exact_threshold):
                usable.append(match)
        return usable

    def untried(self, settings: Settings) -> list[SkillDecline]:
        """The skills close enough to try but for having no parameters, best first, each with why it is not tried."""
        usable = {id(m) for m in self.usable_skills(settings)}
        close = [m for m in self.skills if id(m) not in usable and m.similarity >= settings.skill_match_threshold]
        why = "not tried: the skill has no parameters, so it answers only a question almost the same as its own"
        needed = f"similarity {settings.skill_exact_threshold:.2f} or more"
        return [
            SkillDecline(skill_id=m.skill.id, similarity=m.similarity, tried=False, reason=f"{why} ({needed}; this one is {m.similarity:.2f})")
            for m in close
        ]

    def context(self) -> str:
        """Recalled memories and preferences as prompt text (empty when there are none); a memory is quoted data."""
        parts = []
        for hit in self.memories:
            m = hit.memory
            label = "A strategy that worked" if m.kind == "planning" else "Code that solved a similar task"
            parts.append(quoted(f"{m.subtask[:200]}\n\n{m.solution[:1500]}", f"{label} (the task, then how)"))
        parts += [f"User preference {p.key}: {p.value}" for p in self.preferences]
        return "\n\n".join(parts)


class SkillDecline(BaseModel):
    """A recalled skill that would not answer, and why."""

    skill_id: str
    similarity: float
    reason: str
    tried: bool = Field(default=True, description="Whether binding was tried; False: not even tried (the reason says why).")
    near: list[BoundValue] | None = Field(
        default=None, description="A near miss: every parameter bound from the question's values (only words stood in the way)."
    )


class Growth(BaseModel):
    """A declined near miss run with the question's values after the code path's answer was accepted."""

    skill_id: str
    grown: bool = Field(default=False, description="Its answer agreed: the question joined its verified questions.")
    answer: JsonValue = None
    reason: str = ""


class SkillRun(StageOutcome):
    skill_id: str
    code: str | None = None
    params: dict[str, JsonValue] = {}
    bound: list[BoundValue] = Field(default_factory=list, description="Each parameter with the words of the question it came from.")
    execution: ExecutionResult | None = None
    success: bool = False
    answer: JsonValue = None
    formatted: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.success

    @property
    def cancelled(self) -> bool:
        """Whether its caller cancelled the run (it says nothing of the skill)."""
        return self.execution is not None and self.execution.cancelled


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


class TraceSummary(BaseModel):
    """What a later stage needs to know about a finished stage or sub-task."""

    stage: str
    success: bool
    key_findings: list[str] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    parameters: dict[str, JsonValue] = Field(default_factory=dict)
    refs: list[ObjectRef] = Field(default_factory=list, description="Full outputs, loaded on demand.")

    def render(self) -> str:
        lines = [f"{self.stage}: {'succeeded' if self.success else 'failed'}"]
        lines += [f"  found: {f}" for f in self.key_findings]
        lines += [f"  failed: {f}" for f in self.failures]
        if self.parameters:
            lines.append(f"  parameters: {self.parameters}")
        lines += [f"  full output: {r.uri}" for r in self.refs]
        return "\n".join(lines)
