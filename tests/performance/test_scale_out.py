"""Dispatch overhead of compiled skills through jobflow on Dask, and throughput from 1 to 2 workers.

Target: <= 20 ms of dispatch per run, for 1 000 runs of a trivial skill. Three measurements:

- ``dispatch``: a trivial pure-Python jobflow job, 1 000 times, on Dask with the results written
  to the JobStore by the caller (mongomock, and the embedded default MontyStore on SQLite), against
  calling the function directly: what jobflow, Dask and the store add per run;
- ``skill``: a trivial *skill* (its code runs in the sandbox, a fresh child process per run), as a
  batch (``run_skill_batch``) on 1 and on 2 Dask workers, against the same sandboxed runs called
  one after another in this process;
- per-run time in ``extra_info`` of each, next to pytest-benchmark's timing of the whole batch.

Run with ``.venv/bin/python -m pytest tests/performance/test_scale_out.py --benchmark-enable -s``. Under
``CI=true`` the batches are 100 runs (a single pass checks the code path, not the figures).
"""

from __future__ import annotations

import os
import time

import pytest
from jobflow import Flow, job

from deployments.cluster import close_clusters, open_cluster
from deployments.job_runners import DaskJobRunner
from deployments.settings import get_settings
from flows.run_skill import store_outcomes
from flows.run_skill_batch import run_skill_batch
from skills.documents import Skill, TestCase
from skills.params import signature_schema
from skills.runner import run_skill
from skills.store import open_store

RUNS = 100 if os.environ.get("CI") else 1000
TRIVIAL = "def run(x: int = 1) -> int:\n    return x + 1\n"
DENSITY = (
    "from pymatgen.core import Lattice, Structure\n\n\n"
    "def run(a: float = 5.64) -> float:\n"
    "    s = Structure(Lattice.cubic(a), ['Na'] * 4 + ['Cl'] * 4, [[0, 0, 0], [0, .5, .5], [.5, 0, .5], [.5, .5, 0],"
    " [.5, .5, .5], [.5, 0, 0], [0, .5, 0], [0, 0, .5]])\n"
    "    return round(s.density, 4)\n"
)


@job
def add_one(x: int) -> int:
    """The trivial job: all of its cost is dispatch."""
    return x + 1


@pytest.fixture
def on_dask(workspace, monkeypatch):
    def configure(workers: int):
        monkeypatch.setenv("EVOSKILL_DASK_WORKERS", str(workers))
        monkeypatch.setenv("EVOSKILL_SKILL_EXECUTOR", "dask")
        dask = open_cluster(get_settings())
        dask.client.wait_for_workers(workers, timeout=120)
        dask.client.run(lambda: __import__("skills.maker"))  # workers import evoskill before the clock starts
        return dask

    yield configure
    close_clusters()


@pytest.mark.parametrize("store", ["memory", "monty"])
def test_dispatch_overhead_of_a_trivial_job_on_dask(benchmark, on_dask, monkeypatch, store):
    monkeypatch.setenv("EVOSKILL_STORE", store)
    client = on_dask(1).client
    job_store = open_store(get_settings()).job_store()
    started = time.perf_counter()
    direct = [add_one.original(i) for i in range(RUNS)]
    direct_s = time.perf_counter() - started

    took: list[float] = []

    def batch() -> None:
        started = time.perf_counter()
        flow = Flow([add_one(i) for i in range(RUNS)])
        outcomes = list(DaskJobRunner(client).run(flow))
        store_outcomes(job_store, outcomes)
        took.append(time.perf_counter() - started)
        assert sorted(o.document["output"] for o in outcomes) == direct

    benchmark.pedantic(batch, rounds=1, iterations=1)
    per_run_ms = 1000 * (took[0] - direct_s) / RUNS
    benchmark.extra_info.update(runs=RUNS, store=store, dispatch_ms_per_run=round(per_run_ms, 3), direct_us_per_run=round(1e6 * direct_s / RUNS, 3))
    print(f"\ndispatch ({store} store): {RUNS} jobs, {per_run_ms:.2f} ms per run over a direct call ({1e6 * direct_s / RUNS:.2f} µs)")


