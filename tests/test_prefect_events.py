"""The suite's own hygiene: events queued for a Prefect server a test stopped are dropped, not retried for minutes."""

import time

from prefect.events import emit_event
from prefect.events.worker import EventsWorker
from prefect.server.api.server import SubprocessASGIServer
from prefect.settings import PREFECT_API_URL, temporary_settings

from deployments.net import free_port
from tests.prefect_events import deliver_events, forget_events_to_stopped_servers


def test_events_for_a_stopped_server_are_forgotten_and_others_kept():
    deliver_events()  # the session's worker ends: the next event starts one bound to this test's server
    server = SubprocessASGIServer(port=free_port())  # a server of its own (without a port: the session's)
    server.start(timeout=120)
    with temporary_settings({PREFECT_API_URL: server.api_url}):
        emit_event(event="evoskill.test", resource={"prefect.resource.id": "evoskill.first"})  # the worker connects
        time.sleep(1)
        server.stop()
        for i in range(10):
            emit_event(event="evoskill.test", resource={"prefect.resource.id": f"evoskill.{i}"})
        worker = EventsWorker.instance()
    assert forget_events_to_stopped_servers() >= 9  # one may be in flight already
    assert worker._queue.qsize() <= 1  # at most the stop mark
    assert forget_events_to_stopped_servers() == 0


def test_a_worker_bound_to_another_server_is_released_after_its_test():
    from prefect.settings import PREFECT_API_URL as HARNESS

    from tests.prefect_events import release_workers_of_other_servers

    deliver_events()  # the session's worker ends: the next event starts one bound to this test's server
    server = SubprocessASGIServer(port=free_port())  # a server of its own (without a port: the session's)
    server.start(timeout=120)
    with temporary_settings({PREFECT_API_URL: server.api_url}):
        emit_event(event="evoskill.test", resource={"prefect.resource.id": "evoskill.other"})
        time.sleep(1)
        bound = EventsWorker.instance()
    server.stop()
    release_workers_of_other_servers(HARNESS.value())
    assert EventsWorker.instance() is not bound  # the session's events get a worker of their own
