"""The GPU device files a run that needs or prefers a GPU is given: a stored skill whose code runs a machine-learned
potential, never code written during a solve (``sandbox_gpu_devices`` names them; NVIDIA's by default)."""

from __future__ import annotations

import glob
import logging
import os
import re
import stat
from collections.abc import Iterable

__all__ = ["gpu_devices"]

log = logging.getLogger(__name__)

# What the private /dev of every run already holds: a device is never shown in their place.
_RESERVED = frozenset("null zero full random urandom tty fd stdin stdout stderr shm pts ptmx core mqueue".split())
_NUMBERED = re.compile(r"nvidia(\d+)$")


def _shown_at(path: str) -> str | None:
    """Where a run sees the device: at its own path under ``/dev`` (normalised), else at ``/dev/<its name>``; None where that
    is a place the run's ``/dev`` already fills."""
    shown = os.path.normpath(path) if path.startswith("/dev/") else f"/dev/{os.path.basename(path)}"
    if not shown.startswith("/dev/") or shown.split("/")[2] in _RESERVED:
        return None
    return shown


def _visible(shown: str, visible: str | None) -> bool:
    """Whether a numbered GPU (``/dev/nvidiaN``) is one the worker's ``CUDA_VISIBLE_DEVICES`` lists (all where it is unset
    or names GPUs by UUID: which file each is, only the driver knows); the shared control devices always."""
    numbered = _NUMBERED.search(shown)
    listed = [entry.strip() for entry in (visible or "").split(",") if entry.strip()]
    if visible is None or numbered is None or not all(entry.isdigit() for entry in listed):
        return True
    return numbered.group(1) in listed


def gpu_devices(patterns: Iterable[str], visible: str | None = None) -> tuple[tuple[str, str], ...]:
    """(host path, path in the run) of each character device that matches one of ``patterns`` (globs), in their order, and
    that ``visible`` (the worker's ``CUDA_VISIBLE_DEVICES``) leaves it: an empty value gives no device at all. A link, a
    file, a folder, or a device that would be shown in place of the run's own (``/dev/null``, ``/dev/shm``, ...) is skipped
    with a warning.

    >>> gpu_devices(["/dev/no-such-gpu*"]), gpu_devices(["/dev/null"])
    ((), ())
    """
    if visible is not None and visible.strip() in ("", "-1"):
        return ()  # the worker was given no GPU
    found: dict[str, str] = {}
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            shown = _shown_at(path)
            try:
                is_device = not os.path.islink(path) and stat.S_ISCHR(os.stat(path).st_mode)
            except OSError:
                is_device = False
            if shown is None or not is_device:
                log.warning("sandbox: %s is not a character device that can be shown to a run; not given to GPU runs", path)
                continue
            if shown in found and found[shown] != path:
                log.warning("sandbox: %s would be shown at %s, which %s already is; not given", path, shown, found[shown])
                continue
            if _visible(shown, visible):
                found[shown] = path
    return tuple((source, shown) for shown, source in found.items())
