"""Compiled skills through jobflow, here and on a real Dask cluster: GPU placement, batches, lost workers, reruns, export."""

import json
import os
import signal
import subprocess
import sys

import pytest

from deployments.progress import add_listener, remove_listener
from deployments.settings import get_settings
from flows.interfaces.cli.main import main
from flows.run_skill import run_skill
from flows.run_skill_batch import batch_answers, run_skill_batch
from skills.documents import BatchItem, Skill, SkillBatch, TestCase
from skills.params import ParameterError, signature_schema
from skills.store import open_store
from tests.starter import learn_starter, rocksalt_density
from tests.starter import rocksalt as rocksalt_crystal

TRIPLE = "def run(x: int = 2) -> int:\n    if x == 7:\n        raise ValueError('seven is refused')\n    return 3 * x\n"
ON_GPU = "import os\ndef run(x: int = 1) -> int:\n    return x\n"


def _store_skill(name: str, code: str, gpu: bool = False) -> Skill:
    skill = Skill(name=name, code=code, parameters=signature_schema(code), resources={"gpu": gpu}, test_case=TestCase(params={}, expected=None))
    return open_store(get_settings()).put_skill(skill)[0]


def _worker_names(client) -> dict[str, str]:
    return {w["name"]: address for address, w in client.scheduler_info(n_workers=-1)["workers"].items()}


