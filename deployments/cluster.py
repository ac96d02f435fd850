"""The Dask cluster the settings name, opened once per process and shared.

``EVOSKILL_DASK_CLUSTER`` chooses it:

- ``local`` (default): an embedded ``LocalCluster`` of ``dask_workers`` processes that
  advertise ``dask_worker_resources`` (detected: ``GPU`` count, ``MEMORY`` bytes);
- ``address``: a running scheduler at ``dask_address`` (``dask scheduler``, with workers from
  ``evoskill worker --resources GPU=1``); unreachable means a clear error, or the embedded
  cluster when ``dask_fallback_local`` is set;
- ``slurm`` / ``pbs``: dask-jobqueue submits ``dask_workers`` batch jobs, each one worker, with
  the options in ``dask_jobqueue`` (queue, account, cores, memory, walltime, ...).

>>> from deployments.settings import Settings
>>> dask = open_cluster(Settings(dask_workers=1))        # doctest: +SKIP
>>> dask.client.submit(sum, [1, 2]).result()             # doctest: +SKIP
3
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from distributed import Client, LocalCluster, WorkerPlugin
from distributed.deploy import Cluster

from deployments.interpreter import safe_path_for_children
from deployments.resources import format_resources, worker_memory, worker_resources
from deployments.sandbox.execute import SandboxLimits, warm_up_meanwhile
from deployments.settings import Settings, get_settings

if TYPE_CHECKING:
    from dask_jobqueue import JobQueueCluster

__all__ = ["ClusterUnavailable", "DaskCluster", "open_cluster", "close_clusters", "jobqueue_cluster"]

log = logging.getLogger(__name__)


class ClusterUnavailable(RuntimeError):
    """The configured Dask scheduler cannot be reached or started."""


@dataclass
class DaskCluster:
    """A connected client, and the cluster when evoskill started it (``None`` for an external scheduler)."""

    client: Client
    cluster: Cluster | None
    kind: str

    @property
    def address(self) -> str:
        return self.client.scheduler.address  # type: ignore[union-attr,return-value]  # distributed types the scheduler rpc and its address as optional

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


SUBMIT_TEST_TIMEOUT_S = 60.0  # how long `sbatch --test-only` may take to say whether it would take a worker job

_OPEN: dict[tuple[Any, ...], DaskCluster] = {}
_LOCK = threading.Lock()


def _worker_env() -> dict[str, str]:
    """What local worker processes must inherit to report to the same Prefect API."""
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    return {"PREFECT_API_URL": url} if url else {}


def _local(settings: Settings) -> DaskCluster:
    logging.getLogger("distributed").setLevel(logging.WARNING)  # worker joins and leaves are not news
    safe_path_for_children()  # the workers are spawned interpreters: not importing from the user's folder
    per_worker = worker_memory(settings.dask_worker_memory, settings.dask_workers)
    cluster = LocalCluster(
        n_workers=settings.dask_workers, threads_per_worker=settings.dask_threads_per_worker, processes=True,
        memory_limit=per_worker, resources=worker_resources(settings, per_worker), dashboard_address=None,
        env=_worker_env(),
    )  # fmt: skip
    return DaskCluster(Client(cluster), cluster, "local")


def _local_slurm(settings: Settings) -> type | None:
    """Where the workspace's one-node Slurm cluster (``evoskill slurm start``) runs and no ``SLURM_CONF`` of the user's own
    is set: a Slurm job class whose ``sbatch`` and ``scancel`` are pointed at it (this process's environment is left as it is)."""
    from dask_jobqueue.slurm import SLURMJob

    from deployments.slurm import LocalSlurm

    local = LocalSlurm.for_workspace(settings.workspace)
    if os.environ.get("SLURM_CONF", str(local.conf)) != str(local.conf) or not local.running():
        return None
    pointed = " ".join(f"{name}={shlex.quote(value)}" for name, value in local.env().items())
    return type("LocalSlurmJob", (SLURMJob,), {"submit_command": f"env {pointed} sbatch", "cancel_command": f"env {pointed} scancel"})


def jobqueue_cluster(settings: Settings) -> JobQueueCluster:
    """A dask-jobqueue Slurm or PBS cluster (not yet scaled); its workers advertise the configured resources, and a
    Slurm worker that advertises GPUs asks for them (``--gres=gpu:N``)."""
    from dask_jobqueue import PBSCluster, SLURMCluster

    options: dict[str, Any] = {"cores": settings.dask_threads_per_worker, "processes": 1, "memory": "4GiB", **settings.dask_jobqueue}
    if settings.dask_worker_resources:  # never detected: the submitting node is not the compute node
        options["worker_extra_args"] = [*options.get("worker_extra_args", []), "--resources", format_resources(settings.dask_worker_resources)]
    if settings.dask_cluster == "slurm":
        gpus = int((settings.dask_worker_resources or {}).get("GPU", 0))
        directives = list(options.get("job_extra_directives", []))
        if gpus and not any(re.search(r"--gres\b|--gpus|--gpus-per-\w+|^-G\b", d) for d in directives):
            options["job_extra_directives"] = [*directives, f"--gres=gpu:{gpus}"]
        if (local_job := _local_slurm(settings)) is not None:  # one node on loopback: the workers reach the scheduler there
            options["job_cls"] = local_job
            options.setdefault("scheduler_options", {"host": "127.0.0.1"})
            options.setdefault("log_directory", str(settings.workspace.resolve() / "slurm" / "workers"))
    cls = SLURMCluster if settings.dask_cluster == "slurm" else PBSCluster
    return cls(**options)


def _check_submittable(cluster: JobQueueCluster, kind: str) -> None:
    """Ask the batch system whether it would take a worker job (``sbatch --test-only``); a refusal is a clear error, not
    a cluster that waits for workers that never come."""
    if kind != "slurm" or shutil.which("sbatch") is None:
        return
    submit = shlex.split(getattr(cluster.job_cls, "submit_command", None) or "sbatch")
    with tempfile.NamedTemporaryFile("w", suffix=".sh") as script:
        script.write(cluster.job_script())
        script.flush()
        try:
            done = subprocess.run([*submit, "--test-only", script.name], capture_output=True, text=True, timeout=SUBMIT_TEST_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            cluster.close()
            raise ClusterUnavailable(f"Slurm did not answer within {SUBMIT_TEST_TIMEOUT_S:g} s whether it would take a worker job; is slurmctld running?") from None
    if done.returncode != 0:
        cluster.close()
        said = " ".join((done.stderr or done.stdout).split())
        raise ClusterUnavailable(f"Slurm refuses the worker job ({said}); check EVOSKILL_DASK_JOBQUEUE and EVOSKILL_DASK_WORKER_RESOURCES")


def _connect(settings: Settings) -> DaskCluster:
    if settings.dask_cluster == "local":
        return _local(settings)
    if settings.dask_cluster in ("slurm", "pbs"):
        cluster = jobqueue_cluster(settings)
        _check_submittable(cluster, settings.dask_cluster)
        cluster.scale(jobs=settings.dask_workers)
        return DaskCluster(Client(cluster), cluster, settings.dask_cluster)
    try:
        return DaskCluster(Client(settings.dask_address, timeout=settings.dask_connect_timeout_s), None, "address")
    except (OSError, TimeoutError) as exc:
        problem = (
            f"could not reach the Dask scheduler at {settings.dask_address} within {settings.dask_connect_timeout_s:g} s "
            f"({type(exc).__name__}); start one with `dask scheduler` and workers with `evoskill worker`, or set "
            "EVOSKILL_DASK_CLUSTER=local"
        )
        if not settings.dask_fallback_local:
            raise ClusterUnavailable(problem) from exc
        log.warning("%s; falling back to an embedded LocalCluster (EVOSKILL_DASK_FALLBACK_LOCAL)", problem)
        return _local(settings)


class WarmSandbox(WorkerPlugin):
    """Starts each worker's warm sandbox executor as the worker starts, in the background, so its first skill runs start warm too."""

    name = "evoskill-warm-sandbox"

    def setup(self, worker: Any) -> None:
        settings = get_settings()  # the worker's own settings (its environment)
        if settings.sandbox_warm:
            warm_up_meanwhile(SandboxLimits.from_settings(settings))


def _opened(dask: DaskCluster) -> DaskCluster:
    dask.client.register_plugin(WarmSandbox())
    return dask


def open_cluster(settings: Settings) -> DaskCluster:
    """The process's Dask cluster for these settings (connected once, reconnected if it went away); its workers start warm executors."""
    key = (settings.dask_cluster, settings.dask_address, settings.dask_workers, settings.dask_threads_per_worker,
           settings.dask_worker_memory, str(settings.dask_worker_resources), str(settings.dask_jobqueue))  # fmt: skip
    with _LOCK:
        found = _OPEN.get(key)
        if found is not None and found.client.status == "running":
            return found
        _OPEN[key] = _opened(_connect(settings))
        return _OPEN[key]


@atexit.register
def close_clusters() -> None:
    """Close every cluster this process opened."""
    with _LOCK:
        for dask in _OPEN.values():
            try:
                dask.close()
            except Exception:  # noqa: BLE001 - closing at exit must not raise
                pass
        _OPEN.clear()
