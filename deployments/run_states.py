"""Prefect run states that tell the truth: a run that did not do its job ends *Failed* with the reason as the state's
message and keeps its return value as the state's result, which ``outcome_of`` gives back to the caller.

A flow run's value is also kept in this process (``kept``): results are not persisted, so where the server answers a
flow run's last state with its own copy, which holds no data, the value is not lost. It does so when the client sent
that state again after a slow answer (a busy SQLite database makes the first request outlast the client's timeout; the
server recorded it, and refuses the repeat as a duplicate transition).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, TypeVar
from uuid import UUID

from prefect.states import Cancelled, Failed, State

__all__ = ["cancelled_state", "failed_state", "kept", "outcome_of"]

T = TypeVar("T")

_KEPT_AT_MOST = 64  # flow runs whose value nobody reads here (a deployment's) do not pile up
_kept: OrderedDict[UUID, Any] = OrderedDict()
_kept_lock = threading.Lock()


def _flow_run_here() -> UUID | None:
    """The flow run whose body runs here: None inside a task of that flow run, or outside any flow run."""
    from prefect.context import FlowRunContext, TaskRunContext

    flow_context, task_context = FlowRunContext.get(), TaskRunContext.get()
    flow_run = flow_context.flow_run if flow_context else None
    if flow_run is None or (task_context is not None and task_context.task_run.flow_run_id == flow_run.id):
        return None
    return flow_run.id


def kept(value: T) -> T:
    """``value``, kept in this process as what the flow run whose body calls this returns (``outcome_of`` reads it)."""
    if (run_id := _flow_run_here()) is not None:
        with _kept_lock:
            _kept[run_id] = value
            while len(_kept) > _KEPT_AT_MOST:
                _kept.popitem(last=False)
    return value


def failed_state(value: T, message: str) -> State[T]:
    """A *Failed* run state that keeps ``value`` as its result (read back with ``outcome_of``)."""
    return Failed(message=message[:2000], data=kept(value))


def cancelled_state(value: T, message: str) -> State[T]:
    """A *Cancelled* run state that keeps ``value`` as its result (read back with ``outcome_of``)."""
    return Cancelled(message=message[:2000], data=kept(value))


def _take_kept(state: State[Any]) -> tuple[bool, Any]:
    """Whether this process kept the value of the flow run ``state`` belongs to, and that value (no longer kept)."""
    details = state.state_details
    if details.transition_id is None or details.flow_run_id is None:  # not a flow run's state (only those pass the API)
        return False, None
    with _kept_lock:
        if details.flow_run_id not in _kept:
            return False, None
        return True, _kept.pop(details.flow_run_id)


def outcome_of(state: State[T]) -> T:
    """The value a task or flow run ended with, Completed, Failed or Cancelled; an exception it raised (or a crash) is raised again."""
    found, value = _take_kept(state)
    if found and state.data is None and state.is_final():
        return value  # the server's copy of the state: the value is the one kept here
    value = state.result(raise_on_failure=False, _sync=True)  # type: ignore[call-overload]  # sync even where an event loop runs in this thread (Prefect would return a coroutine)
    if isinstance(value, BaseException):
        raise value
    return value
