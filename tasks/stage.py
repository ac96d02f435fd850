"""What every agent stage shares: progress reports, stage timing, and the retry rule."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

from prefect import get_run_logger
from prefect.exceptions import MissingContextError

from tasks.llm import LLMTransientError

__all__ = ["report", "add_listener", "remove_listener", "Stopwatch", "retry_on_transient"]

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


class Stopwatch:
    """Start time (epoch seconds) and elapsed wall time of a stage."""

    def __init__(self) -> None:
        self.started_at = time.time()
        self._t0 = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self._t0


def retry_on_transient(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect ``retry_condition_fn``: retry a stage only after a transient LLM error."""
    try:
        state.result()
    except LLMTransientError:
        return True
    except Exception:
        return False
    return False
