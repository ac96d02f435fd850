"""Debug branches on a Dask cluster (prefect-dask's DaskTaskRunner) when one is configured."""

import json
from pathlib import Path

from flows.solve import solve
from tests.codes import N2_ANSWER, N2_CODE, N2_QUERY, N2_TYPO, WRONG_ANSWER


def code(stage, source, **extra):
    return {"stage": stage, "content": {"packages": ["ase"], "code": source}, **extra}


def test_debug_branches_run_on_dask_workers_and_their_llm_calls_come_back(scripted, monkeypatch):
    for name, value in {"TRIAGE_LLM": "false", "LEARN": "false", "DASK_CLUSTER": "local", "DASK_WORKERS": "3", "TASK_RUNNER": "dask"}.items():
        monkeypatch.setenv(f"EVOSKILL_{name}", value)
    scripted([code("research", N2_TYPO), code("debug:diagnostic", WRONG_ANSWER), code("debug:introspection", N2_CODE), code("debug:research", N2_CODE)])
    from deployments.cluster import close_clusters, open_cluster
    from deployments.settings import get_settings

    try:
        result = solve(N2_QUERY)
        client = open_cluster(get_settings()).client
        ran = client.run(lambda dask_worker: dask_worker.state.executed_count)
    finally:
        close_clusters()
    assert sum(ran.values()) >= 3, f"the debug branches did not run on the Dask workers: {ran}"
    trajectory = json.loads(Path(result.trajectory_path).read_text())
    assert [b["strategy"] for b in trajectory["debug"]] == ["diagnostic", "introspection", "research"]
    assert result.success and result.answer == N2_ANSWER
    assert trajectory["answer"]["agreeing_sources"] == ["debug:introspection", "debug:research"]
    assert result.llm_calls == 4  # research + one per branch, the branches' calls brought back from the workers
