"""The solve flow: recall → (clarify | skill | simple | deep) → critic → compile, with the trajectory kept.

A recalled skill declined only for words it was not verified on is offered (``result.suggestion``): with
``accept_suggestion`` it answers through the skill and learns the question's wording; otherwise the question goes on to
code as before, and an accepted answer grows the skill when the skill agrees with it (``tasks/grow.py``).

>>> from flows.solve import solve
>>> result = solve("Compute ... Return a float in eV.")   # doctest: +SKIP
>>> result.success, result.path, result.skill_id          # doctest: +SKIP
(True, 'skill', 'ase_emt_atomization-v1')
"""

from __future__ import annotations

import base64
import re
import textwrap
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from prefect import flow
from prefect.artifacts import create_markdown_artifact
from prefect.context import get_run_context

from deployments.cancel import cancel_requested
from deployments.files import write_atomic
from deployments.llm.client import LLMClient, make_client
from deployments.llm.transport import LLMError
from deployments.progress import report
from deployments.run_outputs import OutputRefused, copy_images, read_image
from deployments.run_states import cancelled_state, failed_state, kept, outcome_of
from deployments.sandbox.models import ExecutionResult
from deployments.settings import Settings, get_settings
from flows.deep_solve import DeepSolveOutcome, run_deep_solve
from flows.learn_step import learn_from_solve, record_run, remember_failure
from flows.session import Conversation, is_feedback
from skills.answer_spec import read_answer_spec
from skills.documents import StageRecord
from skills.store import SkillStore, open_store
from tasks.bind import choose_recalled, run_bound_skill
from tasks.debug_strategies import check_strategies
from tasks.models import (
    FinalAnswer,
    Recall,
    SkillRun,
    SolveRequest,
    SolveResult,
    SolveTrajectory,
    StageOutcome,
    Trajectory,
)
from tasks.output import output_processor
from tasks.recall import recall
from tasks.simple import simple_solve
from tasks.stage import run_stage
from tasks.suggest import Suggestion, answer_by_suggestion, suggestion
from tasks.triage import triage

__all__ = ["solve", "solve_flow", "run_solve", "suggest"]

OUTPUT_CHARS = 4000
ARTIFACT_IMAGE_BYTES = 2 * 1024 * 1024  # images inlined in the solve's artifact, together; the rest are named


def _record(outcome: StageOutcome) -> StageRecord:
    """A stage's row: ok when it did its job (``succeeded``, the rule its task run's state follows too)."""
    return StageRecord(name=outcome.stage, wall_s=round(outcome.wall_s, 4), ok=outcome.succeeded, detail=outcome.error)


def _stages(t: SolveTrajectory) -> list[StageRecord]:
    rows = []
    if t.recall is not None:
        rows.append(StageRecord(name="recall", wall_s=round(t.recall.wall_s, 4), ok=True))
    if t.skill_run is not None:
        rows.append(_record(t.skill_run))
    elif any(d.tried for d in t.skill_declined):
        reasons = "; ".join(f"{d.skill_id}: {d.reason}" for d in t.skill_declined if d.tried)
        rows.append(StageRecord(name="skill", wall_s=0.0, ok=False, detail=f"declined: {reasons}"[:500]))
    if t.simple is not None:
        rows.append(_record(t.simple))
    if t.research is not None:
        rows.append(_record(t.research))
    if t.code_agent is not None:
        rows.append(_record(t.code_agent))
    rows += [_record(b) for b in t.debug]
    if t.answer is not None:
        rows.append(_record(t.answer))
    if t.learned is not None:
        rows.append(StageRecord(name="learn", wall_s=round(t.learned.wall_s, 4), ok=t.learned.accepted, detail=t.learned.summary))
    return rows


def _write(trajectory: Trajectory, settings: Settings) -> Path:
    name = trajectory.result.flow_run_id or uuid.uuid4().hex
    return write_atomic(settings.trajectory_root() / f"{name}.json", trajectory.model_dump_json(indent=2))


def _images_markdown(paths: list[str], settings: Settings) -> str:
    """The kept images as inline Markdown images (read by ``read_image``) up to ``ARTIFACT_IMAGE_BYTES``, the rest by number."""
    lines, left = [], ARTIFACT_IMAGE_BYTES
    for number, path in enumerate(paths, 1):
        try:
            data, media = read_image(path, settings)
        except OutputRefused:
            continue
        if len(data) > left:
            lines.append(f"plot {number}: {len(data)} bytes, shown in the chat")
            continue
        left -= len(data)
        lines.append(f"![plot {number}](data:{media};base64,{base64.b64encode(data).decode()})")
    return "\n\n".join(lines)


