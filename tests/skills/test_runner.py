"""Skills run in the sandbox: missing packages and values outside what a skill was verified on are reported before
running; jobs carry resources."""

import json
import os
import stat

import pytest

from deployments.job_runners import LocalJobRunner
from deployments.settings import get_settings
from skills import runner
from skills.documents import Skill, SkillResources, TestCase
from skills.maker import SkillMaker
from skills.params import ParameterError
from skills.runner import run_skill
from tests.skills.test_binding import ROCKSALT, rocksalt
from tests.starter import rocksalt_density


def test_a_skill_whose_packages_are_missing_is_reported_not_run(workspace):
    skill = Skill(name="needs_it", code="import not_installed_pkg_xyz\ndef run() -> int:\n    return 1\n",
                  packages=["not_installed_pkg_xyz"], test_case=TestCase(expected=1))
    execution = run_skill(skill, {}, get_settings())
    assert not execution.ok and execution.exit_code is None
    assert "not installed: not_installed_pkg_xyz" in execution.error


def test_the_skill_module_main_block_stays_quiet(workspace):
    code = "import json\ndef run(x: int = 2) -> int:\n    return x * 3\nif __name__ == '__main__':\n    print(json.dumps(-1))\n"
    execution = run_skill(Skill(name="triple", code=code, test_case=TestCase(params={"x": 2}, expected=6)), {"x": 5}, get_settings())
    assert execution.ok and execution.answer == 15 and execution.stdout.strip() == "15"


def test_gpu_skills_are_annotated_for_the_scheduler():
    skill = Skill(name="mlip", code="def run() -> int:\n    return 1\n", resources={"gpu": True}, test_case=TestCase(expected=1))
    job = SkillMaker.from_skill(skill).make()
    assert job.name == "mlip-v1" and job.config.manager_config["resources"] == {"GPU": 1}
    cpu_only = SkillMaker.from_skill(skill.model_copy(update={"resources": SkillResources(gpu=False)})).make()
    assert cpu_only.config.manager_config["resources"] == {}


def test_a_run_past_the_declared_wall_time_is_stopped_with_a_clear_error(workspace):
    code = "import time\ndef run(seconds: float = 0.0) -> float:\n    time.sleep(seconds)\n    return seconds\n"
    skill = Skill(name="sleeper", code=code, resources=SkillResources(walltime_s=2), test_case=TestCase(params={"seconds": 0.0}, expected=0.0))
    execution = run_skill(skill, {"seconds": 60.0}, get_settings())
    assert not execution.ok and execution.timed_out and execution.wall_s < 30
    assert execution.error.startswith("ran past its declared wall time of 2 s")
    assert run_skill(skill, {"seconds": 0.1}, get_settings()).answer == 0.1


def test_values_outside_the_skills_domain_are_refused_before_anything_runs_here_and_in_a_job(workspace, monkeypatch):
    ran: list[dict] = []
    real = runner.run_skill_code

    def recorded(code, packages, params, *args, **kw):
        ran.append(params)
        return real(code, packages, params, *args, **kw)

    monkeypatch.setattr(runner, "run_skill_code", recorded)
    with pytest.raises(ParameterError, match="crystal: 'Xx' is not an element symbol"):  # OutsideDomain: a ParameterError to every door
        run_skill(ROCKSALT, {"crystal": rocksalt("K", "Xx"), "a": 5.0}, get_settings())
    with pytest.raises(ParameterError, match="space group P2/m is not cubic"):  # a lattice the skill cannot build from a alone
        run_skill(ROCKSALT, {"crystal": {**rocksalt("K", "Cl"), "space_group": "P2/m"}}, get_settings())
    assert ran == []  # refused, not run
    inside = run_skill(ROCKSALT, {"crystal": rocksalt("K", "Cl"), "a": 6.29}, get_settings())
    assert inside.ok and inside.answer == rocksalt_density("K", "Cl", 6.29)

    # A jobflow job (run-skill, batches, exported workflows) checks the parameters as given before it computes.
    maker = SkillMaker.from_skill(ROCKSALT)
    refused = LocalJobRunner().run(maker.make(crystal=rocksalt("K", "Xx")))
    answered = LocalJobRunner().run(maker.make(crystal=rocksalt("K", "Cl"), a=6.29))
    [refused], [answered] = list(refused), list(answered)
    assert not refused.ok and "OutsideDomain: lifted-v1 was not verified for " in refused.error and "'Xx' is not an element symbol" in refused.error
    assert answered.ok and answered.document["output"] == rocksalt_density("K", "Cl", 6.29)


def test_a_parameter_set_that_never_finishes_fails_alone_and_the_others_answer(workspace, monkeypatch):
    # Two atoms started on top of each other send a relaxation into an endless loop: that one set fails, not the whole run.
    monkeypatch.setattr(runner, "FLOOR_S", 1.0)
    code = "import time\ndef run(x: float = 1.0) -> float:\n    while x == 0:\n        time.sleep(0.01)\n    return 2 * x\n"
    execution, rows = runner.run_skill_code_many(code, [], [{}, {"x": 0.0}, {"x": 3.0}], get_settings(), "endless")
    assert execution.ok and [row["ok"] for row in rows] == [True, False, True]
    assert rows[2]["answer"] == 6.0 and rows[1]["error"].startswith("stopped after 1 s")


@pytest.mark.skipif(os.geteuid() != 0, reason="making a stand-in device (mknod) needs root")
def test_a_skill_that_prefers_a_gpu_is_given_the_devices_and_one_that_does_not_is_not(workspace, tmp_path, monkeypatch):
    folder = tmp_path / "gpu"
    folder.mkdir()
    os.mknod(folder / "nvidia0", 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a stand-in: behaves as /dev/null
    monkeypatch.setenv("EVOSKILL_SANDBOX_GPU_DEVICES", json.dumps([str(folder / "nvidia*")]))
    code = "import os\ndef run() -> bool:\n    return os.path.exists('/dev/nvidia0')\n"
    plain = Skill(name="sees_gpu", code=code, test_case=TestCase(expected=False))
    for resources, seen in ((SkillResources(), False), (SkillResources(gpu_preferred=True), True), (SkillResources(gpu=True), True)):
        execution = run_skill(plain.model_copy(update={"resources": resources}), {}, get_settings())
        assert execution.ok and execution.answer is seen, (resources, execution.error)
