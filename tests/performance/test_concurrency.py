"""Load on one embedded store: 50 concurrent solves (scripted LLM) and 2 000 concurrent skill runs.

Both write to one file-backed MontyStore at once. Each checks that every result is stored exactly
once and that no document is corrupt, and reports latency percentiles in ``extra_info``:

- ``solves``: 50 solve requests submitted at once, answered by a pool of ``SOLVERS`` threads (the bound the chat
  takes from ``EVOSKILL_MAX_CONCURRENT_SOLVES``), each flow answering, learning and writing its run record, trajectory and
  memories; all compile the same skill, which must be stored once. Latency counts the wait in the queue.
  (Unbounded, the SQLite-backed Prefect API answers 503 once some tens of flows write at once: a
  Prefect server on PostgreSQL is the one for more.)
- ``skill runs``: 20 batches of 100 runs of one skill submitted together to a Dask LocalCluster,
  every run in its own sandbox; each run's answer once in the JobStore, every use counted.

Run with ``.venv/bin/python -m pytest tests/performance/test_concurrency.py --benchmark-enable -s``. Under
``CI=true`` it is 10 solves and 4 batches of 50 runs.
"""

from __future__ import annotations

import contextvars
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from deployments.cluster import close_clusters, open_cluster
from deployments.settings import get_settings
from flows.run_skill_batch import run_skill_batch
from flows.solve import solve
from skills.documents import BatchItem, MemoryUnit, RunRecord, Skill, SkillBatch
from skills.store import open_cache, open_store
from tasks.tools.docs_search import search
from tests.codes import ADD, add_two_skill

CI = bool(os.environ.get("CI"))
SOLVES = 10 if CI else 50
SOLVERS = 8
BATCHES, PER_BATCH = (4, 50) if CI else (20, 100)


def percentiles(values: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50_s": round(cuts[49], 3), "p95_s": round(cuts[94], 3), "max_s": round(max(values), 3)}


def _in_threads(calls: list, workers: int) -> list[tuple[float, object]]:
    """Submit the calls all at once to ``workers`` threads, each in a copy of this context (the Prefect API).

    Returns (latency from submission, result) of each.
    """

    def timed(call, submitted):
        value = call()
        return time.perf_counter() - submitted, value

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(contextvars.copy_context().run, timed, call, time.perf_counter()) for call in calls]
        return [f.result() for f in futures]


@pytest.fixture
def monty(workspace, monkeypatch):
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    return open_store(get_settings())


def test_concurrent_solves_store_each_result_once(benchmark, scripted, monty, monkeypatch):
    monkeypatch.setenv("EVOSKILL_USE_MEMORY", "false")  # every solve writes and learns: no skill path in between
    scripted([
        {"stage": "triage", "content": {"conflict": "", "question": ""}},
        {"stage": "research", "content": {"code": "import json\nprint(json.dumps(2 + 2))\n"}},
        {"stage": "compile", "content": {"name": "add two integers", "description": "The sum of two integers.", "code": ADD}},
    ])  # fmt: skip
    queries = [f"What is 2 + 2? Return an integer. (request {i})" for i in range(SOLVES)]
    search("warm-up", get_settings(), open_cache(get_settings()), k=1)  # the offline search index is built once per cache, not timed here
    timed = benchmark.pedantic(lambda: _in_threads([lambda q=q: solve(q) for q in queries], SOLVERS), rounds=1, iterations=1)

    results = [r for _, r in timed]
    assert all(r.success and r.answer == 4 for r in results), [r.error for r in results if not r.success]
    assert len({r.flow_run_id for r in results}) == SOLVES
    runs = monty.all(RunRecord)
    assert sorted(r.query for r in runs) == sorted(queries)  # each solve's record once
    assert [s.id for s in monty.all(Skill, {"name": "add_two_integers"})] == ["add_two_integers-v1"]  # one skill, not one per solve
    assert sum(r.learned for r in results) == 1 and all(r.skill_id == "add_two_integers-v1" for r in results)
    memories = monty.all(MemoryUnit)
    assert len(memories) == 2 * SOLVES and len({m.id for m in memories}) == 2 * SOLVES
    assert all(os.path.exists(r.trajectory_path) for r in results)
    assert monty.check() == []  # no corrupt document
    latency = percentiles([t for t, _ in timed])
    benchmark.extra_info.update(solves=SOLVES, solvers=SOLVERS, **latency, solves_per_s=round(SOLVES / max(t for t, _ in timed), 2))
    print(f"\n{SOLVES} concurrent solves on {SOLVERS} solver threads: {latency}, {SOLVES / max(t for t, _ in timed):.2f} solves/s")


def test_concurrent_skill_runs_store_each_answer_once(benchmark, monty, monkeypatch):
    skill, _ = monty.put_skill(add_two_skill())
    workers = max(2, min(8, os.cpu_count() or 2))
    monkeypatch.setenv("EVOSKILL_DASK_WORKERS", str(workers))
    monkeypatch.setenv("EVOSKILL_SKILL_EXECUTOR", "dask")
    dask = open_cluster(get_settings())
    try:
        dask.client.wait_for_workers(workers, timeout=120)
        dask.client.run(lambda: __import__("skills.maker"))  # workers import evoskill before the clock starts
        calls = [lambda b=b: run_skill_batch(skill.id, [{"a": b, "b": i} for i in range(PER_BATCH)]) for b in range(BATCHES)]
        timed = benchmark.pedantic(lambda: _in_threads(calls, BATCHES), rounds=1, iterations=1)
    finally:
        close_clusters()

    summaries = [s for _, s in timed]
    assert all(s.done == PER_BATCH and s.failed == 0 for s in summaries)
    total = BATCHES * PER_BATCH
    items = monty.all(BatchItem)
    assert len(items) == total and len({(i.batch_id, i.index) for i in items}) == total
    by_batch = {s.batch_id: b for b, s in enumerate(summaries)}
    assert len(monty.all(SkillBatch)) == BATCHES
    outputs = list(monty.job_store().query({}, properties=["uuid", "output"], load=True))
    assert len(outputs) == total and len({o["uuid"] for o in outputs}) == total  # each answer once
    answer_of = {o["uuid"]: o["output"] for o in outputs}
    assert all(answer_of[i.job_uuid] == by_batch[i.batch_id] + i.index for i in items)
    assert monty.get_skill(skill.id).stats.uses == total  # no use lost to a concurrent update
    assert monty.check() == []  # no corrupt document
    run_latency = percentiles([i.wall_s for i in items])
    batch_latency = percentiles([t for t, _ in timed])
    wall = max(t for t, _ in timed)
    benchmark.extra_info.update(runs=total, workers=workers, run=run_latency, batch=batch_latency, runs_per_s=round(total / wall, 1))
    print(f"\n{total} concurrent skill runs on {workers} workers: per run {run_latency}, per batch {batch_latency}, {total / wall:.1f} runs/s")
