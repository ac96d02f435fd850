"""Flow runs name their process; a run left Running by a process that died without a word is set Crashed, and no
other run is touched (a live process's, another host's, one without the tag, a finished one)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from prefect import flow, get_client
from prefect.client.schemas.objects import State, StateType
from prefect.settings import PREFECT_API_URL

from deployments.prefect_server import prefect_runtime
from deployments.run_owners import crash_orphaned_runs, owner_ended, owner_tag
from deployments.settings import get_settings

ROOT = Path(__file__).resolve().parents[2]


def _ended_process_tag() -> tuple[int, str]:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    tag = owner_tag(child.pid)
    child.wait()
    return child.pid, tag


def test_a_tag_names_a_live_process_until_it_ends_and_never_another_hosts():
    assert owner_ended([owner_tag()]) is None  # this process runs
    pid, tag = _ended_process_tag()
    assert owner_ended(["other-tag", tag]) == pid
    host, machine, own_pid, started = owner_tag().removeprefix("evoskill-process:").rsplit(":", 3)
    assert owner_ended([f"evoskill-process:{host}:{machine}:{own_pid}:{int(started) + 1}"]) == int(own_pid)  # the pid, used again later
    assert owner_ended([f"evoskill-process:another-host:{machine}:{pid}:1"]) is None
    assert owner_ended([f"evoskill-process:{host}:{machine.split('.')[0]}.1:{pid}:1"]) is None  # another pid namespace's pid
    assert owner_ended([f"evoskill-process:{host}:{machine}:{pid}:"]) is None  # no start time: never judged
    assert owner_ended([]) is None and owner_ended(["evoskill-process:garbled"]) is None


def test_a_live_process_in_another_pid_namespace_is_never_taken_for_an_ended_one(tmp_path):
    """Two containers of one pod share the host name and the loopback Prefect server, not their pids."""
    import shutil

    if not shutil.which("unshare") or subprocess.run(["unshare", "-Urpf", "--mount-proc", "true"], capture_output=True).returncode:
        import pytest

        pytest.skip("no unprivileged pid namespaces here")
    tag_file = tmp_path / "tag"
    inside = subprocess.Popen(["unshare", "-Urpf", "--mount-proc", sys.executable, "-c",
                               f"import sys, time; sys.path.insert(0, {str(ROOT)!r}); from deployments.run_owners import owner_tag; "
                               f"open({str(tag_file)!r}, 'w').write(owner_tag()); time.sleep(30)"])  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while not (tag_file.exists() and tag_file.read_text()):
            assert time.monotonic() < deadline and inside.poll() is None, "the process in its own pid namespace did not start"
            time.sleep(0.05)
        assert owner_ended([tag_file.read_text()]) is None
    finally:
        inside.kill()
        inside.wait()


def test_runs_left_running_by_an_ended_process_are_crashed_and_no_other_run(workspace):
    api = PREFECT_API_URL.value()
    pid, dead = _ended_process_tag()

    @flow(name="owner-test")
    def owner_test() -> None: ...

    async def made() -> dict[str, str]:
        async with get_client() as client:
            ids = {}
            for name, tags, state in [
                ("orphan", [dead], "RUNNING"), ("orphan-pending", [dead], "PENDING"), ("live", [owner_tag()], "RUNNING"),
                ("elsewhere", [dead.replace("evoskill-process:", "evoskill-process:another-host-")], "RUNNING"), ("untagged", [], "RUNNING"),
                ("finished", [dead], "COMPLETED"),
            ]:  # fmt: skip
                run = await client.create_flow_run(owner_test, name=f"{name}-{os.getpid()}", tags=tags, state=State(type=StateType(state)))
                ids[name] = run.id
            return ids

    ids = asyncio.run(made())
    crashed = crash_orphaned_runs(api)
    assert sorted(crashed) == sorted([f"orphan-{os.getpid()}", f"orphan-pending-{os.getpid()}"])

    async def states() -> dict[str, tuple[str, str | None]]:
        async with get_client() as client:
            return {name: ((run := await client.read_flow_run(i)).state.type.value, run.state.message) for name, i in ids.items()}

    seen = asyncio.run(states())
    assert seen["orphan"][0] == "CRASHED" and f"pid {pid}" in seen["orphan"][1]
    assert {name: state for name, (state, _) in seen.items() if name not in ("orphan", "orphan-pending")} == {
        "live": "RUNNING", "elsewhere": "RUNNING", "untagged": "RUNNING", "finished": "COMPLETED"}  # fmt: skip
    assert crash_orphaned_runs(api) == []  # once


def test_every_flow_run_started_under_prefect_runtime_names_its_process(workspace):
    @flow(name="owner-tagged")
    def tagged() -> int:
        return 1

    with prefect_runtime(get_settings()):
        state = tagged(return_state=True)

    async def tags() -> list[str]:
        async with get_client() as client:
            return (await client.read_flow_run(state.state_details.flow_run_id)).tags

    assert owner_tag() in asyncio.run(tags())
