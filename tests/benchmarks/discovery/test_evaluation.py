"""Oracle evaluation: cached by structure, and batches relaxed in parallel locally or on Dask."""

from distributed import Client

from benchmarks.discovery.evaluation import Evaluator, OracleCache, episode_evaluator
from benchmarks.discovery.generators import PROTOTYPES
from benchmarks.discovery.oracles import make_oracle
from tests.planted import plant

CELLS = [PROTOTYPES[0].build({"A": "Cu", "B": "Ni"}), PROTOTYPES[1].build({"A": "Pt", "B": "Cu"})]


def test_cache_answers_a_repeated_structure_without_relaxing_it():
    evaluator, oracle = Evaluator(), make_oracle("emt")
    first = evaluator.evaluate(oracle, CELLS)
    again = evaluator.evaluate(oracle, [CELLS[1], CELLS[0]])
    assert [cached for _, cached in first] == [False, False] and [cached for _, cached in again] == [True, True]
    assert again[0][0] == first[1][0] and evaluator.evaluated == 2 and evaluator.hits == 2


def test_batch_is_relaxed_on_a_local_process_pool():
    with episode_evaluator(OracleCache(), batch_size=2, on_dask=False) as evaluator:
        results = evaluator.evaluate(make_oracle("emt"), CELLS)
        assert evaluator._pool is not None  # the pool, not this process, relaxed them
    assert all(result.ok for result, _ in results)
    serial = Evaluator().evaluate(make_oracle("emt"), CELLS)
    assert [r.model_dump(exclude={"wall_s"}) for r, _ in results] == [r.model_dump(exclude={"wall_s"}) for r, _ in serial]  # same as serial
    assert evaluator._pool is None  # closed with the episode


def test_the_local_pool_does_not_import_from_the_users_folder(tmp_path, monkeypatch):
    """The pool's processes start as ``python -c ...`` with this process's flags, which puts the current folder first on
    their path: a ``multiprocessing/`` folder there would run in each of them."""
    here = tmp_path / "here"
    marker = plant(here, "multiprocessing", "ase", "pymatgen")
    monkeypatch.chdir(here)
    try:
        with episode_evaluator(OracleCache(), batch_size=2, on_dask=False) as evaluator:
            results = evaluator.evaluate(make_oracle("emt"), CELLS)
    finally:
        assert not marker.exists(), marker.read_text()
    assert all(result.ok for result, _ in results)


def _batch_inside_a_dask_task() -> tuple[list[bool], bool]:
    with episode_evaluator(OracleCache(), batch_size=2, on_dask=True) as evaluator:
        results = evaluator.evaluate(make_oracle("emt"), CELLS)
        used_cluster = evaluator.client is not None
    return [r.ok for r, _ in results], used_cluster


def test_batch_inside_a_dask_task_goes_to_the_cluster(dask_cluster):
    # Two one-thread workers: the episode task secedes while its two relaxations run, so nothing deadlocks.
    with Client(dask_cluster) as client:
        ok, used_cluster = client.submit(_batch_inside_a_dask_task).result(timeout=120)
    assert ok == [True, True] and used_cluster
