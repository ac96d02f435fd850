"""The Prefect server the CLI starts: its services on (stages recorded, schedules run), its UI calling its own API
(a printed link opens the run in a browser), its files its owner's only, and one that an older evoskill started
differently replaced."""

import asyncio
import logging
import os
import signal
import stat
import subprocess
import sys
import time
import types
from pathlib import Path

import prefect
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolCreate
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName, FlowRunFilter, FlowRunFilterId
from prefect.settings import PREFECT_API_URL, PREFECT_CLIENT_MAX_RETRIES, temporary_settings

from deployments import prefect_server
from deployments.interpreter import isolation_flags
from deployments.net import free_port, url_responds
from deployments.prefect_server import ensure_local_server, prefect_runtime, server_env
from deployments.prefect_supervisor import SupervisorSpec
from deployments.settings import get_settings
from flows.solve import solve
from tests.codes import N2_CODE, N2_QUERY
from tests.planted import plant
from tests.prefect_events import deliver_events

ROOT = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


@pytest.fixture(scope="module")
def local_server(tmp_path_factory):
    """A server on a free port, started by ``ensure_local_server`` in place of an older evoskill's (services off)."""
    workspace = tmp_path_factory.mktemp("prefect-workspace")
    settings = get_settings().model_copy(update={"workspace": workspace, "prefect_server_port": free_port()})
    port = settings.prefect_server_port
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_API", "PREFECT_SERVER", "PREFECT_UI"))}
    older = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port), "--no-services"],
                             env={**env, "PREFECT_HOME": str(workspace / "older")}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while not url_responds(f"http://127.0.0.1:{port}/api/health", timeout=1.0):
        assert time.monotonic() < deadline and older.poll() is None, "the older server did not start"
        time.sleep(0.5)
    url = ensure_local_server(settings, wait_s=120)
    yield url, older, settings
    deliver_events()  # what the tests' flows told the server, before it stops
    for line in subprocess.run(["pgrep", "-f", f"prefect server start --host 127.0.0.1 --port {port}"], capture_output=True, text=True).stdout.split():
        os.kill(int(line), signal.SIGTERM)
    older.wait(timeout=30)


def test_a_server_started_with_other_settings_is_replaced_and_the_ui_calls_its_own_api(local_server):
    url, older, settings = local_server
    older.wait(timeout=10)  # stopped by ensure_local_server
    import json
    import urllib.request

    with urllib.request.urlopen(url.removesuffix("/api") + "/ui-settings", timeout=10) as reply:
        assert json.loads(reply.read())["api_url"] == url
    assert url == f"http://127.0.0.1:{settings.prefect_server_port}/api"
    assert server_env(settings)["PREFECT_SERVER_DATABASE_CONNECTION_URL"].endswith(str(settings.workspace / "prefect" / "prefect.db"))
    assert (settings.workspace / "prefect" / "prefect.db").exists()
    servers = [pid for pid, _, _ in prefect_server._servers_on(settings.prefect_server_port)]
    assert len(servers) == 1 and ensure_local_server(settings) == url  # the server started as today is kept
    assert [pid for pid, _, _ in prefect_server._servers_on(settings.prefect_server_port)] == servers
    # The server's files are the owner's only: it inherits the workspace's private umask.
    loose = [f"{stat.filemode(p.lstat().st_mode)} {p}" for p in [settings.workspace, *settings.workspace.rglob("*")]
             if not p.is_symlink() and p.lstat().st_mode & 0o077]  # fmt: skip
    assert loose == []


