"""Prefect events (and API logs) a test process queued: delivered before a test stops its server, forgotten where the
server is gone, and never left to a worker bound to another test's server.

Prefect keeps one events worker per process for every running server (its key does not hold the URL; its client is
bound to the URL of the moment it started). After a test that ran flows against a server of its own, later tests'
events went to that worker, and so to a server that was gone: each event was retried for seconds, and the session's
end drained them all, minutes after the summary.
"""

from __future__ import annotations

import queue
from typing import Any

from deployments.net import url_responds

__all__ = ["deliver_events", "forget_events_to_stopped_servers", "release_workers_of_other_servers"]


def deliver_events(timeout_s: float = 60.0) -> None:
    """Send the events queued so far while their servers still answer, and end the workers (call it before stopping a
    server: the next event starts a worker bound to the API of that moment)."""
    from prefect.events.worker import EventsWorker

    EventsWorker.drain_all(timeout=timeout_s, at_exit=False)


def _workers() -> list[Any]:
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    found: list[Any] = []
    for kind in (EventsWorker, APILogWorker):
        with kind._instance_lock:
            found += list(kind._instances.values())
    return found


def _url_of(worker: Any) -> str | None:
    """The API a worker sends to: from its options, or from the client it made when it started."""
    client = getattr(worker, "_client", None)
    url = dict(getattr(worker, "client_options", ())).get("api_url") or getattr(client, "_api_url", None) or getattr(client, "api_url", None)
    return str(url).rstrip("/") if url else None


def _empty(worker: Any) -> int:
    pending: queue.Queue[Any] = worker._queue
    dropped = 0
    while True:
        try:
            item = pending.get_nowait()
        except queue.Empty:
            return dropped
        pending.task_done()
        if item is None:  # the stop mark: kept
            pending.put_nowait(None)
            return dropped
        dropped += 1


def forget_events_to_stopped_servers() -> int:
    """Drop what the events and API-log workers queued for servers that no longer answer; how many items were dropped."""
    dropped = 0
    for worker in _workers():
        url = _url_of(worker)
        if url and not url_responds(f"{url}/health", timeout=2.0):
            dropped += _empty(worker)
    return dropped


def release_workers_of_other_servers(current: str | None) -> None:
    """End the events workers bound to another API than ``current`` (a test's own server): what they hold is delivered
    where that server answers and dropped where it is gone; the next event starts a worker for ``current``."""
    from prefect.events.worker import EventsWorker

    current = current.rstrip("/") if current else None
    with EventsWorker._instance_lock:
        others = [w for w in EventsWorker._instances.values() if (url := _url_of(w)) is not None and url != current]
    for worker in others:
        url = _url_of(worker)
        if url and not url_responds(f"{url}/health", timeout=2.0):
            _empty(worker)
        worker.drain()
