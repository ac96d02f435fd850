"""GPU device files reach only the runs given them: shown in the run's own ``/dev``, usable there, with the data segment
limited instead of the address space; other runs, and other host devices, stay out. A stand-in device (a character device
like /dev/null, made with mknod) plays the GPU's part where there is none."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from deployments.sandbox.devices import gpu_devices
from deployments.sandbox.execute import SandboxLimits, run_code
from deployments.settings import Settings

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="making a stand-in device (mknod) needs root")

_SEEN = """
import json, os, resource
found = {"dev": sorted(os.listdir("/dev")), "cuda_visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
         "as": resource.getrlimit(resource.RLIMIT_AS)[0], "data": resource.getrlimit(resource.RLIMIT_DATA)[0]}
try:
    with open("/dev/nvidia0", "r+b", buffering=0) as device:
        found["wrote"] = device.write(b"ping")
        found["read"] = device.read(4).hex()
except OSError as exc:
    found["error"] = type(exc).__name__
print(json.dumps(found))
"""


def _stand_in(folder: Path, name: str, minor: int) -> str:
    """A character device ``name`` in ``folder``: 1/3 behaves as /dev/null, 1/5 as /dev/zero."""
    path = folder / name
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    os.chmod(path, 0o666)  # the run's own user opens it, as it opens a GPU's (0666 on the host)
    return str(path)


@pytest.fixture
def stand_ins(tmp_path: Path) -> Path:
    folder = tmp_path / "gpu"
    folder.mkdir()
    _stand_in(folder, "nvidia0", 3)
    _stand_in(folder, "nvidiactl", 5)
    (folder / "nvidia-notes.txt").write_text("not a device")
    return folder


@needs_root
def test_only_character_devices_are_given_each_shown_under_dev(stand_ins, caplog):
    found = gpu_devices([str(stand_ins / "nvidia*"), "/dev/null", "/dev/null"])
    assert found == ((str(stand_ins / "nvidia0"), "/dev/nvidia0"), (str(stand_ins / "nvidiactl"), "/dev/nvidiactl"), ("/dev/null", "/dev/null"))
    assert "nvidia-notes.txt is not a character device" in caplog.text
    assert gpu_devices([]) == () and gpu_devices([str(stand_ins / "none*")]) == ()


@needs_root
@pytest.mark.parametrize("kind", ["bwrap", "unshare"])
def test_a_run_given_the_devices_uses_them_and_a_run_not_given_them_never_sees_them(kind, stand_ins, tmp_path, monkeypatch):
    from deployments.sandbox.execute import isolation_report

    if not isolation_report(wanted=kind)["works"]:
        pytest.skip(f"{kind} isolation is not available here")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    settings = Settings(workspace=tmp_path / "ws", sandbox_isolation=kind, sandbox_warm=True, sandbox_memory_mb=2048,
                        sandbox_gpu_devices=[str(stand_ins / "nvidia*")])  # fmt: skip
    limits = SandboxLimits.from_settings(settings)
    given = run_code(_SEEN, settings.run_root(), SandboxLimits(**{**limits.__dict__, "devices": gpu_devices(settings.sandbox_gpu_devices)}))
    assert given.ok, given.error
    seen = json.loads(given.stdout)
    assert {"nvidia0", "nvidiactl"} <= set(seen["dev"]) and "nvidia-notes.txt" not in seen["dev"]
    assert seen["wrote"] == 4 and seen["read"] == ""  # a working device (here /dev/null's), not a file
    assert seen["as"] == -1 and seen["data"] == 2048 * 1024 * 1024  # CUDA reserves address space: the data segment is bounded
    assert seen["cuda_visible"] == "0" and given.executor == "cold"  # which GPU the worker was given; warm executors have none
    assert not {"mem", "kmsg", "sda", "nvidia1"} & set(seen["dev"])
    plain = run_code(_SEEN, settings.run_root(), limits)
    assert plain.ok, plain.error
    seen = json.loads(plain.stdout)
    assert not any(name.startswith("nvidia") for name in seen["dev"]) and seen["error"] == "FileNotFoundError"
    assert seen["as"] == 2048 * 1024 * 1024 and seen["cuda_visible"] is None
