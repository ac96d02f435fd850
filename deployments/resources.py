"""What a Dask worker advertises (``GPU``, ``MEMORY``) and what a job asks for.

Dask matches the two by name: a task submitted with ``resources={"GPU": 1}`` runs only
on a worker started with ``--resources GPU=1``.

>>> parse_resources("GPU=1,MEMORY=8e9")
{'GPU': 1.0, 'MEMORY': 8000000000.0}
>>> format_resources({"GPU": 1.0, "MEMORY": 8e9})
'GPU=1 MEMORY=8000000000'
"""

from __future__ import annotations

import glob
import os
import re

from dask.utils import parse_bytes
from distributed.system import MEMORY_LIMIT

from deployments.settings import Settings

__all__ = ["ResourceError", "detect_gpus", "detected_resources", "worker_memory", "worker_resources", "parse_resources", "format_resources"]


class ResourceError(ValueError):
    """A resource specification that cannot be read."""


def detect_gpus() -> int:
    """NVIDIA GPUs this process may use: ``CUDA_VISIBLE_DEVICES`` when set, else the ``/dev/nvidiaN`` devices."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip() and d.strip() != "-1"])
    return len([p for p in glob.glob("/dev/nvidia*") if re.fullmatch(r"/dev/nvidia\d+", p)])


def detected_resources(memory_bytes: float | None = None) -> dict[str, float]:
    """``GPU`` (when there are any) and ``MEMORY`` (the worker's limit, else this machine's memory)."""
    found: dict[str, float] = {}
    if gpus := detect_gpus():
        found["GPU"] = float(gpus)
    if memory_bytes is None:
        memory_bytes = float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    found["MEMORY"] = float(memory_bytes)
    return found


def worker_memory(limit: str, workers: int = 1) -> float:
    """Bytes per worker: ``"auto"`` shares this machine's memory among ``workers``; else ``"8GiB"``-style text."""
    return MEMORY_LIMIT / workers if limit == "auto" else float(parse_bytes(limit))


def worker_resources(settings: Settings, memory_bytes: float | None = None) -> dict[str, float]:
    """The resources workers started by evoskill advertise: the configured ones, else the detected ones."""
    if settings.dask_worker_resources is not None:
        return dict(settings.dask_worker_resources)
    return detected_resources(memory_bytes)


def parse_resources(text: str) -> dict[str, float]:
    """``"GPU=1,MEMORY=8e9"`` (commas or spaces) → ``{"GPU": 1.0, "MEMORY": 8e9}``."""
    found: dict[str, float] = {}
    for part in re.split(r"[,\s]+", text.strip()):
        if not part:
            continue
        name, sep, amount = part.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][\w-]*", name):
            raise ResourceError(f"expected NAME=AMOUNT (e.g. GPU=1), got {part!r}")
        try:
            found[name] = float(amount)
        except ValueError:
            raise ResourceError(f"the amount of {name} must be a number, got {amount!r}") from None
        if found[name] < 0:
            raise ResourceError(f"the amount of {name} must not be negative")
    return found


def format_resources(resources: dict[str, float], sep: str = " ") -> str:
    """The ``dask worker --resources`` form: ``"GPU=1 MEMORY=8000000000"`` (``sep=","`` for ``evoskill worker``)."""
    return sep.join(f"{k}={v:g}" if v != int(v) else f"{k}={int(v)}" for k, v in resources.items())
