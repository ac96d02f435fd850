"""Run the jobs of a jobflow ``Flow`` in this process or on Dask, one outcome per finished job.

``job_runner(settings, executor)`` picks one. ``LocalJobRunner`` runs the jobs here, one after
another. ``DaskJobRunner`` makes each job one Dask task, with the resources its job declares.
Jobs go to the scheduler in dependency order, an upstream job's future passed to the jobs
that reference it, so Dask decides where and when each runs. A worker runs a job against a
throwaway in-memory ``JobStore`` holding the upstream outputs it needs, and sends the
finished job document back; the caller writes it to the real ``JobStore`` once. Workers so
need no access to the store (compute nodes often cannot reach it), and a job rerun after
its worker died is still stored once. A job's resources come from
``job.config.manager_config["resources"]`` (``{"GPU": 1}``); a job whose resources no worker
has waits, with a status line, up to ``resource_wait_s``, then fails with the reason, unless
``manager_config["gpu_optional"]`` says it runs on the CPU too (a machine-learned potential):
then, where no worker advertises a GPU when it is submitted, it goes to any worker, with a status line.
On a cluster with no worker at all, every job waits so, and fails the same way: never forever.

>>> runner = job_runner(settings, "dask")                       # doctest: +SKIP
>>> for outcome in runner.run(flow):                           # doctest: +SKIP
...     print(outcome.ok, outcome.document["output"] if outcome.ok else outcome.error)
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any, Literal, Protocol

from distributed import Client, Future, as_completed, get_worker
from jobflow import Flow, Job, JobStore
from maggma.stores import MemoryStore
from pydantic import BaseModel

from deployments.resources import format_resources
from deployments.settings import Settings

__all__ = [
    "JobOutcome", "JobRunner", "LocalJobRunner", "DaskJobRunner", "job_runner", "execute_job", "job_resources", "missing_resources", "prefer_gpu", "GPU_OPTIONAL",
]  # fmt: skip

GPU_OPTIONAL = "gpu_optional"  # manager_config key: the job asks for a GPU and runs on the CPU where no worker has one

_POLL_S, _RESOURCE_CHECK_S, _STATUS_EVERY_S, _JOIN_GRACE_S = 0.01, 1.0, 30.0, 3.0


class JobOutcome(BaseModel):
    """One finished job: its JobStore document (when it succeeded), or why not."""

    uuid: str
    index: int = 1
    name: str = ""
    ok: bool = False
    document: dict[str, Any] | None = None
    error: str | None = None
    worker: str | None = None
    wall_s: float = 0.0


def prefer_gpu(job: Job) -> Job:
    """Annotate ``job`` to ask for a GPU worker and run on the CPU where none is there (a machine-learned potential)."""
    job.config.manager_config = {**(job.config.manager_config or {}), "resources": {"GPU": 1}, GPU_OPTIONAL: True}
    return job


def job_resources(job: Job) -> dict[str, float]:
    """The Dask resources a job asks for (``manager_config["resources"]``)."""
    return dict((job.config.manager_config or {}).get("resources", {}))


def _placed(job: Job, workers: list[dict[str, Any]]) -> dict[str, float]:
    """What the job is submitted with: its resources, or none for a GPU-optional job that no worker's GPU could take."""
    wanted = job_resources(job)
    if (job.config.manager_config or {}).get(GPU_OPTIONAL) and missing_resources(workers, wanted):
        return {k: v for k, v in wanted.items() if k != "GPU"}
    return wanted


def _worker_address() -> str | None:
    try:
        return get_worker().address
    except ValueError:
        return None


