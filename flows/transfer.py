"""The transfer protocol as a flow: learn each family's base in a fresh workspace, then ask its variants and distractors.

    evoskill transfer benchmarks/suites/transfer            # learn the bases, then ask
    evoskill transfer benchmarks/suites/transfer --no-learn # nothing learned: no skill may answer

The fresh workspace (its own in-memory store, no starter library) keeps the measure to what was
learned from the bases; the report is written there as ``transfer.json`` and ``transfer.md``.
"""

from __future__ import annotations

import time
from pathlib import Path

from prefect import flow

from benchmarks.transfer import SkillAnswer, TransferReport, load_transfer_suite, transfer_report
from deployments.files import write_atomic
from deployments.llm.client import LLMClient, make_client
from deployments.llm.transport import LLMError
from deployments.progress import report
from deployments.settings import Settings, get_settings
from flows.learn import learn_task
from skills.answer_spec import read_answer_spec
from skills.store import SkillStore, open_store
from tasks.bind import choose_recalled, run_bound_skill
from tasks.models import SolveRequest
from tasks.recall import recall
from tasks.stage import run_stage

__all__ = ["transfer", "ask_skills"]


def ask_skills(query: str, store: SkillStore, settings: Settings) -> SkillAnswer:
    """The skill path alone: recall, choose a skill that binds the question, run it; no code is written."""
    request = SolveRequest(query=query, spec=read_answer_spec(query))
    found = recall(query, store, settings)
    recalled = [match.skill.id for match in found.skills]
    choice = choose_recalled(request, found, settings)
    reasons = [f"{d.skill_id}: {d.reason}" for d in choice.declined]
    if choice.match is None or choice.binding is None:
        return SkillAnswer(reason="; ".join(reasons) or "no skill recalled", recalled=recalled)
    run = run_stage(run_bound_skill, request, choice.match.skill, choice.binding, settings)
    if not run.success:
        return SkillAnswer(params=dict(run.params), reason="; ".join([*reasons, f"{run.skill_id}: {run.error}"]), recalled=recalled)
    return SkillAnswer(skill_id=run.skill_id, answer=run.answer, params=dict(run.params), recalled=recalled)


@flow(name="transfer", flow_run_name="transfer: {paths[0]}", log_prints=False)
def transfer(paths: list[str], learn: bool = True, backend: str | None = None, out: str | None = None) -> TransferReport:
    """Learn the bases (unless ``learn`` is off) and ask every variant and distractor through the skill path."""
    families = load_transfer_suite([Path(p) for p in paths])
    base = get_settings(llm_backend=backend)
    folder = Path(out) if out else base.workspace / "transfer" / time.strftime("%Y%m%d-%H%M%S")
    settings = base.model_copy(update={"workspace": folder.resolve(), "store": "memory", "starter_library": False, "learn": learn})
    store = open_store(settings)
    llm: LLMClient | None = None
    try:
        llm = make_client(settings)
    except LLMError as exc:
        report("transfer", "progress", f"no LLM ({exc}): learning without the model's rewrite")
    learned = []
    if learn:
        for index, family in enumerate(families, 1):
            outcome = learn_task(family.base, settings, llm)
            learned.append(f"{family.family}: {outcome.status} ({outcome.method or outcome.reason})")
            report("transfer", "progress", f"{index}/{len(families)} learned {family.family}: {outcome.status} {outcome.method or ''}")
    result = transfer_report(
        families, lambda query: ask_skills(query, store, settings), learned, lambda i, n, text: report("transfer", "progress", f"{i}/{n} {text}")
    )
    write_atomic(folder / "transfer.json", result.model_dump_json(indent=1))
    write_atomic(folder / "transfer.md", result.markdown() + "\n")
    report("transfer", "done", f"report in {folder}")
    return result
