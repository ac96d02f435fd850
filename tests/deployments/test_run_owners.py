"""Flow runs name their process; a run left Running by a process that died without a word is set Crashed, and no
other run is touched (a live process's, another host's, one without the tag, a finished one)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from prefect import flow, get_client
from prefect.client.schemas.objects import State, StateType
from prefect.settings import PREFECT_API_URL

from deployments.prefect_server import prefect_runtime
from deployments.run_owners import crash_orphaned_runs, owner_ended, owner_tag
from deployments.settings import get_settings


def _ended_process_tag() -> tuple[int, str]:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    tag = owner_tag(child.pid)
    child.wait()
    return child.pid, tag


def test_a_tag_names_a_live_process_until_it_ends_and_never_another_hosts():
    assert owner_ended([owner_tag()]) is None  # this process runs
    pid, tag = _ended_process_tag()
    assert owner_ended(["other-tag", tag]) == pid
    host, own_pid, started = owner_tag().removeprefix("evoskill-process:").rsplit(":", 2)
    assert owner_ended([f"evoskill-process:{host}:{own_pid}:{int(started) + 1}"]) == int(own_pid)  # the pid, used again later
    assert owner_ended([f"evoskill-process:another-host:{pid}:1"]) is None
    assert owner_ended([]) is None and owner_ended(["evoskill-process:garbled"]) is None


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
                ("elsewhere", [f"evoskill-process:another-host:{pid}:1"], "RUNNING"), ("untagged", [], "RUNNING"),
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
