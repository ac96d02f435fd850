"""Stage progress: each event logged through Prefect's run logger and told to this process's listeners, and to the
listeners of the call it happens in (``listening``: context-local, so concurrent calls each hear only their own)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from prefect import get_run_logger
from prefect.exceptions import MissingContextError

__all__ = ["Status", "add_listener", "remove_listener", "listening", "report", "tell"]

Status = Literal["start", "progress", "done", "failed"]
Listener = Callable[[str, Status, str], None]

_listeners: list[Listener] = []
_lock = threading.Lock()
_fallback = logging.getLogger("evoskill")
_call_listeners: ContextVar[tuple[Listener, ...]] = ContextVar("evoskill_progress_listeners", default=())


def add_listener(listener: Listener) -> None:
    """Receive ``(stage, status, detail)`` for every stage event in this process (the CLI's progress)."""
    with _lock:
        _listeners.append(listener)


def remove_listener(listener: Listener) -> None:
    with _lock:
        if listener in _listeners:
            _listeners.remove(listener)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Tell ``listener`` the stage events of this block only: those of this context and of threads that run in a copy of it
    (Prefect's task runners, anyio's worker threads), not other calls'."""
    token = _call_listeners.set((*_call_listeners.get(), listener))
    try:
        yield
    finally:
        _call_listeners.reset(token)


def report(stage: str, status: Status, detail: str = "") -> None:
    """Log a stage event through Prefect's run logger and tell the listeners."""
    try:
        logger: Any = get_run_logger()
    except MissingContextError:
        logger = _fallback
    message = f"{stage}: {status}" + (f" — {detail}" if detail else "")
    (logger.warning if status == "failed" else logger.info)(message)
    tell(stage, status, detail)


def tell(stage: str, status: Status, detail: str = "") -> None:
    """Tell the listeners a stage event logged elsewhere (in the workspace's service, whose output a door relays)."""
    with _lock:
        listeners = [*_listeners, *_call_listeners.get()]
    for listener in listeners:
        listener(stage, status, detail)