@pytest.mark.parametrize("workers", [1, 2])
def test_skill_batch_throughput_on_dask(benchmark, on_dask, workers):
    on_dask(workers)
    settings = get_settings()
    skill, _ = open_store(settings).put_skill(Skill(name="add_one", code=TRIVIAL, parameters=signature_schema(TRIVIAL), test_case=TestCase(expected=2)))
    sample = min(RUNS, 50)
    started = time.perf_counter()
    for i in range(sample):
        assert run_skill(skill, {"x": i}, settings).answer == i + 1
    sandbox_ms = 1000 * (time.perf_counter() - started) / sample

    took: list[float] = []

    def batch() -> None:
        started = time.perf_counter()
        summary = run_skill_batch("add_one", [{"x": i} for i in range(RUNS)])
        took.append(time.perf_counter() - started)
        assert summary.done == RUNS and summary.failed == 0

    benchmark.pedantic(batch, rounds=1, iterations=1)
    per_run_ms = 1000 * took[0] / RUNS
    benchmark.extra_info.update(runs=RUNS, workers=workers, ms_per_run=round(per_run_ms, 2), sandbox_ms_per_run_serial=round(sandbox_ms, 2),
                                runs_per_s=round(RUNS / took[0], 1))  # fmt: skip
    print(f"\nskill batch on {workers} worker(s): {per_run_ms:.1f} ms per run ({RUNS / took[0]:.1f} runs/s); "
          f"sandboxed run called directly, one after another: {sandbox_ms:.1f} ms")  # fmt: skip


def test_warm_executor_throughput_on_dask(benchmark, on_dask, monkeypatch):
    """Batches on the 2-worker cluster with runs started cold and warm (each worker's executor), side by side: the trivial
    skill, and a pymatgen one (the starter library's rock-salt density, its structure built as that skill's code builds it);
    the batch's items and answers in the default file-backed store."""
    per_s: dict[str, dict[str, float]] = {"trivial": {}, "pymatgen": {}}
    monkeypatch.setenv("EVOSKILL_STORE", "monty")  # the caller writes each item twice to the store users have by default
    batches = {
        "trivial": (TRIVIAL, TestCase(expected=2), "x", list(range(RUNS))),
        "pymatgen": (DENSITY, TestCase(params={"a": 5.64}, expected=2.1637), "a", [5.0 + i / 1000 for i in range(min(RUNS, 200))]),
    }
    for mode in ("cold", "warm"):
        monkeypatch.setenv("EVOSKILL_SANDBOX_WARM", str(mode == "warm").lower())  # the workers' environment: a cluster per mode
        monkeypatch.setenv("EVOSKILL_STORE_DATABASE", f"batch-{mode}")  # a store of its own: neither batch finds the other's documents
        close_clusters()
        client = on_dask(2).client
        if mode == "warm":  # each worker starts its executor as it starts (WarmSandbox); wait until both are ready
            assert all(client.run(_warm_up_here).values())
        settings = get_settings()
        for label, (code, case, name, values) in batches.items():
            skill = Skill(name=f"batch_{label}", code=code, parameters=signature_schema(code), test_case=case)
            open_store(settings).put_skill(skill)
            started = time.perf_counter()
            summary = run_skill_batch(skill.name, [{name: value} for value in values])
            per_s[label][mode] = len(values) / (time.perf_counter() - started)
            assert summary.done == len(values) and summary.failed == 0

    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    for label, rates in per_s.items():
        ratio = rates["warm"] / rates["cold"]
        runs = len(batches[label][3])
        benchmark.extra_info[label] = {"runs": runs, "workers": 2, "runs_per_s": {k: round(v, 1) for k, v in rates.items()}, "warm_over_cold": round(ratio, 2)}
        print(f"\n{runs} {label} skill runs on 2 workers: cold {rates['cold']:.1f} runs/s, warm {rates['warm']:.1f} runs/s ({ratio:.1f}x)")


def _warm_up_here() -> bool:
    """On a worker: its warm executor for the worker's settings, started and ready."""
    from deployments.sandbox.execute import SandboxLimits, warm_up

    return warm_up(SandboxLimits.from_settings(get_settings()))