def test_a_gpu_skill_runs_only_on_the_worker_that_advertises_a_gpu(dask_cluster):
    _store_skill("gpu_echo", ON_GPU, gpu=True)
    _store_skill("triple", TRIPLE)
    gpu_worker = subprocess.Popen(
        [sys.executable, "-m", "flows.interfaces.cli.main", "worker", "--scheduler", dask_cluster.scheduler_address, "--resources", "GPU=1", "--name", "gpu-worker"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        from deployments.cluster import open_cluster

        client = open_cluster(get_settings()).client
        client.wait_for_workers(3, timeout=90)
        gpu_address = _worker_names(client)["gpu-worker"]
        for x in range(4):
            output = run_skill("gpu_echo", {"x": x})
            assert output.success and output.answer == x and output.worker == gpu_address
        cpu = run_skill_batch("triple", [{"x": x} for x in range(12) if x != 7])
        workers = {i.worker for i in open_store(get_settings()).all(BatchItem, {"batch_id": cpu.batch_id})}
        assert cpu.done == 11 and workers  # CPU jobs may land anywhere
    finally:
        os.killpg(gpu_worker.pid, signal.SIGTERM)
        gpu_worker.wait(timeout=30)


def test_a_batch_survives_a_worker_killed_midway_and_stores_every_result_once(dask_cluster):
    _store_skill("triple", TRIPLE)
    from deployments.cluster import open_cluster

    client = open_cluster(get_settings()).client
    victim = sorted(client.scheduler_info(n_workers=-1)["workers"])[0]
    victim_pid = client.run(os.getpid, workers=[victim])[victim]
    killed: list[int] = []

    def kill_once(stage: str, status: str, detail: str) -> None:
        if status == "progress" and not killed and int(detail.split("/")[0]) >= 40:
            os.kill(victim_pid, signal.SIGKILL)
            killed.append(victim_pid)

    params = [{"x": x} for x in range(200) if x != 7] + [{"x": 1000}]
    add_listener(kill_once)
    try:
        summary = run_skill_batch("triple", params)
    finally:
        remove_listener(kill_once)
    assert killed, "the worker was never killed"
    assert summary.size == 200 and summary.done == 200 and summary.failed == 0
    store = open_store(get_settings())
    rows = batch_answers(store, summary.batch_id)
    assert [answer for _, answer in rows] == [3 * p["x"] for p in params]
    stored = list(store.job_store().query({}, properties=["uuid"]))
    assert len(stored) == 200 and {d["uuid"] for d in stored} == {item.job_uuid for item, _ in rows}
    assert any(item.worker == victim for item, _ in rows), "the killed worker had run nothing"
    assert len({item.worker for item, _ in rows}) >= 2


def test_only_the_failed_items_of_a_batch_are_rerun(workspace):
    _store_skill("triple", TRIPLE)
    first = run_skill_batch("triple", [{"x": x} for x in range(10)], executor="local")
    assert (first.done, first.failed, first.ran) == (9, 1, 10)
    assert first.failures[0].index == 7 and "ValueError: seven is refused" in first.failures[0].error
    again = run_skill_batch(batch_id=first.batch_id, executor="local")
    assert (again.ran, again.done, again.failed) == (1, 9, 1)
    store = open_store(get_settings())
    attempts = {i.index: i.attempts for i in store.all(BatchItem, {"batch_id": first.batch_id})}
    assert attempts[7] == 2 and all(n == 1 for i, n in attempts.items() if i != 7)
    assert store.get(SkillBatch, first.batch_id).status == "partial"
    assert store.get_skill("triple").stats.uses == 11


def test_bad_batches_are_refused_before_anything_runs(workspace):
    import numpy as np

    _store_skill("count", "def run(values: list = [1]) -> int:\n    return len(values)\n")
    with pytest.raises(ParameterError, match=r"2 of 3 parameter sets are invalid; nothing ran — item 1: .*values: not JSON-serialisable.*item 2: .*values"):
        run_skill_batch("count", [{"values": [1]}, {"values": [np.zeros(2)]}, {"values": "three"}], executor="local")
    assert open_store(get_settings()).count("skill_batches") == 0
    with pytest.raises(KeyError, match="no batch 'batch-nope'"):
        run_skill_batch(batch_id="batch-nope")


def test_the_command_line_runs_shows_and_reruns_a_batch(workspace, tmp_path, capsys):
    _store_skill("triple", TRIPLE)
    params = tmp_path / "params.jsonl"
    params.write_text("\n".join(json.dumps({"x": x}) for x in (1, 7, 2)) + "\n")
    assert main(["skills", "run", "triple", "--batch", str(params), "--executor", "local", "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert (summary["done"], summary["failed"]) == (2, 1)
    assert main(["skills", "batch", summary["batch_id"], "--json"]) == 0
    items = json.loads(capsys.readouterr().out)["items"]
    assert [(i["answer"], i["status"]) for i in items] == [(3, "done"), (None, "failed"), (6, "done")]
    assert main(["skills", "run", "--retry", summary["batch_id"], "--executor", "local"]) == 1
    assert "1 run now" in capsys.readouterr().out
    assert main(["skills", "run", "triple", "--retry", summary["batch_id"]]) == 2
    assert main(["skills", "run", "triple", "--batch", str(tmp_path / "absent.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_an_exported_workflow_runs_with_plain_jobflow_and_no_llm_or_store(workspace, tmp_path, capsys):
    _store_skill("triple", TRIPLE)
    out = tmp_path / "triple_flow.json"
    assert main(["skills", "export", "triple", "--workflow", "-p", "x=5", "-o", str(out)]) == 0
    script = (
        "from jobflow import run_locally; from monty.serialization import loadfn\n"
        f"flow = loadfn({str(out)!r})\n"
        "responses = run_locally(flow, log=False)\n"
        "print([r[1].output for r in responses.values()])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVOSKILL_")}
    # No LLM configured (the openai backend without a model fails if asked) and a store that cannot be reached.
    env.update(EVOSKILL_LLM_BACKEND="openai", EVOSKILL_STORE="mongodb://127.0.0.1:1", EVOSKILL_WORKSPACE=str(tmp_path / "cluster"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[15]"
    assert (tmp_path / "cluster" / "runs").is_dir()


def test_run_skill_and_its_batches_refuse_values_outside_what_the_skill_was_verified_on(workspace):
    from flows.run_skill import run_skill_flow

    [rocksalt] = learn_starter("pymatgen_rocksalt_density_nacl")
    state = run_skill_flow(rocksalt.id, {"crystal": rocksalt_crystal("Ca", "Xx"), "a": 5.0}, "local", return_state=True)  # as the deployment runs it
    assert state.is_failed() and "'Xx' is not an element symbol" in state.message
    with pytest.raises(ParameterError, match="space group P4/mmm is tetragonal; this skill builds its lattice from a"):
        run_skill(rocksalt.id, {"crystal": {**rocksalt_crystal("K", "Cl"), "space_group": "P4/mmm"}}, executor="local")
    store = open_store(get_settings())
    assert store.job_store().count() == 0 and store.get_skill(rocksalt.id).stats.uses == 0  # nothing ran
    inside = run_skill(rocksalt.id, {"crystal": rocksalt_crystal("K", "Cl"), "a": 6.29}, executor="local")
    assert inside.success and inside.answer == rocksalt_density("K", "Cl", 6.29)
    assert inside.params == {"crystal": rocksalt_crystal("K", "Cl"), "a": 6.29}

    sets = [
        {"crystal": rocksalt_crystal("Ca", "Xx"), "a": 5.0}, {"crystal": rocksalt_crystal("K", "Br"), "a": 6.6},
        {"crystal": {**rocksalt_crystal("K", "Cl"), "space_group": "P4/mmm"}, "a": 5.0}, {"crystal": rocksalt_crystal("Li", "F")},
    ]  # fmt: skip
    summary = run_skill_batch(rocksalt.id, sets, executor="local")
    assert (summary.size, summary.ran, summary.done, summary.failed) == (4, 2, 2, 2)
    reasons = {f.index: f.error for f in summary.failures}
    assert "'Xx' is not an element symbol" in reasons[0] and "space group P4/mmm is tetragonal" in reasons[2]
    answers = [answer for _, answer in batch_answers(store, summary.batch_id)]
    assert answers == [None, rocksalt_density("K", "Br", 6.6), None, rocksalt_density("Li", "F", 5.64)]  # a left out: its default
    again = run_skill_batch(batch_id=summary.batch_id, executor="local")  # the refused items are refused again, never run
    assert (again.ran, again.done, again.failed) == (0, 2, 2)
    assert store.get_skill(rocksalt.id).stats.uses == 3