def _cell(text: str | None) -> str:
    """A stage's detail as one Markdown table cell: one line, cut, its pipes escaped."""
    return " ".join((text or "").split())[:240].replace("|", "\\|")


def _artifact(result: SolveResult, query: str, settings: Settings) -> None:
    rows = "\n".join(f"| {s.name} | {s.wall_s:.2f} | {'yes' if s.ok else 'no'} | {_cell(s.detail)} |" for s in result.stages)
    answer = result.formatted if result.success else (f"question: {result.question}" if result.question else f"failed: {result.error}")
    ran_with = ", ".join(f"`{p.describe()}`" for p in result.params)
    summed = sum(s.wall_s for s in result.stages)
    overlap = f" (the stage times add up to {summed:.2f} s: some ran in parallel)" if summed > result.wall_s + 0.05 else ""
    markdown = (
        f"# evoskill solve\n\n**Query:** {query}\n\n**Answer:** {answer}\n\n**Path:** {result.path}"
        + (f" (skill `{result.skill_id}`)" if result.skill_id else "")
        + (f"\n\n**Ran with:** {ran_with}" if ran_with else "")
        + f"\n\nLLM calls: {result.llm_calls}, tokens: {result.tokens}, wall: {result.wall_s:.2f} s{overlap}\n\n"
        f"| stage | wall s | ok | detail |\n|---|---|---|---|\n{rows}\n\n"
        f"```python\n{result.code or ''}\n```\n"
    )
    if result.images:
        markdown += f"\n{_images_markdown(result.images, settings)}\n"
    create_markdown_artifact(markdown=markdown, key="solve-result", description="evoskill answer, code and stage timings")


def _flow_run_id() -> str | None:
    try:
        return str(get_run_context().flow_run.id)  # type: ignore[union-attr]  # no flow run: caught below
    except Exception:  # noqa: BLE001 - outside a flow run
        return None


def _last_code(t: SolveTrajectory) -> str | None:
    """The most recent script tried, to show on failure."""
    for branch in reversed(t.debug):
        if branch.last and branch.last.solution:
            return branch.last.solution.code
    for first in (t.code_agent, t.simple):
        if first is not None and first.solution is not None:
            return first.solution.code
    return None


def _route(
    request: SolveRequest,
    found: Recall | None,
    model: Callable[[], LLMClient],
    store: SkillStore,
    settings: Settings,
    t: SolveTrajectory,
    accept_suggestion: bool,
) -> str:
    """Answer through the best route, filling ``t``; returns the path taken. ``model()`` gives the LLM client, made (and
    the embedded server started) only when a route asks the model: a skill's answer never waits for it."""
    choice = choose_recalled(request, found, settings)
    t.skill_declined = choice.declined
    if choice.match is not None and choice.binding is not None:
        t.skill_run = run_stage(run_bound_skill, request, choice.match.skill, choice.binding, settings)
        if not t.skill_run.cancelled:  # a cancelled run says nothing of the skill
            store.record_use(choice.match.skill, t.skill_run.success)
        if t.skill_run.success:
            return "skill"
        report("solve", "progress", f"skill {choice.match.skill.id} did not answer ({t.skill_run.error}); solving with code")
    else:
        offer = t.result.suggestion = suggestion(choice.declined, found, request.user)
        if offer is not None and accept_suggestion and found is not None:
            t.skill_run = answer_by_suggestion(request, offer, found, store, settings)
            if t.skill_run.success:
                return "skill"
            report("solve", "progress", f"the suggested {offer.skill_id} did not answer ({t.skill_run.error}); solving with code")
    if not settings.writes_code():
        return "none"
    llm = model()
    if settings.triage_llm:
        reply = triage(request, llm)
        if reply.question:
            t.result.question = reply.question
            return "clarify"
    if found and any(hit.memory.kind == "execution" for hit in found.memories):
        t.simple = run_stage(simple_solve, request, llm, settings)
        if not t.simple.needs_debug:
            t.answer = run_stage(output_processor, request, t.simple, [])
            return "simple"
        report("solve", "progress", "simple solve failed; escalating to the deep solver")
    outcome: DeepSolveOutcome = run_deep_solve(request, llm, settings)
    t.research, t.code_agent, t.debug, t.answer = outcome.research, outcome.code_agent, outcome.debug, outcome.answer
    return "deep"


