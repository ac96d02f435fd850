"""The chat's questions wait for their turn: one user's many questions do not hold another's up, a waiting question shows
its place on its pending turn, and a user with too many waiting is told busy (429)."""

from __future__ import annotations

import threading
import time

import pytest

from deployments.admission import Admission, Bounds
from flows.interfaces.web.jobs import SolveJobs
from flows.session import Conversation
from tasks.models import SolveResult


class GatedSolver:
    """A solver that records whose question it answers and finishes each only when the test lets it."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.gates: dict[str, threading.Event] = {}
        self.lock = threading.Lock()

    def __call__(self, query: str, session_id: str, user: str, accept_suggestion: bool = False) -> SolveResult:
        with self.lock:
            self.order.append(session_id)
            gate = self.gates.setdefault(session_id, threading.Event())
        assert gate.wait(60)
        return SolveResult(success=True, session=session_id)

    def finish(self, session_id: str) -> None:
        with self.lock:
            self.gates.setdefault(session_id, threading.Event()).set()

    def started(self, count: int) -> list[str]:
        deadline = time.monotonic() + 30
        while len(self.order) < count:
            assert time.monotonic() < deadline, f"only {self.order} started"
            time.sleep(0.01)
        return list(self.order)


@pytest.fixture
def gated(web_app, tmp_path):
    """The app's jobs answered by a ``GatedSolver``, one at a time in all, one question of each user waiting at most."""
    state = web_app.state.web
    state.jobs.close()
    solver = GatedSolver()
    state.jobs = SolveJobs(state.store, solver, Admission(tmp_path / "admission", Bounds(1, 1, 1), poll_s=0.01), state.context)
    yield state, solver
    for gate in list(solver.gates.values()):
        gate.set()
    state.jobs.close()


def _ask(client, query: str):
    """Ask in a new session of the chat's user; its id and the response."""
    response = client.post("/chat", data={"query": query}, follow_redirects=False)
    return (response.headers["location"].rsplit("/", 1)[1] if response.status_code == 303 else None), response


def _position(client, session_id: str, expected: int) -> None:
    deadline = time.monotonic() + 30
    while client.get(f"/chat/{session_id}/progress").json()["position"] != expected:
        assert time.monotonic() < deadline, f"{session_id} never reached position {expected}"
        time.sleep(0.01)


def test_a_waiting_question_shows_its_place_and_another_user_goes_first(gated, client):
    state, solver = gated
    first, _ = _ask(client, "first")
    assert solver.started(1) == [first]
    second, _ = _ask(client, "second")
    assert "Busy, position 1 in the queue" in client.get(f"/chat/{second}").text
    _position(client, second, 1)

    _, busy = _ask(client, "third")
    assert busy.status_code == 429 and "busy: 1 requests of yours are waiting already" in busy.text and "retry" in busy.text

    other = Conversation.open(state.store, "bob-1", user="bob")  # another user's one question, asked after the second
    state.jobs.submit(other, "bob's only question")
    assert state.jobs.running("bob-1").position == 1
    _position(client, second, 2)
    solver.finish(first)
    assert solver.started(2) == [first, "bob-1"]
    solver.finish("bob-1")
    assert solver.started(3) == [first, "bob-1", second]
    events = [e["detail"] for e in client.get(f"/chat/{second}/progress").json()["events"]]
    assert events[:2] == ["busy, position 1", "busy, position 2"]


def test_a_waiting_question_cancelled_leaves_the_queue_and_is_no_longer_pending(gated, client):
    state, solver = gated
    first, _ = _ask(client, "first")
    assert solver.started(1) == [first]
    second, _ = _ask(client, "second")
    _position(client, second, 1)
    page = client.get(f"/chat/{second}").text
    assert f'action="/chat/{second}/cancel"' in page and ">Cancel</button>" in page
    cancelled = client.post(f"/chat/{second}/cancel", follow_redirects=False)
    assert cancelled.status_code == 303 and cancelled.headers["location"] == f"/chat/{second}"
    deadline = time.monotonic() + 30
    while client.get(f"/chat/{second}/progress").json()["running"]:
        assert time.monotonic() < deadline, "the cancelled question still waits"
        time.sleep(0.01)
    assert Conversation.open(state.store, second, "local").session.pending is None
    solver.finish(first)
    assert solver.started(1) == [first]  # the cancelled one never ran
    time.sleep(0.3)
    assert solver.order == [first]


class CancelAwareSolver:
    """A solver that works until its call is cancelled (``deployments.cancel``), as a solve does."""

    def __init__(self) -> None:
        self.running = threading.Event()

    def __call__(self, query: str, session_id: str, user: str, accept_suggestion: bool = False) -> SolveResult:
        from deployments.cancel import current_cancel

        cancel = current_cancel()
        assert cancel is not None, "the solve does not run as a cancellable call"
        self.running.set()
        assert cancel.wait(60), "never cancelled"
        return SolveResult(success=False, session=session_id, error="cancelled by its caller")


def test_a_running_question_cancelled_stops_its_solve(web_app, client, tmp_path):
    state = web_app.state.web
    state.jobs.close()
    solver = CancelAwareSolver()
    state.jobs = SolveJobs(state.store, solver, Admission(tmp_path / "admission", Bounds(1, 1, 1), poll_s=0.01), state.context)
    try:
        session_id, _ = _ask(client, "a long one")
        assert solver.running.wait(30)
        job = state.jobs.running(session_id)
        assert job is not None
        started = time.monotonic()
        assert client.post(f"/chat/{session_id}/cancel", follow_redirects=False).status_code == 303
        while client.get(f"/chat/{session_id}/progress").json()["running"]:
            assert time.monotonic() - started < 2, "the solve did not stop within 2 s of the cancel"
            time.sleep(0.01)
        assert job.done and ("solve", "failed", "cancelled by its user") in [event[1:] for event in job.events]
        assert client.post(f"/chat/{session_id}/cancel", follow_redirects=False).status_code == 303  # nothing to cancel: no harm
        assert not state.jobs.cancel(session_id)
    finally:
        state.jobs.close()