def execute_job(job: Job, upstream: list[JobOutcome]) -> JobOutcome:
    """Run one job on this worker, its references resolved from the upstream outcomes."""
    started = time.perf_counter()
    outcome = JobOutcome(uuid=job.uuid, index=job.index, name=job.name, worker=_worker_address())
    failed = [u.name or u.uuid for u in upstream if not u.ok]
    if failed:
        outcome.error = f"not run: the jobs it needs failed ({', '.join(failed)})"
        return outcome
    store = JobStore(MemoryStore(), additional_stores={"data": MemoryStore()})  # atomate2 jobs put trajectories and ionic steps in "data"
    store.connect()
    for previous in upstream:
        store.update(previous.document, key=["uuid", "index"])  # type: ignore[arg-type]  # all upstream are ok: each has its document
    try:
        response = job.run(store)
        if response.replace is not None or response.addition is not None or response.detour is not None:
            raise RuntimeError("the job returned new jobs (replace/addition/detour); run this flow with executor 'local'")
        document = store.query_one({"uuid": job.uuid, "index": job.index}, load=True)
    except Exception as exc:  # noqa: BLE001 - the job's failure is its outcome
        outcome.error = f"{type(exc).__name__}: {exc}"
    else:
        outcome.ok, outcome.document = True, {k: v for k, v in document.items() if k != "_id"}
    outcome.wall_s = time.perf_counter() - started
    return outcome


def _workers(client: Client) -> list[dict[str, Any]]:
    return list(client.scheduler_info(n_workers=-1)["workers"].values())


def missing_resources(workers: list[dict[str, Any]], wanted: dict[str, float]) -> dict[str, float]:
    """What ``wanted`` asks for that no single worker has enough of (empty when some worker fits)."""
    if not wanted or any(all(w.get("resources", {}).get(k, 0) >= v for k, v in wanted.items()) for w in workers):
        return {}
    return {k: v for k, v in wanted.items() if all(w.get("resources", {}).get(k, 0) < v for w in workers)} or dict(wanted)


def _in_order(flow: Flow | Job) -> Iterator[tuple[Job, list[str]]]:
    """Jobs with the uuids of the jobs they need, parents first."""
    with warnings.catch_warnings():  # independent jobs (a batch) are "not connected": their order does not matter
        warnings.filterwarnings("ignore", "Some jobs are not connected")
        ordered = list((Flow([flow]) if isinstance(flow, Job) else flow).iterflow())
    yield from ordered


def _option(need: str) -> str:
    return f" --resources {need}" if need else ""


def _waiting(jobs: int, need: str, workers: int, wait_s: float) -> str:
    """The status line of jobs no worker can take yet: which resources (``need``, "" for any worker), and what to do."""
    if not need:
        what = "the cluster has no worker yet"
    else:
        what = f"none of the {workers} workers has it"
    return (
        f"{jobs} job(s) waiting for a worker{' with ' + need if need else ''}: {what} "
        f"(start one with `evoskill worker{_option(need)}`); giving up after {wait_s:g} s"
    )


class JobRunner(Protocol):
    def run(self, flow: Flow | Job) -> Iterator[JobOutcome]: ...


class LocalJobRunner:
    """Runs the jobs in this process, parents first (a job's own code still runs in the sandbox)."""

    def run(self, flow: Flow | Job) -> Iterator[JobOutcome]:
        outcomes: dict[str, JobOutcome] = {}
        for job, parents in _in_order(flow):
            outcomes[job.uuid] = execute_job(job, [outcomes[p] for p in parents if p in outcomes])
            yield outcomes[job.uuid]


