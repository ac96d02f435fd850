"""The GPU device files a run that needs or prefers a GPU is given: a verified skill that runs a machine-learned potential,
never generated code (``sandbox_gpu_devices`` names them; NVIDIA's by default)."""

from __future__ import annotations

import glob
import logging
import os
import stat
from collections.abc import Iterable

__all__ = ["gpu_devices"]

log = logging.getLogger(__name__)


def _shown_at(path: str) -> str:
    """Where a run sees the device: at its own path under ``/dev``, else at ``/dev/<its name>``."""
    return path if path.startswith("/dev/") else f"/dev/{os.path.basename(path)}"


def gpu_devices(patterns: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """(host path, path in the run) of each character device that matches one of ``patterns`` (globs), in their order;
    anything else a pattern matches (a file, a folder, a link to outside ``/dev``) is skipped with a warning.

    >>> gpu_devices(["/dev/null"])
    (('/dev/null', '/dev/null'),)
    >>> gpu_devices(["/dev/no-such-gpu*"])
    ()
    """
    found: dict[str, str] = {}
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            real = os.path.realpath(path)
            try:
                is_device = stat.S_ISCHR(os.stat(real).st_mode)
            except OSError:
                is_device = False
            if not is_device:
                log.warning("sandbox: %s is not a character device; not given to GPU runs", path)
                continue
            found.setdefault(_shown_at(path), real)
    return tuple((source, shown) for shown, source in found.items())