def _no_code_tried(found: Recall | None, settings: Settings) -> str:
    """Why a question no skill answered got no code, in one paragraph a scientist reads: the closest skills, what to do."""
    closest = [
        f"{m.skill.id} ({textwrap.shorten(m.skill.description.splitlines()[0], 90, placeholder='…')})"
        for m in (found.skills if found else [])[:3]
        if m.skill.description
    ]
    why = (
        "the configured model (the embedded default, SmolLM2-135M) does not write working code"
        if settings.deep_path == "auto"
        else "the code-writing path is off (EVOSKILL_DEEP_PATH=never)"
    )
    return (
        f"no learned skill answers this question, and {why}, so no code was tried. "
        + (f"Closest skills: {'; '.join(closest)}. " if closest else "")
        + "To answer it: use a stronger model (EVOSKILL_LLM_BACKEND=openai with OPENAI_BASE_URL and EVOSKILL_LLM_MODEL), "
        "teach a skill (evoskill learn TASK.json), or let this model try anyway (evoskill solve --deep)."
    )


def _request(query: str, context: str, user: str) -> SolveRequest:
    run_name = re.sub(r"\W+", "-", query[:24]).strip("-").lower() or "solve"
    return SolveRequest(query=query.strip(), spec=read_answer_spec(query), run_name=run_name, context=context, user=user)


def _answering_execution(t: SolveTrajectory) -> ExecutionResult | None:
    """The sandbox run whose answer was given."""
    if t.skill_run is not None and t.skill_run.success:
        return t.skill_run.execution
    if t.answer is None or not t.answer.success:
        return None
    if t.answer.source == "code-agent":  # the deep solver's first run, or the simple path's
        first = t.code_agent or t.simple
        return first.execution if first else None
    branch = next((b for b in t.debug if b.stage == t.answer.source), None)
    return branch.last.execution if branch and branch.last else None


def _images(execution: ExecutionResult | None, settings: Settings) -> list[str]:
    """The images (plots) the answering code wrote, copied out of its run folder by ``copy_images``."""
    return copy_images(execution.workdir, settings) if execution is not None and execution.workdir else []


def suggest(query: str, settings: Settings, user: str | None = None) -> Suggestion | None:
    """The skill a solve of ``query`` would offer ``user`` (a near miss), found without an LLM or a flow run: a door asks
    its user before solving (``evoskill solve`` on a terminal)."""
    if not (settings.use_memory and settings.continuous_learning) or is_feedback(query):
        return None
    request = _request(query, "", user or settings.user)
    found = recall(request.query, open_store(settings), settings, request.user)
    choice = choose_recalled(request, found, settings)
    return suggestion(choice.declined, found, request.user) if choice.match is None else None


def run_solve(
    query: str,
    settings: Settings,
    llm: LLMClient | None = None,
    session: str | None = None,
    user: str | None = None,
    accept_suggestion: bool = False,
) -> SolveResult:
    """Solve inside the current flow run (``llm`` is made from settings when not given) as ``user`` (default: the settings');
    ``accept_suggestion``: answer through an offered near miss (``suggest``) rather than code."""
    check_strategies(settings)
    started = time.perf_counter()
    user = user or settings.user
    store = open_store(settings)
    conversation = Conversation.open(store, session, user) if session else None
    if conversation is not None and is_feedback(query):
        return conversation.feedback(started, settings)
    request = _request(query, conversation.history() if conversation else "", user)
    t = SolveTrajectory(request=request, result=SolveResult(success=False, session=session, flow_run_id=_flow_run_id()))
    path, error = "deep", None
    clients = [llm] if llm is not None else []

    def model() -> LLMClient:
        if not clients:
            clients.append(make_client(settings))
        return clients[0]

    try:
        if settings.use_memory and settings.continuous_learning:
            t.recall = recall(request.query, store, settings, user)
        request.context = "\n\n".join(p for p in (t.recall.context() if t.recall else "", request.context) if p)
        path = _route(request, t.recall, model, store, settings, t, accept_suggestion)
        if path == "none":
            error = _no_code_tried(t.recall, settings)
            report("solve", "failed", error)
    except LLMError as exc:
        error = str(exc)
        report("solve", "failed", error)
    llm = clients[0] if clients else None
    skill_ok = t.skill_run is not None and t.skill_run.success
    answer: FinalAnswer | SkillRun | None = t.skill_run if skill_ok else t.answer
    result = t.result
    result.success = bool(answer and answer.success)
    result.answer = answer.answer if answer else None
    result.formatted = answer.formatted if answer else None
    result.unit = request.spec.unit
    result.path = path  # type: ignore[assignment]  # _route returns one of the Literal paths
    result.skill_id = t.skill_run.skill_id if skill_ok else None  # type: ignore[union-attr]  # skill_ok: skill_run is set
    result.params = t.skill_run.bound if skill_ok else []  # type: ignore[union-attr]  # skill_ok: skill_run is set
    result.declined = [f"{d.skill_id} ({d.similarity:.2f}): {d.reason}" for d in t.skill_declined]
    if t.skill_run is not None and not skill_ok:
        result.declined.append(f"{t.skill_run.skill_id}: {t.skill_run.error}")
    result.code = answer.code if (answer and answer.success) else _last_code(t)
    result.error = None if result.success or path == "clarify" else error or (answer.error if answer else None)
    execution = _answering_execution(t)
    result.output = execution.stdout[-OUTPUT_CHARS:] if execution else None
    result.images = _images(execution, settings)
    learn_error = None
    if path in ("simple", "deep") and llm is not None:
        try:  # the answer is kept whatever happens while learning from it
            if result.success and settings.learn:
                t.learned = learn_from_solve(request, t, path, store, llm, settings)
                result.learned = t.learned.stored
                result.skill_id = t.learned.skill_id
                result.grown = [g.skill_id for g in t.learned.grown if g.grown]
            elif not result.success and not cancel_requested():  # a solve its caller cancelled did not fail on its own
                remember_failure(store, request, path, result)
        except Exception as exc:  # noqa: BLE001 - reported as the learn stage's failure
            learn_error = f"{type(exc).__name__}: {exc}"
            report("learn", "failed", learn_error)
    calls = llm.calls if llm else []
    result.llm_calls = len(calls)
    result.tokens = sum(c.prompt_tokens + c.completion_tokens for c in calls)
    result.stages = _stages(t) + ([StageRecord(name="learn", wall_s=0.0, ok=False, detail=learn_error)] if learn_error else [])
    result.wall_s = round(time.perf_counter() - started, 4)
    t.llm_calls = list(calls)
    result.trajectory_path = str(_write(t, settings))
    if conversation is not None:
        conversation.add(request.query, result)
    record_run(store, result, request)
    _artifact(result, request.query, settings)
    return result