def test_a_printed_link_opens_the_solve_in_the_browser_with_its_stages(local_server, scripted, caplog, monkeypatch, request):
    url, _, _ = local_server
    monkeypatch.setenv("EVOSKILL_TRIAGE_LLM", "false")
    monkeypatch.setenv("EVOSKILL_LEARN", "false")
    scripted([{"stage": "research", "content": {"packages": ["ase"], "code": N2_CODE}}])
    with temporary_settings({PREFECT_API_URL: url}), caplog.at_level(logging.INFO):
        result = solve(N2_QUERY)
        assert result.success

        async def stages() -> set[str]:
            async with get_client() as client:
                for _ in range(120):
                    runs = await client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[result.flow_run_id])))
                    if {"recall", "deep-solve"} <= {("deep-solve" if r.name.startswith("deep-solve") else r.name) for r in runs}:
                        break
                    await asyncio.sleep(0.25)
                flow_run = await client.read_flow_run(result.flow_run_id)
                return {("deep-solve" if r.name.startswith("deep-solve") else r.name) for r in runs} | {flow_run.name}

        recorded = asyncio.run(stages())
    assert {"recall", "deep-solve"} <= recorded, "the server's services record each stage as a task run"
    printed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("View at ")]
    link = next(m.removeprefix("View at ") for m in printed if result.flow_run_id in m)
    assert link == f"{url.removesuffix('/api')}/runs/flow-run/{result.flow_run_id}"
    name = next(n for n in recorded if n.startswith("solve: "))
    browser = request.getfixturevalue("browser")  # after the solve: Playwright runs an event loop in this thread
    page = browser.new_page()
    page.goto(link)
    page.get_by_text(name).first.wait_for(timeout=60_000)
    assert "Can't connect to Server API" not in page.content()


def test_prefect_yaml_deploys_and_the_scheduler_plans_the_nightly_benchmark(local_server):
    url, _, _ = local_server

    async def pool() -> None:
        async with get_client() as client:
            await client.create_work_pool(WorkPoolCreate(name="evoskill-process", type="process"))

    with temporary_settings({PREFECT_API_URL: url}):
        asyncio.run(pool())
    env = {**os.environ, "PREFECT_API_URL": url, "PWD": str(ROOT)}
    deployed = subprocess.run([sys.executable, "-m", "prefect", "--no-prompt", "deploy", "-n", "benchmark-nightly"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
    assert deployed.returncode == 0, deployed.stdout[-3000:] + deployed.stderr[-3000:]

    async def scheduled() -> list:
        async with get_client() as client:
            for _ in range(240):
                runs = await client.read_flow_runs(deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=["benchmark-nightly"])))
                if runs:
                    return runs
                await asyncio.sleep(0.5)
        return []

    with temporary_settings({PREFECT_API_URL: url}):
        runs = asyncio.run(scheduled())
    assert runs, "the scheduler planned no run of the cron deployment"
    assert all(r.state.is_scheduled() for r in runs)
    assert all(r.expected_start_time.hour == 2 and r.expected_start_time.minute == 0 for r in runs)  # "0 2 * * *" UTC


class _Exited:
    """A started process that has already ended (its server never answers)."""

    def poll(self) -> int:
        return 1


