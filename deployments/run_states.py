"""Prefect run states that tell the truth: a run that did not do its job ends *Failed* with the reason as the state's
message and keeps its return value as the state's result, which ``outcome_of`` gives back to the caller."""

from __future__ import annotations

from typing import TypeVar

from prefect.states import Failed, State

__all__ = ["failed_state", "outcome_of"]

T = TypeVar("T")


def failed_state(value: T, message: str) -> State[T]:
    """A *Failed* run state that keeps ``value`` as its result (read back with ``outcome_of``)."""
    return Failed(message=message[:2000], data=value)


def outcome_of(state: State[T]) -> T:
    """The value a task or flow run ended with, Completed, Failed or Cancelled; an exception it raised (or a crash) is raised again."""
    value = state.result(raise_on_failure=False, _sync=True)  # type: ignore[call-overload]  # sync even where an event loop runs in this thread (Prefect would return a coroutine)
    if isinstance(value, BaseException):
        raise value
    return value
