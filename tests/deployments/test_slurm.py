"""The one-node Slurm cluster, for real: daemons started and stopped, skill batches on dask-jobqueue worker jobs,
a worker job cancelled mid-batch, and GPU requests a node without a GPU refuses.

Where Slurm cannot run (not installed, not root), these tests are skipped with the reason; the rest of the suite
does not need it."""

import asyncio
import os
import subprocess
import time
from pathlib import Path

import pytest
from prefect import get_client
from prefect.client.schemas.filters import FlowFilter, FlowFilterName, FlowRunFilter, FlowRunFilterId
from prefect.client.schemas.sorting import FlowRunSort

from deployments.cluster import ClusterUnavailable, close_clusters, open_cluster
from deployments.progress import add_listener, remove_listener
from deployments.resources import detect_gpus
from deployments.settings import get_settings
from deployments.slurm import LocalSlurm, SlurmUnavailable
from flows.interfaces.cli.main import main
from flows.run_skill_batch import batch_answers, run_skill_batch
from skills.documents import BatchItem, Skill, TestCase
from skills.params import signature_schema
from skills.store import open_store

_WHY = LocalSlurm(Path("/nonexistent")).unavailable()
needs_slurm = pytest.mark.skipif(_WHY is not None, reason=f"Slurm cannot run here: {_WHY}")

TRIPLE = "def run(x: int = 2) -> int:\n    if x == 7:\n        raise ValueError('seven is refused')\n    return 3 * x\n"
SLOW = "import time\ndef run(x: int = 1) -> int:\n    time.sleep(0.4)\n    return 2 * x\n"


@pytest.fixture
def slurm(workspace: Path, monkeypatch: pytest.MonkeyPatch):
    if _WHY is not None:
        pytest.skip(f"Slurm cannot run here: {_WHY}")
    """The workspace's one-node Slurm cluster, running; batches go to it (``EVOSKILL_DASK_CLUSTER=slurm``)."""
    monkeypatch.delenv("SLURM_CONF", raising=False)
    cluster = LocalSlurm.for_workspace(workspace)
    cluster.start()
    monkeypatch.setenv("EVOSKILL_DASK_CLUSTER", "slurm")
    monkeypatch.setenv("EVOSKILL_SKILL_EXECUTOR", "dask")
    monkeypatch.setenv("EVOSKILL_DASK_WORKERS", "2")
    monkeypatch.setenv("EVOSKILL_DASK_JOBQUEUE", '{"memory": "2GiB", "walltime": "00:10:00"}')
    yield cluster
    close_clusters()
    cluster.stop()


def _store_skill(name: str, code: str, gpu: bool = False) -> Skill:
    skill = Skill(name=name, code=code, parameters=signature_schema(code), resources={"gpu": gpu}, test_case=TestCase(params={}, expected=None))
    return open_store(get_settings()).put_skill(skill)[0]


def _wait_for(check, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False


def _batch_task_runs(expected: int) -> tuple[str, dict[str, str]]:
    """The newest run-skill-batch flow run's name and its task runs' states by name (recorded from events: waited for)."""

    async def read():
        async with get_client() as client:
            for _ in range(120):
                (flow_run,) = await client.read_flow_runs(
                    flow_filter=FlowFilter(name=FlowFilterName(any_=["run-skill-batch"])), sort=FlowRunSort.START_TIME_DESC, limit=1
                )
                runs = await client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run.id])))
                if len(runs) >= expected and all(r.state and r.state.is_final() for r in runs):
                    break
                await asyncio.sleep(0.25)
            return flow_run.name, {r.name: r.state.type.value for r in runs if r.state}

    return asyncio.run(read())


def test_the_cluster_starts_runs_a_job_reports_it_and_stops(slurm, capsys):
    assert slurm.running() and slurm.node_state() == "idle"
    text = slurm.conf.read_text()
    assert "127.0.0.1" in text and str(slurm.folder) in text and "0.0.0.0" not in text
    submitted = subprocess.run(
        ["sbatch", "--parsable", "--job-name", "hello", "--wrap", "echo hi"], env={**os.environ, **slurm.env()},
        capture_output=True, text=True, check=True, cwd=slurm.folder,
    )  # fmt: skip
    job_id = submitted.stdout.strip().split(";")[0]
    assert _wait_for(lambda: any(j.job_id == job_id and j.state == "COMPLETED" for j in slurm.finished()))
    assert main(["slurm", "status"]) == 0
    out = capsys.readouterr().out
    assert "node" in out and f"{job_id}  hello  COMPLETED" in out
    assert main(["status"]) == 0
    assert "this workspace's Slurm cluster: node" in capsys.readouterr().out
    slurm.stop()
    assert not slurm.running() and not slurm.munge_socket.exists()
    assert main(["slurm", "status"]) == 1
    assert "not running" in capsys.readouterr().out
    with slurm.conf.open("a") as conf:
        conf.write("# the user's own line\n")
    slurm.start()  # started again on the same state: the job numbers go on, and an edited configuration is kept
    assert slurm.node_state() == "idle" and slurm.conf.read_text().endswith("# the user's own line\n")


