"""Cluster specs chosen by settings: an unreachable scheduler, the fallback, Slurm/PBS job scripts, the task runner."""

import sys
import time

import pytest
from prefect.task_runners import ThreadPoolTaskRunner

import deployments.cluster as cluster_module
from deployments.cluster import (
    ClusterUnavailable,
    close_clusters,
    jobqueue_cluster,
    open_cluster,
)
from deployments.net import free_port
from deployments.settings import Settings
from deployments.task_runners import task_runner
from tests.planted import plant


def test_an_unreachable_scheduler_is_a_clear_error(workspace):
    address = f"tcp://127.0.0.1:{free_port()}"
    started = time.perf_counter()
    with pytest.raises(ClusterUnavailable, match=f"could not reach the Dask scheduler at {address} within 2 s.*dask scheduler"):
        open_cluster(Settings(dask_cluster="address", dask_address=address, dask_connect_timeout_s=2))
    assert time.perf_counter() - started < 30


def test_the_fallback_to_a_local_cluster_happens_only_when_configured(workspace):
    settings = Settings(dask_cluster="address", dask_address=f"tcp://127.0.0.1:{free_port()}", dask_connect_timeout_s=1,
                        dask_fallback_local=True, dask_workers=1)  # fmt: skip
    try:
        dask = open_cluster(settings)
        assert dask.kind == "local" and dask.client.submit(sum, [1, 2]).result() == 3
        assert open_cluster(settings) is dask  # opened once per process
    finally:
        close_clusters()


def _import_origins() -> list[str]:
    """In a worker: where its multiprocessing and Dask came from."""
    import sys

    return [str(sys.modules[name].__file__) for name in ("multiprocessing", "distributed")]


def test_local_workers_do_not_import_from_the_users_folder(workspace, tmp_path, monkeypatch):
    """Multiprocessing starts each worker as ``python -c ...`` with this process's flags, which puts the current folder first
    on its path: a ``multiprocessing/`` folder there would run in every worker."""
    here = tmp_path / "here"
    marker = plant(here, "multiprocessing", "distributed", "spglib")
    monkeypatch.chdir(here)
    settings = Settings(dask_workers=1)
    try:
        dask = open_cluster(settings)
        origins = dask.client.submit(_import_origins).result(timeout=120)
    finally:
        close_clusters()
        assert not marker.exists(), marker.read_text()
    assert all(origin.startswith(sys.prefix) or origin.startswith(sys.base_prefix) for origin in origins), origins


def test_an_address_setting_without_an_address_is_refused():
    with pytest.raises(ValueError, match="EVOSKILL_DASK_ADDRESS"):
        Settings(dask_cluster="address")


@pytest.mark.parametrize("kind, directive", [("slurm", "#SBATCH -p gpu"), ("pbs", "#PBS -q gpu")])
def test_hpc_job_scripts_carry_the_queue_and_the_worker_resources(kind, directive):
    settings = Settings(dask_cluster=kind, dask_worker_resources={"GPU": 1}, dask_threads_per_worker=4,
                        dask_jobqueue={"queue": "gpu", "memory": "16GiB", "walltime": "01:00:00"})  # fmt: skip
    cluster = jobqueue_cluster(settings)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    assert directive in script and "--resources GPU=1" in script and "--nthreads 4" in script


@pytest.mark.parametrize(
    ("directives", "gres"),
    [([], True), (["--partition=gpu-short"], True), (["--gres=gpu:a100:1"], False), (["--gpus-per-node=1"], False)],
)
def test_a_slurm_worker_that_advertises_a_gpu_asks_for_one_unless_its_directives_already_do(directives, gres):
    settings = Settings(dask_cluster="slurm", dask_worker_resources={"GPU": 1}, dask_jobqueue={"job_extra_directives": directives})
    cluster = jobqueue_cluster(settings)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    assert ("#SBATCH --gres=gpu:1" in script) is gres and all(f"#SBATCH {d}" in script for d in directives)


def test_debug_branches_use_threads_unless_a_cluster_is_configured():
    assert isinstance(task_runner(Settings()), ThreadPoolTaskRunner)
    assert not Settings(dask_cluster="local").uses_dask_runner()
    assert Settings(dask_cluster="slurm").uses_dask_runner() and Settings(task_runner="dask").uses_dask_runner()
    assert not Settings(dask_cluster="slurm", task_runner="threads").uses_dask_runner()


def test_a_batch_system_that_does_not_answer_whether_it_takes_a_worker_job_closes_the_cluster_and_says_so(monkeypatch):
    closed: list[bool] = []

    class Silent:  # a controller that never answers: sbatch hangs
        submit_command = "sh -c 'sleep 5' sbatch"

    class Cluster:
        job_cls = Silent

        def job_script(self) -> str:
            return "#!/bin/sh\n"

        def close(self) -> None:
            closed.append(True)

    monkeypatch.setattr(cluster_module, "SUBMIT_TEST_TIMEOUT_S", 0.5)
    monkeypatch.setattr(cluster_module.shutil, "which", lambda name: "/usr/bin/" + name)
    with pytest.raises(ClusterUnavailable, match=r"did not answer within 0.5 s"):
        cluster_module._check_submittable(Cluster(), "slurm")  # type: ignore[arg-type]
    assert closed == [True]
