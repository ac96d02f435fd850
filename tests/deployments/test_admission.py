"""Admission: bounds in all and per user hold, one user's burst does not hold another user up, and a dead process's
slot or place is freed by the kernel (its lock files are closed when it dies).

Fairness is measured by the order of admission, not by timings.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest

from deployments.admission import Admission, Bounds, Busy, Ticket

ROOT = Path(__file__).resolve().parents[2]
HOLD_S = 0.05


def _admission(folder: Path, total: int, per_user: int, queued: int = 10) -> Admission:
    return Admission(folder, Bounds(total=total, per_user=per_user, queued_per_user=queued), poll_s=0.005)


def _serve(tickets: list[tuple[str, Ticket]], hold_s: float = HOLD_S) -> list[str]:
    """Wait each ticket on a thread of its own, hold the slot ``hold_s``, give it back; the names in admission order."""
    order: list[str] = []
    lock = threading.Lock()

    def run(name: str, ticket: Ticket) -> None:
        with ticket:
            assert ticket.wait()
            with lock:
                order.append(name)
            time.sleep(hold_s)

    threads = [threading.Thread(target=run, args=pair) for pair in tickets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return order


@pytest.mark.parametrize("per_user", [1, 2])
def test_one_users_burst_does_not_hold_another_users_request_up(tmp_path, per_user):
    """ada fires 8 requests, then bob one: bob is admitted before ada's third (global bound 2)."""
    admission = _admission(tmp_path, total=2, per_user=per_user)
    tickets = [(f"ada-{n}", admission.enter("ada")) for n in range(8)]
    tickets.append(("bob-0", admission.enter("bob")))
    places = {name: ticket.poll() for name, ticket in tickets}
    assert places["bob-0"] < places["ada-2"]  # the queue's decision: bob's turn comes before ada's third
    order = _serve(tickets)
    assert sorted(order) == sorted(name for name, _ in tickets)
    if per_user == 1:  # one of ada's at a time: bob's admission is also first in time (with two, it may tie with ada-2's)
        assert order.index("bob-0") < order.index("ada-2")
    assert [name for name in order if name.startswith("ada")] == [f"ada-{n}" for n in range(8)]  # FIFO within a user


def test_users_take_turns_round_robin(tmp_path):
    """Three users queue behind one holder: they are admitted a, b, c, a, b, c, ... whatever order they queued in."""
    admission = _admission(tmp_path, total=1, per_user=1)
    holder = admission.enter("holder")
    assert holder.poll() == 0
    tickets = [(f"{user}-{n}", admission.enter(user)) for user, n in [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1), ("c", 0)]]
    assert [t.poll() for _, t in tickets] == [1, 4, 6, 2, 5, 3]  # the places each is told
    holder.release()
    assert _serve(tickets, hold_s=0.02) == ["a-0", "b-0", "c-0", "a-1", "b-1", "a-2"]


def test_concurrency_never_exceeds_the_bounds(tmp_path):
    admission = _admission(tmp_path, total=3, per_user=2)
    active: Counter[str] = Counter()
    peak = {"all": 0, "user": 0}
    lock = threading.Lock()

    def run(user: str, ticket: Ticket) -> None:
        with ticket:
            assert ticket.wait()
            with lock:
                active[user] += 1
                peak["all"] = max(peak["all"], sum(active.values()))
                peak["user"] = max(peak["user"], active[user])
            time.sleep(0.01)
            with lock:
                active[user] -= 1

    threads = [threading.Thread(target=run, args=(user, admission.enter(user))) for _ in range(8) for user in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert peak == {"all": 3, "user": 2}  # reached (two users, three slots: one has two), never passed


def test_too_many_waiting_is_busy_per_user(tmp_path):
    admission = _admission(tmp_path, total=1, per_user=1, queued=2)
    holder = admission.enter("holder")
    waiting = [admission.enter("ada"), admission.enter("ada")]
    with pytest.raises(Busy, match="busy: 2 requests of yours are waiting already.*retry"):
        admission.enter("ada")
    other = admission.enter("bob")  # the limit is ada's own
    assert other.poll() == 2
    waiting[0].release()
    assert admission.enter("ada").poll() == 3  # a place freed is a place to take
    holder.release()
    assert other.wait()


def test_queued_limit_zero_admits_or_refuses_at_once(tmp_path):
    admission = _admission(tmp_path, total=1, per_user=1, queued=0)
    with admission.enter("ada") as first:
        assert first.admitted
        with pytest.raises(Busy):
            admission.enter("bob")
    assert admission.enter("bob").admitted


def test_an_awaited_turn_hears_its_places_and_leaves_the_event_loop_free(tmp_path):
    """``await ticket.turn(...)`` is told each new place; the loop runs other tasks meanwhile; cancelled, it leaves the queue."""
    admission = _admission(tmp_path, total=1, per_user=1)
    holder = admission.enter("holder")
    heard: list[int] = []

    async def told(position: int) -> None:
        heard.append(position)

    async def main() -> None:
        first, second = admission.enter("ada"), admission.enter("bob")
        with anyio.fail_after(30):  # a wait that held the loop would never let this task release the others
            async with anyio.create_task_group() as group:
                group.start_soon(second.turn, told)
                while not heard:
                    await anyio.sleep(0.001)
                first.release()  # bob moves up
                while heard == [2]:
                    await anyio.sleep(0.001)
                holder.release()
        assert second.admitted and heard == [2, 1]
        second.release()

        blocker = admission.enter("ada")
        waiting = admission.enter("bob")
        assert blocker.admitted and waiting.poll() == 1
        with anyio.move_on_after(0.1), waiting:
            await waiting.turn()
        assert not waiting.admitted and not list(tmp_path.glob("wait-*"))  # cancelled and left: no place kept
        blocker.release()

    anyio.run(main)


def _process(folder: Path, user: str, total: int = 1) -> subprocess.Popen[str]:
    """Another process of the workspace: it queues a request of ``user``, says 'admitted' or 'queued', and hangs on."""
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from deployments.admission import Admission, Bounds\n"
        f"ticket = Admission(Path({str(folder)!r}), Bounds({total}, 1, 10)).enter({user!r})\n"
        "print('admitted' if ticket.poll() == 0 else 'queued', flush=True)\n"
        "time.sleep(600)\n"
    )
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True, env={"PYTHONPATH": str(ROOT)})


def _killed(process: subprocess.Popen[str]) -> None:
    process.kill()
    process.wait(timeout=30)


def test_a_killed_holders_slot_is_freed(tmp_path):
    holder = _process(tmp_path, "ada")
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "admitted"
        admission = _admission(tmp_path, total=1, per_user=1)
        waiting = admission.enter("bob")
        assert waiting.poll() == 1  # the other process holds the only slot
        _killed(holder)
        timeout = threading.Event()
        threading.Timer(30, timeout.set).start()
        assert waiting.wait(cancel=timeout)
        waiting.release()
        timeout.set()
    finally:
        _killed(holder)


def test_a_killed_waiters_place_is_dropped(tmp_path):
    admission = _admission(tmp_path, total=1, per_user=1)
    holder = admission.enter("holder")
    waiter = _process(tmp_path, "ada")
    try:
        assert waiter.stdout is not None and waiter.stdout.readline().strip() == "queued"
        behind = admission.enter("bob")
        assert behind.poll() == 2
        _killed(waiter)
        assert behind.poll() == 1
        holder.release()
        assert behind.poll() == 0
        behind.release()
    finally:
        _killed(waiter)
    assert sorted(p.name for p in tmp_path.glob("wait-*")) == []  # no waiter's file is left
