"""Admission: how many solves and skill runs the chat and the MCP server answer at once, and whose turn is next.

Slots are lock files in ``<workspace>/admission/``, held with ``flock``: ``slot-<n>.lock`` bounds all users together
(``max_concurrent_solves``), ``user-<hash>-<n>.lock`` each user (``max_concurrent_solves_per_user``). A request holds
one of each; the kernel drops the locks when the holder closes them or dies, so a crashed holder's slot frees itself.
Every process of one workspace (``evoskill serve``, ``evoskill mcp``) shares them.

Waiting requests are listed in ``queue.json`` (changed under ``queue.lock``); each waiter also holds its own
``wait-<id>.lock``, so the entry of a process that died is dropped by the next one to look. A free slot goes to the
first waiter in fair order whose user is under its own bound. The order is start-time fair queueing: a request's
tag is one past its user's previous request, and never behind the tag last admitted, so users take turns
(round-robin) and each user's requests keep their order (FIFO). A user who already has ``max_queued_per_user``
requests waiting is told busy.

>>> admission = Admission(Path(tempfile.mkdtemp()), Bounds(total=2, per_user=1, queued_per_user=4))   # doctest: +SKIP
>>> with admission.enter("ada") as ticket:                                                             # doctest: +SKIP
...     ticket.wait(lambda position: print(f"busy, position {position}"))
...     solve(...)

An async door waits with ``await ticket.turn(on_wait)`` instead: each look at the queue runs on a worker thread, so the
event loop serves other requests meanwhile.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import anyio
from pydantic import BaseModel, Field, ValidationError

from deployments.files import file_lock, write_atomic
from deployments.settings import Settings

__all__ = ["Admission", "Bounds", "Busy", "Ticket"]

_POLL_S = 0.1


class Busy(RuntimeError):
    """The user has as many requests waiting as may wait: retry when one is answered."""


class _Entry(BaseModel):
    id: str
    user: str
    seq: int
    tag: int


class _Queue(BaseModel):
    """Who waits (``seq``: arrival order), the tag last admitted and each user's next tag where it is ahead of that."""

    next_seq: int = 0
    admitted_tag: int = 0
    next_tags: dict[str, int] = Field(default_factory=dict)
    entries: list[_Entry] = Field(default_factory=list)

    def add(self, entry_id: str, user: str) -> _Entry:
        """Queue a request: its tag is its user's next, but not behind the tag last admitted."""
        entry = _Entry(id=entry_id, user=user, seq=self.next_seq, tag=max(self.admitted_tag, self.next_tags.get(user, 0)))
        self.next_seq += 1
        self.next_tags[user] = entry.tag + 1
        self.entries.append(entry)
        return entry

    def admit(self, entry: _Entry) -> None:
        self.entries.remove(entry)
        self.admitted_tag = max(self.admitted_tag, entry.tag)
        self.next_tags = {user: tag for user, tag in self.next_tags.items() if tag > self.admitted_tag}

    def order(self) -> list[_Entry]:
        """Waiters in the order they get slots: by tag, then arrival."""
        return sorted(self.entries, key=lambda e: (e.tag, e.seq))


@dataclass(frozen=True)
class Bounds:
    """Requests running at once in all (``total``) and per user, and requests one user may have waiting."""

    total: int
    per_user: int
    queued_per_user: int

    @classmethod
    def from_settings(cls, settings: Settings) -> Bounds:
        return cls(settings.max_concurrent_solves, settings.max_concurrent_solves_per_user, settings.max_queued_per_user)


def _take(path: Path) -> int | None:
    """A descriptor holding ``path``'s lock, or None when another holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _held(path: Path) -> bool:
    """Whether someone holds ``path``'s lock (a free one is taken and dropped at once)."""
    fd = _take(path)
    if fd is None:
        return True
    os.close(fd)
    return False


