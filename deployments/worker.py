"""``evoskill worker``: start a Dask worker that advertises its resources, for a running scheduler.

    dask scheduler                                          # once, on a host the workers reach
    evoskill worker --scheduler tcp://head:8786 --resources GPU=1
    EVOSKILL_DASK_CLUSTER=address EVOSKILL_DASK_ADDRESS=tcp://head:8786 evoskill skills run NAME --executor dask

The worker is Dask's own (``dask worker``, with a nanny that restarts it); evoskill only picks
its resources (``GPU`` count and ``MEMORY`` detected when ``--resources`` is not given) and
checks first that the scheduler answers, so a wrong address is one clear message. The worker starts isolated from the
current folder, in a folder of the workspace (``deployments/interpreter.py``); the processes it spawns inherit ``-I``.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import urlparse

from deployments.interpreter import python_command
from deployments.resources import (
    format_resources,
    parse_resources,
    worker_memory,
    worker_resources,
)
from deployments.settings import Settings, config_path

__all__ = ["SchedulerUnreachable", "worker_command", "worker_environment", "check_scheduler"]


class SchedulerUnreachable(RuntimeError):
    """No Dask scheduler answers at the address."""


def check_scheduler(address: str, timeout_s: float) -> None:
    """Raise ``SchedulerUnreachable`` unless a TCP connection to the scheduler opens within ``timeout_s``."""
    parsed = urlparse(address if "://" in address else f"tcp://{address}")
    if not parsed.hostname or not parsed.port:
        raise SchedulerUnreachable(f"{address!r} is not a scheduler address; expected tcp://HOST:PORT")
    try:
        socket.create_connection((parsed.hostname, parsed.port), timeout=timeout_s).close()
    except OSError as exc:
        raise SchedulerUnreachable(
            f"no Dask scheduler answers at {address} ({exc.strerror or exc}); start one with `dask scheduler`"
        ) from exc


def worker_command(
    settings: Settings,
    scheduler: str,
    resources: str | None = None,
    nthreads: int | None = None,
    memory_limit: str | None = None,
    name: str | None = None,
) -> list[str]:
    """The ``dask worker`` command line for these options (resources detected when not given); start it in ``helper_folder``."""
    memory_bytes = worker_memory(memory_limit or settings.dask_worker_memory)
    advertised = parse_resources(resources) if resources is not None else worker_resources(settings, memory_bytes)
    command = python_command(
        "-m", "distributed.cli.dask_worker", scheduler,
        "--nthreads", str(nthreads or settings.dask_threads_per_worker), "--memory-limit", str(int(memory_bytes)),
    )  # fmt: skip
    if advertised:
        command += ["--resources", format_resources(advertised)]
    if name:
        command += ["--name", name]
    return command


def worker_environment(settings: Settings) -> dict[str, str]:
    """The settings the worker reads, pinned for a worker started in ``helper_folder``: the config file and every file or
    folder setting as an absolute path (each was relative to the folder ``evoskill worker`` ran in)."""
    pinned = {"EVOSKILL_CONFIG": str(config_path().resolve())}
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if isinstance(value, Path):
            pinned[f"EVOSKILL_{name.upper()}"] = str(value.expanduser().resolve())
        elif isinstance(value, list) and value and all(isinstance(item, Path) for item in value):
            pinned[f"EVOSKILL_{name.upper()}"] = json.dumps([str(item.expanduser().resolve()) for item in value])
    return pinned
