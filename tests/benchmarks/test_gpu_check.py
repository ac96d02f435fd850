"""The GPU check runs where there is no GPU too: both batches on the CPU, the report saying so; through a stored skill,
each item runs the skill job's own code in the sandbox."""

import json
import os
import stat
from importlib.util import find_spec

import pytest

from benchmarks.gpu_check import main
from skills.documents import Skill, SkillResources, TestCase


@pytest.mark.skipif(find_spec("chgnet") is None, reason="chgnet is not installed (the mlip extra of .ci/setup)")
def test_the_gpu_check_reports_both_workers_and_agrees_with_itself_without_a_gpu(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    out = tmp_path / "report.json"
    assert main(["--structures", "2", "--supercell", "1", "--steps", "20", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["gpu"].startswith("none") and report["atoms"] == 8
    for side in ("gpu_worker", "cpu_worker"):
        assert report[side]["device"] == "cpu" and report[side]["structures"] == 1
        assert [r["a_start"] for r in report[side]["results"]] == [5.55, 5.75]
        assert all(-4.0 < r["energy_per_atom"] < -3.0 for r in report[side]["results"])  # rock-salt NaCl with CHGNet: -3.67 at rest
    assert report["max_energy_difference_ev_per_atom"] < 1e-6 and report["speedup"] > 0
    assert "speed-up" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--structures", "1"])


@pytest.mark.skipif(os.geteuid() != 0, reason="making a stand-in device (mknod) needs root")
def test_the_skill_check_runs_a_stored_skill_on_both_workers_through_its_job_and_reports_what_the_sandbox_saw(workspace, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)  # the GPU worker keeps the machine's GPUs; the CPU worker gets none
    stand_in = tmp_path / "nvidia0"
    os.mknod(stand_in, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # plays the GPU's device file (it behaves as /dev/null)
    monkeypatch.setenv("EVOSKILL_SANDBOX_GPU_DEVICES", json.dumps([str(stand_in)]))
    code = "def run(a: float = 5.64) -> float:\n    return round(a * 2, 4)\n"
    parameters = {"type": "object", "properties": {"a": {"type": "number", "default": 5.64, "unit": "Å", "exclusiveMinimum": 0}}}
    skill = Skill(name="doubled", code=code, parameters=parameters, resources=SkillResources(gpu_preferred=True, walltime_s=30),
                  test_case=TestCase(params={"a": 5.64}, expected=11.28))  # fmt: skip
    path, out = tmp_path / "skill.json", tmp_path / "report.json"
    path.write_text(skill.model_dump_json())
    assert main(["--skill", str(path), "--structures", "3", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["skill"] == "doubled-v1" and report["skill_prefers_gpu"] and report["gpu"].startswith("none")
    for side in ("gpu_worker", "cpu_worker"):
        assert [r["params"]["a"] for r in report[side]["results"]] == [5.55, 5.65, 5.75]
        assert [r["answer"] for r in report[side]["results"]] == [11.1, 11.3, 11.5] and report[side]["failed"] == 0
        probe = report[side]["probe"]
        assert probe["device"].startswith("cpu") and not probe["cuda"], probe  # no real GPU here
        assert ("nvidia0" in probe["dev"]) is (side == "gpu_worker"), probe  # the device reaches the GPU worker's runs alone
    assert report["max_answer_difference"] == 0.0 and report["speedup"] > 0
    assert "skill runs (0 failed)" in capsys.readouterr().out
