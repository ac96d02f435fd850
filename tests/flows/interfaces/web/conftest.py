"""Fixtures of the web app's tests: the app over the test's settings, a stored skill, and waiting for a solve.

The test client browses the app as a browser would on loopback: the ``Host`` is ``127.0.0.1:8501`` and every request
carries the app's own ``Origin`` (browsers send it with form posts), which the app checks on state-changing requests.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from skills.documents import Skill
from tests.codes import n2_skill

ORIGIN = "http://127.0.0.1:8501"


@pytest.fixture
def client(web_app) -> Iterator[TestClient]:
    with TestClient(web_app, base_url=ORIGIN, headers={"Origin": ORIGIN}) as test_client:
        yield test_client


@pytest.fixture
def emt_skill(workspace) -> Skill:
    """A verified skill in the test's store: EMT atomization energy of a molecule."""
    from deployments.settings import get_settings
    from skills.store import open_store

    stored, _ = open_store(get_settings()).put_skill(n2_skill())
    return stored


def wait_for_answer(app, session_id: str, timeout_s: float = 240.0) -> None:
    """Block until the session's question is answered (fails the test after ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while app.state.web.jobs.running(session_id) is not None:
        assert time.monotonic() < deadline, f"session {session_id} still answering after {timeout_s} s"
        time.sleep(0.1)

