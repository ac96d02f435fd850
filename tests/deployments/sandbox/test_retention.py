"""Run folders do not pile up: each is marked when its run ends and removed after its retention, a failed run's later."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from deployments.sandbox import retention
from deployments.sandbox.execute import SandboxLimits, run_code
from deployments.sandbox.retention import MARK, mark_run, sweep_runs

DAY = 86_400.0


def _run_folder(root: Path, name: str, answered: bool | None, age_s: float) -> Path:
    folder = root / name
    (folder / "tmp").mkdir(parents=True)
    (folder / "main.py").write_text("print(1)\n")
    if answered is not None:
        mark_run(folder, answered)
        os.utime(folder / MARK, (time.time() - age_s, time.time() - age_s))
    os.utime(folder, (time.time() - age_s, time.time() - age_s))
    return folder


def test_each_folder_goes_after_its_own_retention(tmp_path):
    root = tmp_path / "runs"
    old_answer = _run_folder(root, "answered-old", True, 2 * DAY)
    new_answer = _run_folder(root, "answered-new", True, 0.5 * DAY)
    old_failure = _run_folder(root, "failed-old", False, 2 * DAY)
    ancient_failure = _run_folder(root, "failed-ancient", False, 20 * DAY)
    unmarked = _run_folder(root, "unmarked-old", None, 2 * DAY)  # crashed, or still going: kept as long as a failure
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.utime(outside, (0, 0))
    (root / "link").symlink_to(outside)
    assert sweep_runs(root, DAY, 14 * DAY) == 2
    assert not old_answer.exists() and not ancient_failure.exists()
    assert new_answer.exists() and old_failure.exists() and unmarked.exists()
    assert outside.exists() and (root / "link").is_symlink()  # a link is never followed or removed


def test_zero_keeps_them_for_good(tmp_path):
    root = tmp_path / "runs"
    kept = [_run_folder(root, "a", True, 400 * DAY), _run_folder(root, "b", False, 400 * DAY)]
    assert sweep_runs(root, 0, 0) == 0 and all(folder.exists() for folder in kept)


def test_a_mark_that_is_not_a_small_regular_file_counts_as_unmarked(tmp_path):
    root = tmp_path / "runs"
    folder = _run_folder(root, "forged", None, 2 * DAY)
    (folder / MARK).symlink_to(tmp_path / "nowhere.json")
    (tmp_path / "nowhere.json").write_text(json.dumps({"answered": True}))
    assert sweep_runs(root, DAY, 14 * DAY) == 0 and folder.exists()  # judged by the folder's age against a failure's retention


def test_a_run_is_marked_and_old_folders_go_when_the_next_run_starts(tmp_path, monkeypatch):
    monkeypatch.setattr(retention, "_last_sweep", {})
    old = _run_folder(tmp_path, "answered-old", True, 2 * DAY)
    limits = SandboxLimits(wall_s=20, warm=False, run_retention_s=DAY)
    result = run_code("import json\nprint(json.dumps(1))\n", tmp_path, limits)
    assert result.ok and not old.exists()
    assert json.loads((Path(result.workdir) / MARK).read_text()) == {"answered": True}
    failed = run_code("raise SystemExit(3)\n", tmp_path, limits)
    assert json.loads((Path(failed.workdir) / MARK).read_text()) == {"answered": False}


@pytest.mark.parametrize("every", [600.0])
def test_the_sweep_runs_at_most_now_and_then(tmp_path, monkeypatch, every):
    monkeypatch.setattr(retention, "_last_sweep", {})
    calls: list[Path] = []
    monkeypatch.setattr(retention, "sweep_runs", lambda root, *args: calls.append(root) or 0)
    for _ in range(3):
        retention.sweep_now_and_then(tmp_path, DAY, 14 * DAY)
    assert calls == [tmp_path] and retention._EVERY_S == every