class DaskJobRunner:
    """Submits the jobs of a jobflow ``Flow`` (or one ``Job``) to a Dask cluster and yields their outcomes."""

    def __init__(self, client: Client, resource_wait_s: float = 600.0, on_status: Callable[[str], None] | None = None):
        self.client = client
        self.resource_wait_s = resource_wait_s
        self.on_status = on_status or (lambda message: None)
        self.placed: dict[Future, dict[str, float]] = {}  # what each submitted job asked the scheduler for
        self.gave_up: dict[Future, str] = {}  # jobs cancelled after waiting, with the resources they waited for ("" any worker)

    def submit(self, flow: Flow | Job) -> dict[Future, Job]:
        """Submit every job, parents first; each future waits on its parents' futures."""
        futures: dict[str, Future] = {}
        submitted: dict[Future, Job] = {}
        ordered = list(_in_order(flow))
        workers = _workers(self.client)
        if not workers and any((job.config.manager_config or {}).get(GPU_OPTIONAL) for job, _ in ordered):
            workers = self._first_workers()  # a batch system's workers are still starting: decide where they are
        on_cpu = 0
        for job, parents in ordered:
            upstream = [futures[p] for p in parents if p in futures]
            resources = _placed(job, workers)
            on_cpu += resources != job_resources(job)
            future = self.client.submit(execute_job, job, upstream, key=f"{job.name}-{job.uuid}-{job.index}", pure=False, resources=resources or None)
            futures[job.uuid] = future
            submitted[future] = job
            self.placed[future] = resources
        if on_cpu:
            self.on_status(f"{on_cpu} job(s) prefer a GPU, and none of the {len(workers)} workers advertises one: they run on the CPU")
        return submitted

    def _first_workers(self) -> list[dict[str, Any]]:
        """The workers once the first has joined (up to ``resource_wait_s``), and those that join within a few seconds more:
        a GPU-optional job goes to the CPU only where none of them has a GPU (a GPU worker joining later takes none)."""
        try:
            self.client.wait_for_workers(1, timeout=self.resource_wait_s)
        except TimeoutError:
            return []
        time.sleep(_JOIN_GRACE_S)
        return _workers(self.client)

    def run(self, flow: Flow | Job) -> Iterator[JobOutcome]:
        """Outcomes in the order the jobs finish; a job that cannot be placed fails after ``resource_wait_s``."""
        submitted = self.submit(flow)
        finished = as_completed(list(submitted), with_results=False)
        waiting_since: dict[str, float] = {}
        last_check = last_status = 0.0
        remaining = set(submitted)
        while remaining:
            for future in finished.next_batch(block=False):
                if future.status == "lost":  # its result died with its worker: Dask computes it again, and it comes back here
                    finished.add(future)
                    continue
                remaining.discard(future)
                yield self._outcome(future, submitted[future])
            now = time.monotonic()
            if remaining and now - last_check >= _RESOURCE_CHECK_S:
                last_check = now
                last_status = self._watch_resources(remaining, submitted, waiting_since, now, last_status)
            time.sleep(_POLL_S)

    def _watch_resources(self, remaining: set[Future], submitted: dict[Future, Job], since: dict[str, float], now: float, last_status: float) -> float:
        """Report jobs no worker can take; cancel them once they waited ``resource_wait_s``."""
        workers = _workers(self.client)
        unplaceable: dict[str, list[Future]] = {}
        for future in remaining:
            lacking = missing_resources(workers, self.placed.get(future, job_resources(submitted[future])))
            if lacking or not workers:  # no worker at all: a job with no resource needs waits too, never forever
                unplaceable.setdefault(format_resources(lacking, ","), []).append(future)
        for need in set(since) - set(unplaceable):
            del since[need]  # a worker that fits joined: a later shortage waits afresh
        for need, futures in unplaceable.items():
            started = since.setdefault(need, now)
            if now - started >= self.resource_wait_s:
                for future in futures:
                    self.gave_up[future] = need
                    future.cancel()
            elif now - last_status >= _STATUS_EVERY_S or started == now:
                self.on_status(_waiting(len(futures), need, len(workers), self.resource_wait_s))
                last_status = now
        return last_status

    def _outcome(self, future: Future, job: Job) -> JobOutcome:
        if future.status == "finished":
            return future.result()
        if future.status == "cancelled":
            need = self.gave_up.get(future, format_resources(job_resources(job), ","))
            with_need = f" with {need}" if need else ""
            error = f"no worker{with_need} joined within {self.resource_wait_s:g} s; start one with `evoskill worker{_option(need)}`"
        else:
            exc = future.exception()
            error = f"{type(exc).__name__}: {exc}"  # KilledWorker: its workers died too often running it
        return JobOutcome(uuid=job.uuid, index=job.index, name=job.name, error=error)


def job_runner(settings: Settings, executor: Literal["local", "dask"] | None = None, on_status: Callable[[str], None] | None = None) -> JobRunner:
    """The runner for ``executor`` (default ``settings.skill_executor``); Dask means the configured cluster."""
    if (executor or settings.skill_executor) == "local":
        return LocalJobRunner()
    from deployments.cluster import open_cluster

    return DaskJobRunner(open_cluster(settings).client, settings.dask_resource_wait_s, on_status)
