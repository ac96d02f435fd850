"""Oracle throughput for discovery: EMT relaxations per second, serially and on 2 local processes.

The same 24 random Cu-Ni-Pt cells (4–6 atoms, fixed seed) are relaxed with a fresh cache each
round: serially in this process, then on a 2-process pool (``Evaluator(workers=2)``) and on a
2-worker Dask LocalCluster; evaluations per second go to ``extra_info``. Under ``CI=true`` 6 cells.

Run with ``.venv/bin/python -m pytest tests/performance/test_discovery_oracle.py --benchmark-enable -s``.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from distributed import Client

from benchmarks.discovery.evaluation import Evaluator
from benchmarks.discovery.generators import RandomGenerator
from benchmarks.discovery.oracles import make_oracle
from benchmarks.discovery.system import ChemicalSystem

CELLS = 6 if os.environ.get("CI") else 24


def _cells():
    system = ChemicalSystem.parse("Cu-Ni-Pt", max_atoms=6)
    rng = np.random.default_rng(0)
    options = [c for c in system.compositions() if sum(c.values()) >= 4]
    out = []
    while len(out) < CELLS:
        out.extend(RandomGenerator(per_call=1).generate(options[int(rng.integers(len(options)))], system, [], rng))
    return out


@pytest.mark.parametrize("mode", ["serial", "processes", "dask"])
def test_oracle_evaluations_per_second(benchmark, mode, request):
    oracle, cells = make_oracle("emt"), _cells()
    client = Client(request.getfixturevalue("dask_cluster")) if mode == "dask" else None
    evaluators: list[Evaluator] = []
    elapsed: list[float] = []

    def relax_all():
        evaluator = Evaluator(workers=2 if mode == "processes" else 1, client=client)  # fresh cache: nothing reused
        evaluators.append(evaluator)
        started = time.perf_counter()
        results = evaluator.evaluate(oracle, cells)
        elapsed.append(time.perf_counter() - started)
        return results

    if mode == "processes":  # start the pool's processes outside the timing
        warm = Evaluator(workers=2)
        warm.evaluate(oracle, cells[:2])
        warm.close()
    results = benchmark.pedantic(relax_all, rounds=1, iterations=1)
    for evaluator in evaluators:
        evaluator.close()
    if client is not None:
        client.close()
    assert len(results) == CELLS and all(result.ok for result, _ in results)
    assert not any(cached for _, cached in results)
    seconds = float(np.mean(elapsed))
    benchmark.extra_info.update(cells=CELLS, evaluations_per_s=CELLS / seconds, mean_steps=float(np.mean([r.steps for r, _ in results])))
    print(f"\n{mode}: {CELLS / seconds:.2f} EMT relaxations/s ({seconds:.1f} s for {CELLS})")
