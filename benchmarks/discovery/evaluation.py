"""Evaluating many structures with an oracle: cached by structure hash, in parallel where asked.

An ``Evaluator`` maps an oracle over structures serially, on a local process pool (``workers`` > 1),
or on a Dask cluster (``client``), where each evaluation is the oracle's atomate2 job (``oracle_job``)
submitted through ``deployments.job_runners.DaskJobRunner``, like a compiled skill's jobs; results
already in the cache are not recomputed.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pymatgen.core import Structure

from benchmarks.discovery.matching import structure_hash
from benchmarks.discovery.oracles import Oracle, OracleResult, oracle_job, oracle_result
from deployments.interpreter import safe_path_for_children
from skills.documents import OracleRecord

if TYPE_CHECKING:
    from skills.store import SkillStore

__all__ = ["OracleCache", "Evaluator", "evaluate_one", "episode_evaluator"]


def evaluate_one(oracle: Oracle, structure: dict[str, Any]) -> OracleResult:
    """Worker entry point: structures travel as dicts."""
    return oracle.evaluate(Structure.from_dict(structure))


class OracleCache:
    """Oracle results by structure hash, in memory and (optionally) in a maggma store shared by campaigns."""

    def __init__(self, store: SkillStore | None = None):
        self._memory: dict[str, OracleResult] = {}
        self._store = store

    def key(self, oracle: Oracle, structure: Structure) -> str:
        return structure_hash(structure, salt=f"{oracle.name}:{oracle.fmax}:{oracle.max_steps}")

    def get(self, key: str) -> OracleResult | None:
        if key in self._memory:
            return self._memory[key]
        if self._store is not None:
            record = self._store.get(OracleRecord, key)
            if record is not None:
                self._memory[key] = OracleResult.model_validate(record.result)
                return self._memory[key]
        return None

    def put(self, key: str, oracle: Oracle, result: OracleResult) -> None:
        self._memory[key] = result
        if self._store is not None:
            self._store.put(OracleRecord(id=key, oracle=oracle.name, result=result.model_dump(mode="json")), reindex=False)

    def __len__(self) -> int:
        return len(self._memory)


@dataclass
class Evaluator:
    """Runs an oracle over structures: serially, on ``workers`` local processes, or on Dask (``client``)."""

    workers: int = 1
    client: Any = None
    cache: OracleCache = field(default_factory=OracleCache)
    hits: int = 0
    evaluated: int = 0
    _pool: ProcessPoolExecutor | None = field(default=None, repr=False)

    def evaluate(self, oracle: Oracle, structures: list[Structure]) -> list[tuple[OracleResult, bool]]:
        """``(result, from_cache)`` for each structure, in order."""
        keys = [self.cache.key(oracle, s) for s in structures]
        found = {k: r for k in set(keys) if (r := self.cache.get(k)) is not None}
        todo = {k: s for k, s in zip(keys, structures, strict=True) if k not in found}
        fresh = dict(zip(todo, self._map(oracle, list(todo.values())), strict=True))
        for key, result in fresh.items():
            self.cache.put(key, oracle, result)
        self.hits += len(structures) - len(todo)
        self.evaluated += len(todo)
        return [(found.get(k) or fresh[k], k in found) for k in keys]

    def _map(self, oracle: Oracle, structures: list[Structure]) -> list[OracleResult]:
        payload = [s.as_dict() for s in structures]
        if self.client is not None and len(payload) > 1:
            return self._on_dask(oracle, structures)
        if self.workers > 1 and len(payload) > 1:
            if self._pool is None:
                # spawn: the parent may run Prefect's threads, which fork would copy mid-lock; not from the user's folder
                safe_path_for_children()
                self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))
            return list(self._pool.map(evaluate_one, [oracle] * len(payload), payload))
        return [evaluate_one(oracle, p) for p in payload]

    def _on_dask(self, oracle: Oracle, structures: list[Structure]) -> list[OracleResult]:
        """One atomate2 job per structure, run by the Dask job runner; results in the structures' order."""
        from jobflow import Flow, Job

        from deployments.job_runners import DaskJobRunner

        jobs: list[Flow | Job] = [oracle_job(oracle, s) for s in structures]
        outcomes = {o.uuid: o for o in DaskJobRunner(self.client).run(Flow(jobs))}
        return [oracle_result(outcomes[j.uuid].document, outcomes[j.uuid].error, outcomes[j.uuid].wall_s) for j in jobs]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


@contextmanager
def episode_evaluator(cache: OracleCache, batch_size: int, on_dask: bool) -> Iterator[Evaluator]:
    """The evaluator for one episode: serial for one proposal a step; for batches, a local process pool
    of ``batch_size``, or, inside a Dask task, the cluster itself (the task's thread secedes while it waits).
    """
    if batch_size == 1:
        yield Evaluator(cache=cache)
    elif on_dask:
        from distributed import worker_client

        with worker_client() as client:
            yield Evaluator(cache=cache, client=client)
    else:
        evaluator = Evaluator(cache=cache, workers=batch_size)
        try:
            yield evaluator
        finally:
            evaluator.close()
