"""Stage progress: each event logged through Prefect's run logger and told to this process's listeners."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Literal

from prefect import get_run_logger
from prefect.exceptions import MissingContextError

__all__ = ["Status", "add_listener", "remove_listener", "report"]

Status = Literal["start", "progress", "done", "failed"]
Listener = Callable[[str, Status, str], None]

_listeners: list[Listener] = []
_lock = threading.Lock()
_fallback = logging.getLogger("evoskill")


def add_listener(listener: Listener) -> None:
    """Receive ``(stage, status, detail)`` for every stage event in this process (the CLI's progress)."""
    with _lock:
        _listeners.append(listener)


def remove_listener(listener: Listener) -> None:
    with _lock:
        if listener in _listeners:
            _listeners.remove(listener)


def report(stage: str, status: Status, detail: str = "") -> None:
    """Log a stage event through Prefect's run logger and tell the listeners."""
    try:
        logger: Any = get_run_logger()
    except MissingContextError:
        logger = _fallback
    message = f"{stage}: {status}" + (f" — {detail}" if detail else "")
    (logger.warning if status == "failed" else logger.info)(message)
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        listener(stage, status, detail)
