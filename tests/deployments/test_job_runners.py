"""jobflow jobs on Dask and in-process: references between jobs, resources no worker has, the runner choice."""

from jobflow import Flow, job

from deployments.job_runners import (
    DaskJobRunner,
    LocalJobRunner,
    job_runner,
    missing_resources,
)
from deployments.settings import get_settings
from skills.documents import Skill, TestCase
from skills.maker import SkillMaker
from skills.params import signature_schema

DOUBLE = "def run(x: float = 1.0) -> float:\n    return 2 * x\n"


def _skill(name: str, code: str = DOUBLE, gpu: bool = False) -> Skill:
    return Skill(name=name, code=code, parameters=signature_schema(code), resources={"gpu": gpu}, test_case=TestCase(params={"x": 1.0}, expected=2.0))


def _chain() -> tuple[Flow, str]:
    """x=3 → doubled → doubled again (the second job reads the first one's output)."""
    maker = SkillMaker.from_skill(_skill("double"))
    first = maker.make(x=3.0)
    second = maker.make(x=first.output)
    return Flow([first, second]), second.uuid


def test_a_job_reading_another_jobs_output_runs_in_order_on_dask_and_locally(dask_cluster):
    for runner in (job_runner(get_settings(), "dask"), LocalJobRunner()):
        flow, last = _chain()
        outcomes = {o.uuid: o for o in runner.run(flow)}
        assert all(o.ok for o in outcomes.values()), outcomes
        assert outcomes[last].document["output"] == 12.0
    assert isinstance(job_runner(get_settings(), "dask"), DaskJobRunner)


def test_a_job_after_a_failed_one_is_not_run(workspace):
    maker = SkillMaker.from_skill(_skill("fails", "def run(x: float = 1.0) -> float:\n    raise ValueError('no')\n"))
    first = maker.make(x=1.0)
    second = SkillMaker.from_skill(_skill("double")).make(x=first.output)
    outcomes = list(LocalJobRunner().run(Flow([first, second])))
    assert [o.ok for o in outcomes] == [False, False]
    assert "ValueError: no" in outcomes[0].error and outcomes[1].error.startswith("not run: the jobs it needs failed")


def test_a_gpu_job_waits_for_a_gpu_worker_then_fails_with_what_to_do(dask_cluster):
    messages: list[str] = []
    runner = DaskJobRunner(job_runner(get_settings(), "dask").client, resource_wait_s=1.5, on_status=messages.append)
    (outcome,) = runner.run(SkillMaker.from_skill(_skill("needs_gpu", gpu=True)).make(x=1.0))
    assert not outcome.ok
    assert outcome.error == "no worker with GPU=1 joined within 1.5 s; start one with `evoskill worker --resources GPU=1`"
    assert messages and "waiting for a worker with GPU=1: none of the 2 workers has it" in messages[0]


@job(data=["ionic_steps"])
def _with_data_objects() -> dict:
    """Like an atomate2 force-field job: its ionic steps go to the JobStore's "data" store."""
    return {"energy": -1.0, "ionic_steps": [{"energy": -0.5}, {"energy": -1.0}]}


def test_a_job_with_data_objects_gets_them_back_in_its_document():
    (outcome,) = LocalJobRunner().run(_with_data_objects())
    assert outcome.ok, outcome.error
    assert outcome.document["output"]["ionic_steps"] == [{"energy": -0.5}, {"energy": -1.0}]


def test_missing_resources_names_what_no_single_worker_has():
    workers = [{"resources": {"GPU": 1}}, {"resources": {"MEMORY": 8e9}}]
    assert missing_resources(workers, {"GPU": 1}) == {}
    assert missing_resources(workers, {"GPU": 2}) == {"GPU": 2}
    assert missing_resources(workers, {"GPU": 1, "MEMORY": 1e9}) == {"GPU": 1, "MEMORY": 1e9}
