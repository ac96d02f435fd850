"""Critic: scores a whole solve trajectory and decides whether it may become a skill.

Four scores in [0, 1], each with its reason:

- soundness: the share of the runs with an answer that gave this one (1.0 when none disagreed);
- consistency: the answer has the type, sign and rounding the query asks for;
- efficiency: LLM calls spent against the budget;
- reproducibility: the accepted code, re-run in a fresh sandbox, gives the same answer.

Accepted when the answer is sound (at least as many runs agree as disagree: soundness >= 0.5), consistent and
reproducible; the scores are kept in the trajectory.
"""

from __future__ import annotations

import re

from prefect import task
from prefect.cache_policies import NONE

from deployments.progress import report
from deployments.sandbox.execute import SandboxLimits, run_code
from deployments.settings import Settings
from skills.answer_check import check_answer
from skills.answer_spec import coerce_answer
from tasks.models import CriticInput, Critique
from tasks.stage import Stopwatch

__all__ = ["critic"]


def _consistency(data: CriticInput) -> tuple[float, str]:
    value, problem = coerce_answer(data.answer, data.request.spec)
    if problem:
        return 0.0, f"format: {problem}"
    query = data.request.query.lower()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if re.search(r"\bpositive\b", query) and value <= 0:
            return 0.0, f"the query asks for a positive value, got {value}"
        if re.search(r"\bnegative\b", query) and value >= 0:
            return 0.0, f"the query asks for a negative value, got {value}"
    return 1.0, "answer has the asked type" + (f" and is given in {data.request.spec.unit}" if data.request.spec.unit else "")


@task(name="critic", task_run_name="critic", cache_policy=NONE)
def critic(data: CriticInput, settings: Settings) -> Critique:
    """Score the trajectory that produced ``data.answer`` and accept or reject it with reasons."""
    watch = Stopwatch()
    report("critic", "start")
    reasons: list[str] = []
    # The share of the runs with an answer that gave this one: below 0.5 when more runs contradict it than agree.
    if data.disagreeing:
        soundness = data.agreeing / (data.agreeing + data.disagreeing)
        why = f"runs disagreed: {data.agreeing} gave this answer, {data.disagreeing} another"
    else:
        soundness, why = 1.0, f"{data.agreeing} of {data.executions} runs gave this answer"
    reasons.append(f"soundness {soundness:.2f}: {why}")
    consistency, why = _consistency(data)
    reasons.append(f"consistency {consistency:.1f}: {why}")
    efficiency = max(0.0, 1.0 - data.llm_calls / settings.max_llm_calls)
    reasons.append(f"efficiency {efficiency:.2f}: {data.llm_calls} LLM calls of {settings.max_llm_calls}")
    rerun = run_code(data.code, settings.run_root(), SandboxLimits.from_settings(settings), f"{data.request.run_name}-critic")
    same = rerun.ok and check_answer(coerce_answer(rerun.answer, data.request.spec)[0], data.answer, data.tolerance).passed
    reproducibility = 1.0 if same else 0.0
    reasons.append(
        f"reproducibility {reproducibility:.1f}: "
        + ("re-run gave the same answer" if same else f"re-run gave {rerun.answer!r} ({rerun.error or 'different answer'})")
    )
    accepted = soundness >= 0.5 and consistency == 1.0 and reproducibility == 1.0
    scores = dict(soundness=round(soundness, 3), consistency=consistency, efficiency=round(efficiency, 3), reproducibility=reproducibility)
    report("critic", "done" if accepted else "failed", ("accepted" if accepted else "rejected") + f" {scores}")
    return Critique(accepted=accepted, scores=scores, reasons=reasons, wall_s=watch.elapsed())
