"""What every agent stage shares besides its progress reports (``deployments.progress``): stage timing, the retry
rule, and a run state that tells the truth.

A stage that did not do its job ends its task run *Failed*, with the reason as the state's message (*Cancelled*
where its caller cancelled it: ``deployments/cancel.py``), and keeps its outcome as the state's result: ``run_stage`` (and ``outcome_of`` for a state at hand) gives the caller that outcome
either way (``deployments/run_states.py``), so the solve goes on with the next stage as before, while the Prefect UI shows the stage in red.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from prefect.states import State

from deployments.cancel import cancel_requested
from deployments.llm.transport import LLMTransientError
from deployments.run_states import cancelled_state, failed_state, outcome_of
from tasks.models import StageOutcome

__all__ = ["Stopwatch", "retry_on_transient", "settled", "run_stage"]

P = ParamSpec("P")
T = TypeVar("T")
Outcome = TypeVar("Outcome", bound=StageOutcome)


class Stopwatch:
    """Start time (epoch seconds) and elapsed wall time of a stage."""

    def __init__(self) -> None:
        self.started_at = time.time()
        self._t0 = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self._t0


def retry_on_transient(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect ``retry_condition_fn``: retry a stage only after a transient LLM error (never a stage that failed its job)."""
    return isinstance(state.result(raise_on_failure=False, _sync=True), LLMTransientError)


def settled(stage: Callable[P, Outcome]) -> Callable[P, Outcome]:
    """Wrap a stage's function (under ``@task``) so that an outcome that did not succeed ends the task run Failed."""

    @functools.wraps(stage)
    def run(*args: P.args, **kwargs: P.kwargs) -> Outcome:
        try:
            outcome = stage(*args, **kwargs)
        except Exception as exc:
            if cancel_requested():  # its caller gave up on it: Cancelled, and the caller meets the exception as before
                return cancelled_state(exc, f"cancelled by its caller ({type(exc).__name__})")  # type: ignore[return-value]
            raise
        if outcome.succeeded:
            return outcome
        if cancel_requested():
            return cancelled_state(outcome, "cancelled by its caller")  # type: ignore[return-value]
        return failed_state(outcome, outcome.error or f"{outcome.stage} did not succeed")  # type: ignore[return-value]  # Prefect makes a returned state the run's end and gives callers its result

    return run


def run_stage(stage: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call a stage's task and give its outcome, whether its run ended Completed or Failed."""
    state: State[T] = stage(*args, return_state=True, **kwargs)  # type: ignore[assignment]  # a Prefect task called with return_state gives its State
    return outcome_of(state)
