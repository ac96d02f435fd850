"""One call's cancellation: an event that its sandbox runs and LLM calls look at.

A door (the MCP server) runs a call's work inside ``cancellable(event)`` and sets the event when its client cancels:
a sandbox run under way is killed at once, and later runs and LLM calls of that work are refused. The event is
context-local (a ``ContextVar``): concurrent calls stay apart, and threads that run in a copy of the calling context
(Prefect's task runners, anyio's worker threads) see their own call's event.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["cancellable", "current_cancel", "cancel_requested"]

_current: ContextVar[threading.Event | None] = ContextVar("evoskill_cancel", default=None)


@contextmanager
def cancellable(event: threading.Event) -> Iterator[threading.Event]:
    """Run the block as one cancellable call: setting ``event`` cancels what it does from then on."""
    token = _current.set(event)
    try:
        yield event
    finally:
        _current.reset(token)


def current_cancel() -> threading.Event | None:
    """The event of the call this runs in, or None outside one."""
    return _current.get()


def cancel_requested() -> bool:
    """Whether the call this runs in has been cancelled."""
    event = _current.get()
    return event is not None and event.is_set()
