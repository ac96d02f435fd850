"""The GPU check runs where there is no GPU too: both batches on the CPU, the report saying so."""

import json
from importlib.util import find_spec

import pytest

from benchmarks.gpu_check import main

pytestmark = pytest.mark.skipif(find_spec("chgnet") is None, reason="chgnet is not installed (the mlip extra of .ci/setup)")


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