def test_a_skill_batch_runs_on_slurm_worker_jobs(slurm):
    _store_skill("triple", TRIPLE)
    params = [{"x": x} for x in range(20)]
    summary = run_skill_batch("triple", params)
    assert (summary.size, summary.done, summary.failed) == (20, 19, 1)
    assert "seven is refused" in summary.failures[0].error
    rows = batch_answers(open_store(get_settings()), summary.batch_id)
    assert [answer for item, answer in rows if item.status == "done"] == [3 * p["x"] for p in params if p["x"] != 7]
    jobs = {job.job_id: job for job in slurm.queue()}
    assert len(jobs) == 2 and {j.name for j in jobs.values()} == {"dask-worker"} and {j.state for j in jobs.values()} == {"RUNNING"}
    assert "SLURM_CONF" not in os.environ  # only the submitting commands are pointed at the workspace's cluster
    workers = open_cluster(get_settings()).client.scheduler_info(n_workers=-1)["workers"]
    assert {item.worker for item, _ in rows} <= set(workers)
    name, task_runs = _batch_task_runs(expected=20)  # what the Prefect UI shows of the batch: a task run per item
    assert name == "run-skill-batch: triple" and len(task_runs) == 20
    assert task_runs["triple-v1[7](x=7)"] == "FAILED" and sum(state == "COMPLETED" for state in task_runs.values()) == 19
    close_clusters()  # the worker jobs end with the cluster
    assert _wait_for(lambda: set(jobs) <= {j.job_id for j in slurm.finished()} and not slurm.queue())


def test_a_worker_job_cancelled_midway_loses_no_item_and_a_rerun_by_batch_id_finishes_it(slurm):
    _store_skill("slow_double", SLOW)
    client = open_cluster(get_settings()).client
    client.wait_for_workers(2, timeout=120)
    victim = slurm.queue()[0].job_id
    cancelled: list[str] = []

    def cancel_once(stage: str, status: str, detail: str) -> None:
        if status == "progress" and not cancelled and int(detail.split("/")[0]) >= 4:
            slurm.cancel(victim)
            cancelled.append(victim)

    add_listener(cancel_once)
    try:
        summary = run_skill_batch("slow_double", [{"x": x} for x in range(24)])
    finally:
        remove_listener(cancel_once)
    assert cancelled, "the worker job was never cancelled"
    assert _wait_for(lambda: any(j.job_id == victim and j.state == "CANCELLED" for j in slurm.finished()))
    store = open_store(get_settings())
    if summary.failed:  # Dask gave up on an item its dying worker held: the rerun by batch id runs only those
        again = run_skill_batch(batch_id=summary.batch_id)
        assert again.ran == summary.failed
    items = store.all(BatchItem, {"batch_id": summary.batch_id})
    assert sorted(i.index for i in items if i.status == "done") == list(range(24))
    assert [answer for _, answer in batch_answers(store, summary.batch_id)] == [2 * x for x in range(24)]
    assert len({i.job_uuid for i in items}) == 24 and store.job_store().count() == 24  # each stored once


@needs_slurm
@pytest.mark.skipif(detect_gpus() > 0, reason="this node has a GPU: Slurm would grant it")
def test_a_worker_job_that_asks_for_a_gpu_is_refused_where_the_node_has_none(slurm, monkeypatch):
    monkeypatch.setenv("EVOSKILL_DASK_WORKER_RESOURCES", '{"GPU": 1}')
    with pytest.raises(ClusterUnavailable, match=r"Slurm refuses the worker job \(.*gres.*\)"):
        open_cluster(get_settings())
    assert not slurm.queue()


def test_a_gpu_skill_waits_for_a_gpu_worker_and_fails_with_the_reason_instead_of_running_on_cpu(slurm, monkeypatch):
    monkeypatch.setenv("EVOSKILL_DASK_RESOURCE_WAIT_S", "3")
    _store_skill("on_gpu", "def run(x: int = 1) -> int:\n    return x\n", gpu=True)
    summary = run_skill_batch("on_gpu", [{"x": 1}, {"x": 2}])
    assert summary.done == 0 and summary.failed == 2
    assert all("no worker with GPU=1" in failure.error for failure in summary.failures)


def test_start_says_why_it_cannot_run_without_root_or_slurm(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr("deployments.slurm.missing_programs", lambda: [])
    with pytest.raises(SlurmUnavailable, match="runs its daemons as root"):
        LocalSlurm(tmp_path / "slurm").start()
    monkeypatch.undo()
    monkeypatch.setattr("deployments.slurm.shutil.which", lambda name, path=None: None)
    assert "apt-get install slurm-wlm munge" in (LocalSlurm(tmp_path).unavailable() or "")


def test_a_pid_file_naming_another_program_is_not_a_daemon_and_stop_leaves_that_program_alone(tmp_path):
    other = subprocess.Popen(["sleep", "60"])
    try:
        cluster = LocalSlurm(tmp_path / "slurm")
        cluster.folder.mkdir()
        for name in ("munged", "slurmctld", "slurmd"):
            (cluster.folder / f"{name}.pid").write_text(str(other.pid))  # left by a crash, the pid since reused
        assert not cluster.running()
        cluster.stop()
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_the_node_offers_the_gpus_it_has_by_their_device_files(tmp_path, monkeypatch):
    monkeypatch.setattr("deployments.slurm._gpu_devices", lambda: ["/dev/nvidia2", "/dev/nvidia3"])
    cluster = LocalSlurm(tmp_path / "slurm")
    cluster._write()
    assert "GresTypes=gpu" in cluster.conf.read_text() and " Gres=gpu:2" in cluster.conf.read_text()
    assert (cluster.folder / "gres.conf").read_text() == "Name=gpu File=/dev/nvidia2\nName=gpu File=/dev/nvidia3\n"
    monkeypatch.setattr("deployments.slurm._gpu_devices", lambda: [])
    cluster._write()
    assert "Gres" not in cluster.conf.read_text() and (cluster.folder / "gres.conf").read_text() == ""
    assert len(str(LocalSlurm(tmp_path / ("x" * 120)).munge_socket)) <= 108  # a long workspace: the socket in /run
    assert str(LocalSlurm(tmp_path / ("x" * 120)).munge_socket).startswith("/run/")
