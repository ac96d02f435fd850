"""A run's Prefect state tells the truth: a solve or skill run without an answer ends Failed with the reason as its
message, a stage that failed its job is a Failed task run, and retries still only retry transient LLM errors."""

import asyncio
import time

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, FlowRunFilterParentTaskRunId

from deployments.settings import get_settings
from flows.run_skill import run_skill
from flows.run_skill_batch import run_skill_batch
from flows.solve import solve
from skills.documents import Skill, TestCase
from skills.params import signature_schema
from skills.store import open_store
from tests.codes import CRASH, N2_ANSWER, N2_CODE, N2_QUERY, N2_TYPO

TRIPLE = "def run(x: int = 2) -> int:\n    if x == 7:\n        raise ValueError('seven is refused')\n    return 3 * x\n"


@pytest.fixture(autouse=True)
def deep_path_only(workspace, monkeypatch):
    monkeypatch.setenv("EVOSKILL_TRIAGE_LLM", "false")
    monkeypatch.setenv("EVOSKILL_LEARN", "false")


def code(stage, source):
    return {"stage": stage, "content": {"packages": ["ase"], "code": source}}


def _read(flow_run_id: str, expected_task_runs: int) -> tuple:
    """The flow run, its task runs by name, and its subflow runs (task runs are recorded from events: waited for)."""

    async def read():
        async with get_client() as client:
            for _ in range(120):
                flow_run = await client.read_flow_run(flow_run_id)
                runs = await client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run.id])))
                if len(runs) >= expected_task_runs and all(r.state and r.state.is_final() for r in runs):
                    break
                await asyncio.sleep(0.25)
            subflows = await client.read_flow_runs(
                flow_run_filter=FlowRunFilter(parent_task_run_id=FlowRunFilterParentTaskRunId(any_=[r.id for r in runs]))
            )
            return flow_run, {r.name: r for r in runs}, subflows

    return asyncio.run(read())


def test_a_solve_without_an_answer_is_failed_with_its_reason_and_so_are_its_failed_stages(scripted, monkeypatch):
    monkeypatch.setenv("EVOSKILL_DEBUG_MAX_ATTEMPTS", "1")
    scripted([code("research", CRASH)] + [code(f"debug:{s}", "print('no json')\n") for s in ("diagnostic", "introspection", "research")])
    result = solve(N2_QUERY)
    assert not result.success and result.flow_run_id
    flow_run, tasks, (deep,) = _read(result.flow_run_id, expected_task_runs=3)
    assert flow_run.state.is_failed() and flow_run.state.message.startswith("no answer: ")
    assert "not a JSON answer" in flow_run.state.message
    assert deep.state.is_failed() and deep.state.message.startswith("no answer: ")
    _, stages, _ = _read(str(deep.id), expected_task_runs=6)
    assert stages["research"].state.is_completed()  # it wrote a script: its job
    for name in ("code-agent", "debug-diagnostic", "debug-introspection", "debug-research", "output-processor"):
        assert stages[name].state.is_failed(), (name, stages[name].state)
        assert stages[name].run_count == 1, f"{name} failed its job: not a transient error, so not retried"
    assert "ValueError: scripted failure" in stages["code-agent"].state.message
    assert tasks["recall"].state.is_completed()


def test_an_answered_solve_is_completed_while_the_first_try_that_failed_is_not(scripted):
    scripted([code("research", N2_TYPO)] + [code(f"debug:{s}", N2_CODE) for s in ("diagnostic", "introspection", "research")])
    result = solve(N2_QUERY)
    assert result.success and result.answer == N2_ANSWER
    flow_run, _, (deep,) = _read(result.flow_run_id, expected_task_runs=2)
    assert flow_run.state.is_completed() and deep.state.is_completed()
    _, stages, _ = _read(str(deep.id), expected_task_runs=6)
    assert stages["code-agent"].state.is_failed()
    assert all(stages[n].state.is_completed() for n in ("research", "debug-diagnostic", "debug-introspection", "debug-research", "output-processor"))


def test_a_transient_llm_error_is_still_retried(scripted):
    scripted([{"stage": "research", "error": "transient"}, code("research", N2_CODE)])
    result = solve(N2_QUERY)
    assert result.success
    _, _, (deep,) = _read(result.flow_run_id, expected_task_runs=2)
    _, stages, _ = _read(str(deep.id), expected_task_runs=3)
    assert stages["research"].state.is_completed() and stages["research"].run_count == 2


def _triple() -> Skill:
    code = TRIPLE
    return open_store(get_settings()).put_skill(Skill(name="triple", code=code, parameters=signature_schema(code), test_case=TestCase(params={}, expected=6)))[0]


def _flow_run_of(name_prefix: str):
    async def read():
        async with get_client() as client:
            runs = await client.read_flow_runs(sort="START_TIME_DESC", limit=20)
            return next(r for r in runs if r.name.startswith(name_prefix))

    return asyncio.run(read())


def test_a_skill_run_without_an_answer_is_failed_and_its_job_is_a_task_run_with_its_parameters():
    skill = _triple()
    output = run_skill(skill.id, {"x": 7}, executor="local")
    assert not output.success and "seven is refused" in output.error
    flow_run = _flow_run_of(f"run-skill: {skill.id}")
    assert flow_run.state.is_failed() and "seven is refused" in flow_run.state.message
    _, jobs, _ = _read(str(flow_run.id), expected_task_runs=1)
    assert list(jobs) == [f"{skill.id}(x=7)"] and jobs[f"{skill.id}(x=7)"].state.is_failed()

    assert run_skill(skill.id, {"x": 5}, executor="local").answer == 15
    ok_run = _flow_run_of(f"run-skill: {skill.id}")
    assert ok_run.id != flow_run.id and ok_run.state.is_completed()
    _, jobs, _ = _read(str(ok_run.id), expected_task_runs=1)
    assert jobs[f"{skill.id}(x=5)"].state.is_completed()


def test_a_batch_with_failed_items_is_failed_naming_them_and_shows_each_job(monkeypatch):
    skill = _triple()
    summary = run_skill_batch(skill.id, [{"x": x} for x in (1, 7, 3)], executor="local")
    assert (summary.done, summary.failed) == (2, 1)
    flow_run = _flow_run_of(f"run-skill-batch: {skill.id}")
    assert flow_run.state.is_failed() and "1 of 3 items failed (items 1)" in flow_run.state.message
    assert summary.batch_id in flow_run.state.message
    _, jobs, _ = _read(str(flow_run.id), expected_task_runs=3)
    assert {name: run.state.is_completed() for name, run in jobs.items()} == {
        f"{skill.id}[0](x=1)": True, f"{skill.id}[1](x=7)": False, f"{skill.id}[2](x=3)": True,
    }  # fmt: skip


def test_a_large_batch_shows_its_jobs_in_at_most_the_configured_number_of_task_runs(monkeypatch):
    monkeypatch.setenv("EVOSKILL_BATCH_TASK_RUNS", "2")
    skill = _triple()
    started = time.time()
    summary = run_skill_batch(skill.id, [{"x": x} for x in range(5)], executor="local")
    assert summary.done == 5 and time.time() > started
    flow_run = _flow_run_of(f"run-skill-batch: {skill.id}")
    assert flow_run.state.is_completed()
    _, jobs, _ = _read(str(flow_run.id), expected_task_runs=2)
    assert sorted(jobs) == [f"{skill.id} items 0, 1, 2", f"{skill.id} items 3, 4"]
