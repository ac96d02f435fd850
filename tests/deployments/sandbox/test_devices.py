"""GPU device files reach only the runs given them: shown in the run's own ``/dev``, usable there, those of the GPUs the
worker was given, with the data segment limited instead of the address space only where a memory cgroup bounds the run;
other runs, other host devices and the run's own ``/dev`` entries stay as they were. A stand-in device (a character device
like /dev/null, made with mknod) plays the GPU's part where there is none."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from deployments.sandbox import execute
from deployments.sandbox.devices import gpu_devices
from deployments.sandbox.execute import SandboxLimits, isolation_report, run_code, warm_up
from deployments.settings import Settings

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="making a stand-in device (mknod) needs root")

_SEEN = """
import json, os, resource
found = {"dev": sorted(os.listdir("/dev")), "cuda_visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
         "ld_library_path": os.environ.get("LD_LIBRARY_PATH"),
         "as": resource.getrlimit(resource.RLIMIT_AS)[0], "data": resource.getrlimit(resource.RLIMIT_DATA)[0]}
for path in ("/dev/nvidia0", "/dev/evoskill-test-caps/nvidia-cap1"):
    try:
        with open(path, "r+b", buffering=0) as device:
            found[path] = [device.write(b"ping"), device.read(4).hex()]
    except OSError as exc:
        found[path] = type(exc).__name__
try:
    open("/dev/planted", "w")
except OSError as exc:
    found["planted"] = type(exc).__name__
print(json.dumps(found))
"""


def _stand_in(path: Path, minor: int = 3) -> str:
    """A character device at ``path``: minor 3 behaves as /dev/null, 5 as /dev/zero; 0666, as a GPU's is on the host."""
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    os.chmod(path, 0o666)
    return str(path)


@pytest.fixture
def stand_ins(tmp_path: Path) -> Path:
    folder = tmp_path / "gpu"
    folder.mkdir()
    for index in range(2):
        _stand_in(folder / f"nvidia{index}")
    _stand_in(folder / "nvidiactl", 5)
    (folder / "nvidia-notes.txt").write_text("not a device")
    (folder / "nvidia9").symlink_to("/dev/null")
    return folder


@pytest.fixture
def nested_in_dev():
    """A stand-in in a folder of the host's /dev (as /dev/nvidia-caps/nvidia-capN are), removed afterwards."""
    folder = Path("/dev/evoskill-test-caps")
    folder.mkdir(mode=0o755, exist_ok=True)
    try:
        yield _stand_in(folder / "nvidia-cap1")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_only_character_devices_of_the_visible_gpus_are_given_each_shown_under_dev(stand_ins, caplog):
    ctl, gpu0, gpu1 = (str(stand_ins / name) for name in ("nvidiactl", "nvidia0", "nvidia1"))
    everything = [str(stand_ins / "nvidia*")]
    assert gpu_devices(everything) == ((gpu0, "/dev/nvidia0"), (gpu1, "/dev/nvidia1"), (ctl, "/dev/nvidiactl"))
    assert "nvidia-notes.txt is not a character device" in caplog.text and "nvidia9 is not" in caplog.text  # a file; a link
    assert gpu_devices(everything, "1") == ((gpu1, "/dev/nvidia1"), (ctl, "/dev/nvidiactl"))  # the worker's GPUs only
    assert gpu_devices(everything, "") == () and gpu_devices(everything, "-1") == ()  # a worker given none
    assert gpu_devices(everything, "GPU-8e2a1c") == gpu_devices(everything)  # by UUID: which file is which, only the driver knows
    assert gpu_devices(["/dev/null", "/dev/shm", "/dev/pts/ptmx"]) == ()  # never in place of the run's own /dev entries
    assert gpu_devices([]) == () and gpu_devices([str(stand_ins / "none*")]) == ()


@pytest.fixture(params=["bwrap", "unshare"])
def contained(request: pytest.FixtureRequest) -> str:
    if not isolation_report(wanted=request.param)["works"]:
        pytest.skip(f"{request.param} isolation is not available here")
    return request.param


