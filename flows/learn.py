"""Learn skills from known-good solutions: tasks in the benchmark format → generalise → verify → store.

    evoskill learn skills/library/*.json

Each task's ``solution_code_or_process`` is compiled through the same path as an accepted solve,
with the task's ``answer`` (within ``absolute_tolerance``) as the verification target.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from prefect import flow
from pydantic import BaseModel

from benchmarks.task import BenchmarkTask, TaskFormatError, load_task
from deployments.files import file_lock, write_atomic
from deployments.llm.client import LLMClient, make_client
from deployments.llm.transport import LLMError
from deployments.progress import report
from deployments.settings import Settings, get_settings
from skills import STARTER_LIBRARY
from skills.answer_spec import AnswerSpec, read_answer_spec
from skills.compile import CompileRequest
from skills.documents import Provenance
from skills.store import open_store
from tasks.compile import compile_and_store
from tasks.tools.memory import save_to_memory

__all__ = ["LearnOutcome", "learn", "learn_task", "ensure_starter_library"]


class LearnOutcome(BaseModel):
    task: str
    status: Literal["learned", "known", "rejected"]
    skill_id: str | None = None
    method: str | None = None
    reason: str | None = None


def _spec(task: BenchmarkTask) -> AnswerSpec:
    spec = read_answer_spec(task.query(1))
    kind = task.output_type if task.output_type in ("float", "int", "bool", "str", "list") else spec.output_type
    return spec.model_copy(update={"output_type": kind, "unit": task.unit or spec.unit})


def _starter_file(path: Path) -> bool:
    """Whether a task file is one of evoskill's own starter tasks (taught by nobody in particular)."""
    return path.resolve().parent == STARTER_LIBRARY


def learn_task(task: BenchmarkTask, settings: Settings, llm: LLMClient | None, starter: bool = False) -> LearnOutcome:
    """Compile one task's solution into a verified skill and remember it as an execution memory.

    The task's questions are the settings' user's words: they alone see them in the skill and recall its memories;
    a ``starter`` task (the starter library's: nobody's words) is everyone's."""
    teacher = None if starter else settings.user
    store = open_store(settings)
    label = task.id or "task"
    if not task.solution_code_or_process.strip():
        return LearnOutcome(task=label, status="rejected", reason="the task has no solution_code_or_process")
    request = CompileRequest(
        code=task.solution_code_or_process,
        query=task.query(1),
        expected=task.answer,
        tolerance=task.absolute_tolerance,
        spec=_spec(task),
        name=task.skill_family or task.id,
        packages=task.sources,
        provenance=Provenance(
            query=task.query(1),
            queries=[q for q in (task.query(0),) if q != task.query(1)],
            source="learn",
            task_id=task.id,
            model=llm.model if llm else None,
            user=teacher,
        ),
    )
    result = compile_and_store(request, settings, store, llm)
    if not result.ok or result.skill is None:
        return LearnOutcome(task=label, status="rejected", reason="; ".join(result.reasons))
    for level in (0, 1):
        if task.user_query.get(str(level)):  # type: ignore[call-overload]  # str(level) is a "0"/"1" key
            save_to_memory(store, "execution", task.query(level), result.skill.code, condition=task.query(level), source=f"task:{label}", user=teacher)
    return LearnOutcome(task=label, status="learned" if result.new else "known", skill_id=result.skill.id, method=result.method)


@flow(name="learn", flow_run_name="learn: {paths[0]}", log_prints=False)
def learn(paths: list[str], backend: str | None = None, use_model: bool = True) -> list[LearnOutcome]:
    """Learn every task file; a malformed task is reported and the rest still run.

    Lifting needs no model; with ``use_model`` the model is asked to rewrite a script whose stated
    constants do not change the answer (the starter library is learned without it). A task's words are its
    learner's (the settings' user), but for the starter library's own tasks, which everyone sees.

    Args:
        paths: Task files (JSON with a question and a known-good script) or folders of them.
        backend: The LLM backend for rewriting scripts (embedded, openai, scripted); the settings' when empty.
        use_model: Ask the model to rewrite a script whose stated constants do not change its answer.
    """
    settings = get_settings(llm_backend=backend)
    llm: LLMClient | None = None
    llm_tried = False
    outcomes = []
    for path in paths:
        try:
            task = load_task(Path(path))
        except TaskFormatError as exc:
            outcomes.append(LearnOutcome(task=str(path), status="rejected", reason=str(exc)))
            continue
        if use_model and not llm_tried and "def run(" not in task.solution_code_or_process:
            llm_tried = True  # one attempt: an unreachable model is not retried for every task
            try:  # only a plain script needs the model to generalise it
                llm = make_client(settings)
            except LLMError as exc:
                report("learn", "progress", f"no LLM to generalise scripts ({exc}); they are kept without parameters")
        outcome = learn_task(task, settings, llm, starter=_starter_file(Path(path)))
        report("learn", "done" if outcome.status != "rejected" else "failed", f"{outcome.task}: {outcome.status} {outcome.reason or outcome.skill_id}")
        outcomes.append(outcome)
    return outcomes


def _starter_marker(settings: Settings) -> Path:
    return settings.workspace.resolve() / "starter-library.json"


def ensure_starter_library(settings: Settings) -> list[LearnOutcome] | None:
    """Learn the starter library into a new workspace's store, once; ``None`` when there was nothing to do.

    A workspace counts as new when its store holds no skill and the starter library was never learned
    there (a marker file records it, so a user who deleted every skill is not given them back). An
    in-memory store is new in every process and is left empty. Concurrent first commands learn it once.
    """
    marker = _starter_marker(settings)
    if not settings.starter_library or settings.store == "memory" or marker.exists():
        return None
    marker.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(marker.with_suffix(".lock")):
        if marker.exists() or open_store(settings).count("skills"):
            return None
        paths = sorted(str(p) for p in STARTER_LIBRARY.glob("*.json"))
        report("starter-library", "start", f"a new workspace: learning the starter skill library ({len(paths)} tasks) once")
        outcomes = learn(paths, backend=settings.llm_backend, use_model=False)
        write_atomic(marker, json.dumps([o.model_dump() for o in outcomes], indent=1))
    learned = [o for o in outcomes if o.status != "rejected"]
    report("starter-library", "done", f"{len(learned)}/{len(outcomes)} starter skills learned")
    return outcomes
