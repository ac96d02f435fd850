"""Run folders do not pile up: each is marked when its run ends, and folders past their retention are removed.

A run that answered keeps its folder ``run_retention_s``; one that did not (or whose end was never marked: it crashed,
or is still going) ``failed_run_retention_s``, for its trajectory. 0 keeps them for good. The sweep runs at most every
``_EVERY_S`` per folder and process, at the start of a run.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import threading
import time
from pathlib import Path

from deployments.files import write_atomic

__all__ = ["MARK", "mark_run", "sweep_runs", "sweep_now_and_then"]

log = logging.getLogger(__name__)

MARK = ".evoskill-run.json"  # a name a run can never hand back (handback.py refuses the prefix)
_EVERY_S = 600.0
_last_sweep: dict[Path, float] = {}
_lock = threading.Lock()


def mark_run(workdir: Path, answered: bool) -> None:
    """Mark ``workdir``'s run as ended, and whether it answered."""
    write_atomic(workdir / MARK, json.dumps({"answered": answered}))


def _answered(folder: Path) -> tuple[bool, float] | None:
    """Whether the run of ``folder`` answered, and when it was marked; None when it was never marked (a regular file only)."""
    try:
        fd = os.open(folder / MARK, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > 4096:
            return None
        return bool(json.loads(os.read(fd, 4096)).get("answered")), info.st_mtime
    except (OSError, ValueError, AttributeError):
        return None
    finally:
        os.close(fd)


def sweep_runs(run_root: Path, run_retention_s: float, failed_run_retention_s: float, now: float | None = None) -> int:
    """Remove the run folders under ``run_root`` past their retention; how many went."""
    now = time.time() if now is None else now
    removed = 0
    try:
        entries = list(os.scandir(run_root))
    except OSError:
        return 0
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            continue
        folder = Path(entry.path)
        marked = _answered(folder)
        if marked is None:
            keep, since = failed_run_retention_s, entry.stat(follow_symlinks=False).st_mtime
        else:
            keep, since = (run_retention_s if marked[0] else failed_run_retention_s), marked[1]
        if keep and now - since > keep:
            shutil.rmtree(folder, ignore_errors=True)  # never follows a link out of the folder
            removed += not folder.exists()
    if removed:
        log.info("sandbox: removed %d run folders past their retention under %s", removed, run_root)
    return removed


def sweep_now_and_then(run_root: Path, run_retention_s: float, failed_run_retention_s: float) -> None:
    """``sweep_runs``, unless this process swept ``run_root`` in the last ``_EVERY_S``."""
    if not run_retention_s and not failed_run_retention_s:
        return
    with _lock:
        now = time.monotonic()
        if now - _last_sweep.get(run_root, -_EVERY_S) < _EVERY_S:
            return
        _last_sweep[run_root] = now
    sweep_runs(run_root, run_retention_s, failed_run_retention_s)
