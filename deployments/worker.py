"""``evoskill worker``: start a Dask worker that advertises its resources, for a running scheduler.

    dask scheduler                                          # once, on a host the workers reach
    evoskill worker --scheduler tcp://head:8786 --resources GPU=1
    EVOSKILL_DASK_CLUSTER=address EVOSKILL_DASK_ADDRESS=tcp://head:8786 evoskill skills run NAME --executor dask

The worker is Dask's own (``dask worker``, with a nanny that restarts it); evoskill only picks
its resources (``GPU`` count and ``MEMORY`` detected when ``--resources`` is not given) and
checks first that the scheduler answers, so a wrong address is one clear message.
"""

from __future__ import annotations

import socket
import sys
from urllib.parse import urlparse

from deployments.resources import (
    format_resources,
    parse_resources,
    worker_memory,
    worker_resources,
)
from deployments.settings import Settings

__all__ = ["SchedulerUnreachable", "worker_command", "check_scheduler"]


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
    """The ``dask worker`` command line for these options (resources detected when not given)."""
    memory_bytes = worker_memory(memory_limit or settings.dask_worker_memory)
    advertised = parse_resources(resources) if resources is not None else worker_resources(settings, memory_bytes)
    command = [sys.executable, "-m", "distributed.cli.dask_worker", scheduler,
               "--nthreads", str(nthreads or settings.dask_threads_per_worker), "--memory-limit", str(int(memory_bytes))]  # fmt: skip
    if advertised:
        command += ["--resources", format_resources(advertised)]
    if name:
        command += ["--name", name]
    return command