def test_the_server_starts_isolated_from_the_users_folder_in_one_evoskill_owns(workspace, tmp_path, monkeypatch):
    here = tmp_path / "here"
    marker = plant(here, "prefect", "spglib", "uvicorn")
    monkeypatch.chdir(here)
    settings = get_settings().model_copy(update={"prefect_server_port": free_port()})
    started: list[tuple[list[str], dict]] = []
    fake = types.SimpleNamespace(Popen=lambda cmd, **kw: started.append((cmd, kw)) or _Exited(), STDOUT=subprocess.STDOUT, DEVNULL=subprocess.DEVNULL)
    monkeypatch.setattr(prefect_server, "subprocess", fake)
    with pytest.raises(RuntimeError, match="did not start"):
        ensure_local_server(settings, wait_s=5)
    [(supervisor, options)] = started  # the supervisor, started the same way, runs the server as its child
    assert supervisor[0] == sys.executable and supervisor[1 : supervisor.index("-m")] == isolation_flags()
    assert supervisor[supervisor.index("-m") + 1] == "deployments.prefect_supervisor"
    cmd = SupervisorSpec.model_validate_json(supervisor[-1]).command
    flags = cmd[1 : cmd.index("-m")]
    assert cmd[0] == sys.executable and "-I" in flags and cmd[len(flags) + 1 : len(flags) + 5] == ["-m", "prefect", "server", "start"]
    folder = Path(options["cwd"])
    assert folder.is_dir() and folder.resolve().is_relative_to(settings.workspace.resolve()) and not any(folder.iterdir())
    assert options["env"]["PREFECT_SERVER_DATABASE_CONNECTION_URL"].endswith("prefect.db")  # PREFECT_* reach it: -I ignores only PYTHON*
    # The same interpreter and flags, started where the user stands: the installed Prefect answers, the planted one stays out.
    version = subprocess.run([*cmd[: cmd.index("-m")], "-m", "prefect", "--version"], cwd=here, env=options["env"], capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.strip() == prefect.__version__, version.stderr[-2000:]
    assert not marker.exists()


def test_a_server_an_older_evoskill_started_without_isolation_is_replaced(workspace, tmp_path, monkeypatch):
    """A server started as ``python -m prefect server start`` (the current folder first on its path) is stopped, even with
    today's settings, so that an isolated one starts in its place."""
    settings = get_settings().model_copy(update={"prefect_server_port": free_port()})
    older = tmp_path / "older"
    (older / "prefect").mkdir(parents=True)
    (older / "prefect" / "__init__.py").write_text("")
    (older / "prefect" / "__main__.py").write_text("import time\ntime.sleep(120)\n")  # stands for a server: only its command line counts
    port = str(settings.prefect_server_port)
    old = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", port], cwd=older,
                           env={**os.environ, **prefect_server._wanted(settings)}, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while Path(f"/proc/{old.pid}/cmdline").read_bytes().split(b"\0")[1:5] != [b"-m", b"prefect", b"server", b"start"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        fake = types.SimpleNamespace(Popen=lambda cmd, **kw: _Exited(), STDOUT=subprocess.STDOUT, DEVNULL=subprocess.DEVNULL)
        monkeypatch.setattr(prefect_server, "subprocess", fake)
        with pytest.raises(RuntimeError, match="did not start"):
            ensure_local_server(settings, wait_s=1)
        assert old.wait(timeout=15) == -signal.SIGTERM
    finally:
        if old.poll() is None:
            old.kill()
            old.wait()


def test_the_ephemeral_server_prefect_starts_does_not_import_from_the_users_folder(workspace, tmp_path, monkeypatch):
    """With ``prefect_api = "ephemeral"`` Prefect itself starts ``python -m uvicorn ...`` from this process's environment
    and folder; evoskill cannot pass it ``-I``, so the environment keeps the current folder off its path."""
    here = tmp_path / "here"
    marker = plant(here, "uvicorn", "prefect")
    monkeypatch.chdir(here)
    monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # prefect_runtime sets it for good
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with prefect_runtime(get_settings(prefect_api="ephemeral")) as where:
        assert where == "ephemeral"
        # Prefect's own command line for its ephemeral server (prefect.server.api.server.SubprocessASGIServer), asked for its version.
        version = subprocess.run([sys.executable, "-m", "uvicorn", "--version"], cwd=here, env=dict(os.environ), capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and "uvicorn" in version.stdout.lower(), version.stderr[-2000:]
    assert not marker.exists()


def test_the_client_waits_out_a_locked_sqlite_database_unless_told_otherwise(workspace, monkeypatch):
    """Against its own SQLite-backed server the client retries "503, database is locked" seven times; a user's
    ``PREFECT_CLIENT_MAX_RETRIES``, or an API of the user's own, keeps Prefect's setting."""
    monkeypatch.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("PREFECT_CLIENT_MAX_RETRIES", raising=False)
    with temporary_settings({PREFECT_CLIENT_MAX_RETRIES: 5}):
        with prefect_runtime(get_settings(prefect_api="ephemeral")):
            assert PREFECT_CLIENT_MAX_RETRIES.value() == 7
        monkeypatch.setenv("PREFECT_CLIENT_MAX_RETRIES", "3")
        with prefect_runtime(get_settings(prefect_api="ephemeral")):
            assert PREFECT_CLIENT_MAX_RETRIES.value() == 5
        monkeypatch.delenv("PREFECT_CLIENT_MAX_RETRIES")
        monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
        with prefect_runtime(get_settings(prefect_api="ephemeral")):
            assert PREFECT_CLIENT_MAX_RETRIES.value() == 5
