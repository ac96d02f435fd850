"""Questions the web app is answering: each a ``solve`` flow run on a background thread, its stage events kept for the page.

A question waits for its turn (``deployments/admission.py``: bounds per user and in all, shared with the MCP server,
round-robin between users) and the page shows its place ("busy, position N"); a user with too many questions waiting
is told to retry. The session stores the question as ``pending`` before the flow starts and the turn when it ends,
so a question survives a crash of the server: the page offers to ask it again.
"""

from __future__ import annotations

import contextvars
import threading
import time
from dataclasses import dataclass, field
from typing import Protocol

from deployments.admission import Admission, Ticket
from deployments.cancel import cancellable
from deployments.progress import Status, add_listener, remove_listener
from flows.session import Conversation
from skills.store import SkillStore
from tasks.models import SolveResult

__all__ = ["SolveJob", "SolveJobs", "Solver"]


class Solver(Protocol):
    """``(query, session_id, user, accept_suggestion) -> SolveResult``: runs one solve flow (``accept_suggestion``: through
    the skill a turn suggested, which the user accepted)."""

    def __call__(self, query: str, session_id: str, user: str, accept_suggestion: bool = False) -> SolveResult: ...


_current: contextvars.ContextVar[SolveJob | None] = contextvars.ContextVar("evoskill_web_job", default=None)


@dataclass
class SolveJob:
    session_id: str
    query: str
    started: float = field(default_factory=time.time)
    events: list[tuple[float, str, str, str]] = field(default_factory=list)
    position: int | None = None
    done: bool = False
    accept_suggestion: bool = False
    cancel: threading.Event = field(default_factory=threading.Event)  # set: it leaves the queue, or its solve stops (deployments/cancel.py)

    def note(self, stage: str, status: Status, detail: str) -> None:
        self.events.append((round(time.time() - self.started, 1), stage, status, detail[:300]))

    def queued(self, position: int) -> None:
        """Waiting for a turn, ``position`` in the queue (1 is next)."""
        self.position = position
        self.note("queue", "progress", f"busy, position {position}")


class SolveJobs:
    """Solves on background threads, at most one per session at a time, each answered when ``admission`` lets it.

    Jobs run in a copy of ``context`` (default: the one this is made in), so flows reach the Prefect API chosen there.
    """

    def __init__(self, store: SkillStore, solver: Solver, admission: Admission, context: contextvars.Context | None = None):
        self._store = store
        self._solver = solver
        self._admission = admission
        self._context = context or contextvars.copy_context()
        self._jobs: dict[str, SolveJob] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        add_listener(self._on_event)

    def _on_event(self, stage: str, status: Status, detail: str) -> None:
        job = _current.get()
        if job is not None:
            job.note(stage, status, detail)

    def running(self, session_id: str) -> SolveJob | None:
        with self._lock:
            job = self._jobs.get(session_id)
        return job if job and not job.done else None

    def submit(self, conversation: Conversation, query: str, accept_suggestion: bool = False) -> SolveJob:
        """Store the question as pending and answer it in the background, in its turn (``accept_suggestion``: through the
        skill a turn suggested for it).

        ``RuntimeError`` if the session is answering one already; ``Busy`` (one) if the user has too many waiting.
        """
        session = conversation.session
        with self._lock:
            if (current := self._jobs.get(session.id)) is not None and not current.done:
                raise RuntimeError("this session is still answering its last question")
            ticket = self._admission.enter(session.user)
            job = self._jobs[session.id] = SolveJob(
                session.id, query, position=ticket.position or None, accept_suggestion=accept_suggestion
            )
        conversation.update(pending=query, status="open")
        thread = threading.Thread(target=self._context.copy().run, args=(self._run, job, session.user, ticket), daemon=True,
                                  name=f"evoskill-web-solve-{session.id}")  # fmt: skip
        thread.start()
        return job

    def cancel(self, session_id: str) -> bool:
        """Cancel the session's question: it leaves the queue, or its solve stops (its sandboxed run killed, no more LLM
        calls, its flow run Cancelled); whether one was running."""
        job = self.running(session_id)
        if job is None:
            return False
        job.note("solve", "failed", "cancelled by its user")
        job.cancel.set()
        return True

    def _run(self, job: SolveJob, user: str, ticket: Ticket) -> None:
        _current.set(job)
        try:
            with ticket:
                if not ticket.wait(job.queued, job.cancel):
                    if not self._closing.is_set():  # its user cancelled it before its turn: no longer pending
                        Conversation.open(self._store, job.session_id, user).update(pending=None)
                    return  # the server is stopping: the question stays pending, askable again
                job.position = None
                self._store.refresh()  # recall sees what other processes (the CLI, the MCP server) learned since
                with cancellable(job.cancel):
                    self._solver(job.query, job.session_id, user, accept_suggestion=job.accept_suggestion)
        except Exception as exc:  # noqa: BLE001 - shown in the chat, and the question stays askable
            job.note("solve", "failed", f"{type(exc).__name__}: {exc}")
            conversation = Conversation.open(self._store, job.session_id, user)
            conversation.add(job.query, SolveResult(success=False, session=job.session_id, error=f"{type(exc).__name__}: {exc}"))
        finally:
            job.done = True

    def close(self) -> None:
        """Stop listening; questions still waiting for a turn leave the queue (solves already running finish)."""
        remove_listener(self._on_event)
        self._closing.set()
        with self._lock:
            waiting = [job for job in self._jobs.values() if not job.done and job.position is not None]
        for job in waiting:
            job.cancel.set()