class Admission:
    """The slots and the queue of one workspace (``folder``) under ``bounds``."""

    def __init__(self, folder: Path, bounds: Bounds, poll_s: float = _POLL_S):
        self.folder, self.bounds, self.poll_s = folder, bounds, poll_s
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)

    @classmethod
    def from_settings(cls, settings: Settings) -> Admission:
        return cls(settings.admission_root(), Bounds.from_settings(settings))

    def enter(self, user: str) -> Ticket:
        """Queue a request of ``user``, admitted at once when its turn has come; ``Busy`` when too many of theirs wait."""
        ticket = Ticket(self, user)
        with self._queue() as queue:
            tags = dict(queue.next_tags)
            entry = queue.add(ticket.id, user)
            position = self._try_admit(queue, ticket)
            waiting = sum(e.user == user for e in queue.entries)
            if position and waiting > self.bounds.queued_per_user:
                queue.entries.remove(entry)
                queue.next_tags = tags  # a refused request takes no turn
                ticket.forget()
                raise Busy(
                    f"busy: {waiting - 1} requests of yours are waiting already (at most {self.bounds.queued_per_user}); "
                    "retry when one is answered"
                )
        ticket.position = position
        return ticket

    def poll(self, ticket: Ticket) -> int:
        """0 once ``ticket`` is admitted (it then holds its slots), else its position in the queue (1 is next)."""
        with self._queue() as queue:
            return self._try_admit(queue, ticket)

    def leave(self, ticket: Ticket) -> None:
        with self._queue() as queue:
            queue.entries = [e for e in queue.entries if e.id != ticket.id]

    def _try_admit(self, queue: _Queue, ticket: Ticket) -> int:
        """Admit ``ticket`` when it is the first waiter whose user is under its bound and slots are free; else its position."""
        queue.entries = [e for e in queue.entries if e.id == ticket.id or self._alive(e)]
        order = queue.order()
        mine = next((n for n, e in enumerate(order) if e.id == ticket.id), None)
        if mine is None:
            raise RuntimeError("this request is no longer queued")
        running = {user: self._running(user) for user in {e.user for e in order}}
        first = next((e for e in order if running[e.user] < self.bounds.per_user), None)
        if first is order[mine] and ticket.hold(self._free_slot(self._slot_files()), self._free_slot(self._user_files(ticket.user))):
            queue.admit(order[mine])
            return 0
        return mine + 1

    def _slot_files(self) -> list[Path]:
        return [self.folder / f"slot-{n}.lock" for n in range(self.bounds.total)]

    def _user_files(self, user: str) -> list[Path]:
        key = hashlib.sha256(user.encode()).hexdigest()[:16]
        return [self.folder / f"user-{key}-{n}.lock" for n in range(self.bounds.per_user)]

    def wait_file(self, ticket_id: str) -> Path:
        """The lock file a waiter holds while it waits."""
        return self.folder / f"wait-{ticket_id}.lock"

    def _alive(self, entry: _Entry) -> bool:
        """Whether the entry's waiter still holds its lock; a dead one's file goes."""
        if _held(self.wait_file(entry.id)):
            return True
        self.wait_file(entry.id).unlink(missing_ok=True)
        return False

    def _running(self, user: str) -> int:
        return sum(_held(path) for path in self._user_files(user))

    @staticmethod
    def _free_slot(paths: list[Path]) -> int | None:
        return next((fd for fd in map(_take, paths) if fd is not None), None)

    @contextmanager
    def _queue(self) -> Iterator[_Queue]:
        """The queue, under its lock across processes; written back when the block changed it and raised nothing."""
        path = self.folder / "queue.json"
        with file_lock(self.folder / "queue.lock"):
            try:
                before = path.read_text()
                queue = _Queue.model_validate_json(before)
            except (FileNotFoundError, ValidationError):
                before, queue = "", _Queue()
            yield queue
            after = queue.model_dump_json()
            if after != before:
                write_atomic(path, after)


class Ticket:
    """One request's place: in the queue until admitted, then holding a slot of all users' and one of its user's.

    ``release`` (or leaving its ``with`` block) gives the place up; the kernel does so if the process dies.
    """

    def __init__(self, admission: Admission, user: str):
        self.admission, self.user, self.id = admission, user, uuid.uuid4().hex
        self.position = 1
        self._slots: list[int] = []
        self._wait_fd = _take(admission.wait_file(self.id))

    @property
    def admitted(self) -> bool:
        return bool(self._slots)

    def hold(self, slot: int | None, user_slot: int | None) -> bool:
        """Keep both slots when both were free; else give back the one taken."""
        if slot is not None and user_slot is not None:
            self._slots = [slot, user_slot]
            self.forget()
            return True
        for fd in (slot, user_slot):
            if fd is not None:
                os.close(fd)
        return False

    def poll(self) -> int:
        """0 once admitted, else the position in the queue (1 is next)."""
        if not self.admitted:
            self.position = self.admission.poll(self)
        return 0 if self.admitted else self.position

    def wait(self, on_wait: Callable[[int], None] | None = None, cancel: threading.Event | None = None) -> bool:
        """Block until admitted (True), telling ``on_wait`` each new position; False when ``cancel`` is set first."""
        told = 0
        while (position := self.poll()) != 0:
            if on_wait is not None and position != told:
                on_wait(position)
                told = position
            if cancel is not None and cancel.wait(self.admission.poll_s):
                return False
            if cancel is None:
                time.sleep(self.admission.poll_s)
        return True

    async def turn(self, on_wait: Callable[[int], Awaitable[None]] | None = None) -> None:
        """Wait until admitted without blocking the event loop (each look on a worker thread), awaiting ``on_wait`` with
        each new position; cancelling the awaiting task stops the wait (leave the ``with`` block to leave the queue)."""
        told = 0
        while (position := await anyio.to_thread.run_sync(self.poll)) != 0:
            if on_wait is not None and position != told:
                await on_wait(position)
                told = position
            await anyio.sleep(self.admission.poll_s)

    def forget(self) -> None:
        """Drop the waiter's lock file (the entry is already out of the queue)."""
        if self._wait_fd is not None:
            with suppress(FileNotFoundError):
                self.admission.wait_file(self.id).unlink()
            os.close(self._wait_fd)
            self._wait_fd = None

    def release(self) -> None:
        """Give the slots back, or leave the queue (idempotent)."""
        if self._wait_fd is not None:
            self.admission.leave(self)
            self.forget()
        for fd in self._slots:
            os.close(fd)
        self._slots = []

    def __enter__(self) -> Ticket:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.release()
