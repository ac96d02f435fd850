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


def _skill(name: str, code: str = DOUBLE, gpu: bool = False, gpu_preferred: bool = False) -> Skill:
    resources = {"gpu": gpu, "gpu_preferred": gpu_preferred}
    return Skill(name=name, code=code, parameters=signature_schema(code), resources=resources, test_case=TestCase(params={"x": 1.0}, expected=2.0))


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


def test_a_job_that_prefers_a_gpu_runs_on_the_cpu_where_no_worker_has_one_and_on_the_gpu_worker_where_one_does(dask_cluster):
    from distributed import Nanny

    maker = SkillMaker.from_skill(_skill("potential", gpu_preferred=True))
    made = maker.make(x=2.0)
    assert made.config.manager_config["resources"] == {"GPU": 1} and made.config.manager_config["gpu_optional"] is True
    messages: list[str] = []
    client = job_runner(get_settings(), "dask").client
    runner = DaskJobRunner(client, resource_wait_s=30, on_status=messages.append)
    (outcome,) = runner.run(made)
    assert outcome.ok and outcome.document["output"] == 4.0
    assert messages == ["1 job(s) prefer a GPU, and none of the 2 workers advertises one: they run on the CPU"]
    nanny = client.sync(Nanny, dask_cluster.scheduler_address, nthreads=1, resources={"GPU": 1}, name="gpu-worker")
    try:
        client.wait_for_workers(3, timeout=60)
        on_gpu = [o.worker for o in DaskJobRunner(client).run(Flow([maker.make(x=float(x)) for x in range(4)]))]
        assert on_gpu == [nanny.worker_address] * 4
    finally:
        client.sync(nanny.close)
    needs = SkillMaker.from_skill(_skill("needs", gpu=True, gpu_preferred=True)).make(x=1.0)
    assert needs.config.manager_config["gpu_optional"] is False  # a skill that needs a GPU never falls back


def test_a_gpu_optional_job_waits_for_the_first_workers_of_a_cluster_still_starting_before_it_chooses_the_cpu(workspace):
    import subprocess
    import sys

    from distributed import Client, LocalCluster

    log = workspace.parent / "worker.log"
    with LocalCluster(n_workers=0, processes=True, dashboard_address=None) as cluster, Client(cluster) as client, open(log, "wb") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address, "--nthreads", "1", "--resources", "GPU=1",
             "--name", "gpu-worker", "--no-dashboard"], stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            messages: list[str] = []
            (outcome,) = DaskJobRunner(client, resource_wait_s=120, on_status=messages.append).run(
                SkillMaker.from_skill(_skill("potential", gpu_preferred=True)).make(x=2.0)
            )
            why = f"{outcome.error} {messages}; the worker printed:\n{log.read_text(errors='replace')[-3000:]}"
            assert outcome.ok and outcome.document["output"] == 4.0 and messages == [], why  # it waited, found the GPU, ran there
            assert outcome.worker == next(iter(client.scheduler_info(n_workers=-1)["workers"]))
        finally:
            worker.terminate()
            worker.wait(timeout=30)


def test_a_job_on_a_cluster_with_no_worker_at_all_fails_after_the_wait_with_what_to_do():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster, Client(cluster) as client:
        messages: list[str] = []
        (outcome,) = DaskJobRunner(client, resource_wait_s=1.5, on_status=messages.append).run(SkillMaker.from_skill(_skill("double")).make(x=1.0))
    assert not outcome.ok
    assert outcome.error == "no worker joined within 1.5 s; start one with `evoskill worker`"
    assert messages == ["1 job(s) waiting for a worker: the cluster has no worker yet (start one with `evoskill worker`); giving up after 1.5 s"]


def test_a_skill_that_runs_a_machine_learned_potential_prefers_a_gpu():
    from skills.gpu import prefers_gpu

    assert prefers_gpu("from atomate2.forcefields.jobs import ForceFieldRelaxMaker\nForceFieldRelaxMaker(force_field_name='CHGNet')")
    assert prefers_gpu("from chgnet.model import CHGNet\n") and prefers_gpu("import numpy as np, torch\n")
    assert prefers_gpu("ForceFieldRelaxMaker(force_field_name=MLFF.CHGNet)")
    assert not prefers_gpu("from ase.calculators.emt import EMT\nprint('torch and chgnet are words here')\n")


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
