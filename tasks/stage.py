"""What every agent stage shares besides its progress reports (``deployments.progress``): stage timing and the retry rule."""

from __future__ import annotations

import time
from typing import Any

from deployments.llm.transport import LLMTransientError

__all__ = ["Stopwatch", "retry_on_transient"]


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
