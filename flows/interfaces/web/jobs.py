"""Questions the web app is answering: each a ``solve`` flow run on a background thread, its stage events kept for the page.

The session stores the question as ``pending`` before the flow starts and the turn when it ends, so a question
survives a crash of the server: the page offers to ask it again.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from deployments.progress import Status, add_listener, remove_listener
from flows.session import Conversation
from skills.store import SkillStore
from tasks.models import SolveResult

__all__ = ["SolveJob", "SolveJobs", "Solver"]

Solver = Callable[[str, str, str], SolveResult]
"""``(query, session_id, user) -> SolveResult``: runs one solve flow."""

_current: contextvars.ContextVar[SolveJob | None] = contextvars.ContextVar("evoskill_web_job", default=None)


@dataclass
class SolveJob:
    session_id: str
    query: str
    started: float = field(default_factory=time.time)
    events: list[tuple[float, str, str, str]] = field(default_factory=list)
    done: bool = False

    def note(self, stage: str, status: Status, detail: str) -> None:
        self.events.append((round(time.time() - self.started, 1), stage, status, detail[:300]))


class SolveJobs:
    """A thread pool of solves, at most one per session at a time.

    Jobs run in a copy of ``context`` (default: the one the pool is made in), so flows reach the Prefect API chosen there.
    """

    def __init__(self, store: SkillStore, solver: Solver, workers: int, context: contextvars.Context | None = None):
        self._store = store
        self._solver = solver
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="evoskill-web-solve")
        self._context = context or contextvars.copy_context()
        self._jobs: dict[str, SolveJob] = {}
        self._lock = threading.Lock()
        add_listener(self._on_event)

    def _on_event(self, stage: str, status: Status, detail: str) -> None:
        job = _current.get()
        if job is not None:
            job.note(stage, status, detail)

    def running(self, session_id: str) -> SolveJob | None:
        with self._lock:
            job = self._jobs.get(session_id)
        return job if job and not job.done else None

    def submit(self, conversation: Conversation, query: str) -> SolveJob:
        """Store the question as pending and answer it in the background (``RuntimeError`` if one is running)."""
        session = conversation.session
        with self._lock:
            if (current := self._jobs.get(session.id)) is not None and not current.done:
                raise RuntimeError("this session is still answering its last question")
            job = self._jobs[session.id] = SolveJob(session.id, query)
        conversation.update(pending=query, status="open")
        self._pool.submit(self._context.copy().run, self._run, job, session.user)
        return job

    def _run(self, job: SolveJob, user: str) -> None:
        _current.set(job)
        self._store.refresh()  # recall sees what other processes (the CLI, the MCP server) learned since
        try:
            self._solver(job.query, job.session_id, user)
        except Exception as exc:  # noqa: BLE001 - shown in the chat, and the question stays askable
            job.note("solve", "failed", f"{type(exc).__name__}: {exc}")
            conversation = Conversation.open(self._store, job.session_id, user)
            conversation.add(job.query, SolveResult(success=False, session=job.session_id, error=f"{type(exc).__name__}: {exc}"))
        finally:
            job.done = True

    def close(self) -> None:
        remove_listener(self._on_event)
        self._pool.shutdown(wait=False, cancel_futures=True)
