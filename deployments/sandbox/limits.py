"""The limits of one sandboxed run, each field a ``sandbox_*`` setting, and the resource limits they give its processes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from deployments.sandbox.cgroups import RunCgroups
from deployments.secret_paths import hidden_paths
from deployments.settings import Settings

__all__ = ["SandboxLimits", "rlimits"]

MB = 1024 * 1024


def _setting_default(limit: str) -> Any:
    """The default of the setting ``sandbox_<limit>``, the one source of a limit's default."""
    return Settings.model_fields[f"sandbox_{limit}"].default


@dataclass(frozen=True)
class SandboxLimits:
    """The limits of an execution: each field is the setting ``sandbox_<field>``.

    ``hidden``: paths kept out even where a granted path holds them; ``inputs``: paths granted to this run, read-only;
    ``devices``: (host path, path in the run) of the GPU device files this run is given (``devices.gpu_devices``).
    """

    wall_s: float = _setting_default("wall_s")
    cpu_s: int = _setting_default("cpu_s")
    memory_mb: int = _setting_default("memory_mb")
    disk_mb: int = _setting_default("disk_mb")
    max_processes: int = _setting_default("max_processes")
    file_size_mb: int = _setting_default("file_size_mb")
    output_bytes: int = _setting_default("output_bytes")
    max_files: int = _setting_default("max_files")
    run_retention_s: float = _setting_default("run_retention_s")
    failed_run_retention_s: float = _setting_default("failed_run_retention_s")
    network: bool = _setting_default("network")
    hidden: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    devices: tuple[tuple[str, str], ...] = ()
    isolation: str = _setting_default("isolation")
    warm: bool = _setting_default("warm")
    warm_packages: tuple[str, ...] = tuple(Settings.model_fields["sandbox_warm_packages"].default_factory())  # type: ignore[call-arg,misc]

    @classmethod
    def from_settings(cls, s: Settings, inputs: Iterable[str | Path] = ()) -> SandboxLimits:
        limits = {f.name: getattr(s, f"sandbox_{f.name}") for f in fields(cls) if f.name not in ("hidden", "inputs", "devices", "warm_packages")}
        hidden = tuple(str(p) for p in hidden_paths(s))  # the workspace and home credentials: outside the view; covered if a granted input holds them
        granted = tuple(str(Path(p).resolve()) for p in [*s.sandbox_inputs, *inputs])
        return cls(**limits, hidden=hidden, inputs=granted, warm_packages=tuple(s.sandbox_warm_packages))


def rlimits(limits: SandboxLimits, groups: RunCgroups) -> dict[str, int]:
    """The resource limits of each process of a run (the process limit only where no pids cgroup counts them). A run given
    GPU devices, inside a memory cgroup, has its data segment limited instead of its address space: CUDA reserves address space
    far beyond what it uses."""
    found = {
        "RLIMIT_CPU": limits.cpu_s,
        "RLIMIT_DATA" if limits.devices and "memory" in groups.groups else "RLIMIT_AS": limits.memory_mb * MB,
        "RLIMIT_FSIZE": limits.file_size_mb * MB,
        "RLIMIT_NOFILE": 1024,
        "RLIMIT_CORE": 0,
    }
    if "pids" not in groups.groups:  # per user: binds a run's own user (evoskill as root), or evoskill's (it does not bind root)
        found["RLIMIT_NPROC"] = limits.max_processes
    return found