@flow(name="solve", flow_run_name="solve: {query:.60}", log_prints=False)
def solve_flow(
    query: str,
    backend: str | None = None,
    model: str | None = None,
    session: str | None = None,
    user: str | None = None,
    defer_learning: bool = False,
    inputs: list[str] | None = None,
    accept_suggestion: bool = False,
    deep: bool = False,
) -> SolveResult:
    """Answer a scientific question: reuse a skill when one fits, otherwise write, run and debug code, then learn.

    The run ends Completed with an answer (or a clarifying question), and Failed with the reason when there is none;
    its result is the ``SolveResult`` either way (``solve`` gives it to Python callers).

    Args:
        query: The question in plain words, with the answer's format, e.g. "Relax Si with EMT; return the energy
            per atom as a float in eV".
        backend: The LLM backend (embedded, openai, scripted); the settings' when empty.
        model: The model name for that backend; the settings' when empty.
        session: A conversation to continue (its id); empty for a new question.
        user: Whose memories and skills are recalled and kept; the settings' user when empty.
        defer_learning: Store an accepted answer as a skill only when the user then says 'satisfied' (the chat).
        inputs: Files or folders the question's code may read (read-only), besides the configured sandbox inputs.
        accept_suggestion: Answer through a recalled skill declined only for words it was not verified on (the solve's
            suggestion), teaching it the question's wording; otherwise the suggestion is reported beside the answer.
        deep: Give a question no skill answers to the model to write code for, whatever the model (``deep_path``).
    """
    if not query or not query.strip():
        raise ValueError("the query is empty: ask a question, e.g. evoskill solve \"...\"")
    settings = get_settings(llm_backend=backend, llm_model=model, deep_path="always" if deep else None)
    if inputs:
        settings = settings.model_copy(update={"sandbox_inputs": [*settings.sandbox_inputs, *(Path(p).resolve() for p in inputs)]})
    if defer_learning and not is_feedback(query):
        settings = settings.model_copy(update={"learn": False})
    result = run_solve(query, settings, session=session, user=user, accept_suggestion=accept_suggestion)
    if result.success or result.path in ("clarify", "feedback"):
        return kept(result)
    if cancel_requested():
        return cancelled_state(result, "cancelled by its caller")  # type: ignore[return-value]  # the run ends Cancelled; solve() gives callers the result
    return failed_state(result, f"no answer: {result.error or 'no attempt produced one'}")  # type: ignore[return-value]  # the run ends Failed; solve() gives callers the result


def solve(
    query: str,
    backend: str | None = None,
    model: str | None = None,
    session: str | None = None,
    user: str | None = None,
    defer_learning: bool = False,
    inputs: list[str] | None = None,
    accept_suggestion: bool = False,
    deep: bool = False,
) -> SolveResult:
    """Run the ``solve`` flow and give its ``SolveResult``, answered or not (a solve without an answer ends Failed)."""
    state = solve_flow(query, backend, model, session, user, defer_learning, inputs, accept_suggestion, deep, return_state=True)
    return outcome_of(state)
