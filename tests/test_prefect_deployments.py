"""prefect.yaml deploys for real (``prefect deploy --all``), and a deployment runs through a process worker."""

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import yaml
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolCreate
from prefect.deployments import run_deployment
from prefect.settings import PREFECT_API_URL

from deployments.settings import get_settings
from skills.documents import Skill, TestCase
from skills.params import signature_schema
from skills.store import open_store

ROOT = Path(__file__).resolve().parents[1]
PREFECT = [sys.executable, "-m", "prefect"]


async def _deployment_names() -> set[str]:
    async with get_client() as client:
        return {d.name for d in await client.read_deployments()}


def _ensure_pool() -> None:
    async def create() -> None:
        async with get_client() as client:
            names = {p.name for p in await client.read_work_pools()}
            if "evoskill-process" not in names:
                await client.create_work_pool(WorkPoolCreate(name="evoskill-process", type="process"))

    asyncio.run(create())


def test_every_deployment_deploys_and_run_skill_runs_on_a_process_worker(workspace, tmp_path, monkeypatch):
    store_path = tmp_path / "store"
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    monkeypatch.setenv("EVOSKILL_STORE_PATH", str(store_path))
    code = "def run(x: int = 2) -> int:\n    return 3 * x\n"
    open_store(get_settings()).put_skill(Skill(name="triple", code=code, parameters=signature_schema(code), test_case=TestCase(params={}, expected=6)))
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PWD": str(ROOT)}
    _ensure_pool()
    deployed = subprocess.run([*PREFECT, "--no-prompt", "deploy", "--all"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert deployed.returncode == 0, deployed.stdout[-3000:] + deployed.stderr[-3000:]
    declared = {d["name"] for d in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]}
    assert declared <= asyncio.run(_deployment_names())

    run = run_deployment("run-skill/run-skill", parameters={"skill_ref": "triple", "params": {"x": 5}, "executor": "local"}, timeout=0)
    worker = subprocess.run([*PREFECT, "worker", "start", "--pool", "evoskill-process", "--run-once"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    assert worker.returncode == 0, worker.stdout[-3000:] + worker.stderr[-3000:]

    async def final_state():
        async with get_client() as client:
            for _ in range(120):
                flow_run = await client.read_flow_run(run.id)
                if flow_run.state and flow_run.state.is_final():
                    return flow_run.state
                await asyncio.sleep(0.5)
        return flow_run.state

    state = asyncio.run(final_state())
    assert state.is_completed(), state
    store = open_store(get_settings())  # written by the flow run's own process
    assert store.get_skill("triple").stats.successes == 1
    assert [d["output"] for d in store.job_store().query({}, properties=["output"])] == [15]