def _limits(settings: Settings, **changes) -> SandboxLimits:
    return dataclasses.replace(SandboxLimits.from_settings(settings), **changes)


def test_a_run_given_the_devices_uses_them_cold_and_a_run_not_given_them_never_sees_them(contained, stand_ins, nested_in_dev, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/usr/lib/x86_64-linux-gnu::relative/lib")
    settings = Settings(workspace=tmp_path / "ws", sandbox_isolation=contained, sandbox_warm=True, sandbox_memory_mb=2048,
                        sandbox_gpu_devices=[str(stand_ins / "nvidia*"), "/dev/evoskill-test-caps/*"])  # fmt: skip
    plain_limits = _limits(settings)
    assert warm_up(plain_limits)  # the warm executor is ready: a run that may use it does
    devices = gpu_devices(settings.sandbox_gpu_devices, "0")
    given = run_code(_SEEN, settings.run_root(), _limits(settings, devices=devices))
    assert given.ok, given.error
    seen = json.loads(given.stdout)
    assert {"nvidia0", "nvidiactl", "evoskill-test-caps"} <= set(seen["dev"]) and not {"nvidia1", "nvidia9", "nvidia-notes.txt"} & set(seen["dev"])
    assert seen["/dev/nvidia0"] == [4, ""] and seen["/dev/evoskill-test-caps/nvidia-cap1"] == [4, ""]  # working devices, not files
    assert seen["planted"] in ("OSError", "PermissionError")  # its /dev is still read-only
    assert seen["as"] == -1 and seen["data"] == 2048 * 1024 * 1024  # CUDA reserves address space: the data segment is bounded
    assert seen["cuda_visible"] == "0" and seen["ld_library_path"] == "/usr/lib/x86_64-linux-gnu"
    assert given.executor == "cold"  # warm executors hold no device
    assert not {"mem", "kmsg", "sda", "vda"} & set(seen["dev"])
    plain = run_code(_SEEN, settings.run_root(), plain_limits)
    assert plain.ok and plain.executor == "warm", plain.error
    seen = json.loads(plain.stdout)
    assert not any(name.startswith(("nvidia", "evoskill")) for name in seen["dev"]) and seen["/dev/nvidia0"] == "FileNotFoundError"
    assert seen["as"] >= 2048 * 1024 * 1024 and seen["cuda_visible"] is None and seen["ld_library_path"] is None  # the executor's own on top


_HOG = """
import json, mmap
held = []
for _ in range(12):  # 600 MB of shared anonymous memory: RLIMIT_DATA does not count it; the cgroup does
    chunk = mmap.mmap(-1, 50 * 1024 * 1024)
    chunk.write(b"x" * len(chunk))
    held.append(chunk)
print(json.dumps(len(held)))
"""


def test_a_run_given_the_devices_stays_within_its_memory_and_without_a_memory_cgroup_gets_none(contained, stand_ins, tmp_path, monkeypatch):
    if not execute.cgroup_support()["memory"]:
        pytest.skip("no memory cgroup here")
    settings = Settings(workspace=tmp_path / "ws", sandbox_isolation=contained, sandbox_warm=False, sandbox_memory_mb=256)
    devices = gpu_devices([str(stand_ins / "nvidia0")])
    hog = run_code(_HOG, settings.run_root(), _limits(settings, devices=devices))
    assert not hog.ok and hog.answer is None  # killed by its cgroup, not let through by the missing address-space limit
    monkeypatch.setattr(execute, "cgroup_support", lambda: {"memory": False, "pids": False})
    given = run_code(_SEEN, settings.run_root(), _limits(settings, devices=devices))
    assert given.ok, given.error
    seen = json.loads(given.stdout)
    assert "nvidia0" not in seen["dev"] and seen["as"] == 256 * 1024 * 1024  # no bound for CUDA's address space: no device
