"""Why a run gave no answer, in one line an agent can act on, and where its answer is.

The answer protocol: the script prints its final answer as JSON on its last non-empty stdout line, or writes
``result.json`` in its working directory (read as a regular file of the run folder only).
"""

from __future__ import annotations

import json
import os
import re
import signal
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from deployments.run_outputs import OutputRefused, read_inside
from deployments.sandbox.limits import SandboxLimits
from deployments.sandbox.models import ExecutionResult
from deployments.sandbox.view import SandboxView, view_paths

__all__ = ["Refusals", "diagnose", "read_answer"]

_RESULT_BYTES = 16 * 1024 * 1024  # result.json: an answer, not a data file


def read_answer(stdout: str, workdir: Path) -> tuple[bool, JsonValue, str | None]:
    """Whether an answer was found, the answer, and why not."""
    lines = [line for line in stdout.strip().splitlines() if line.strip()]
    if lines:
        try:
            return True, json.loads(lines[-1]), None
        except json.JSONDecodeError:
            pass
    if os.path.lexists(workdir / "result.json"):
        try:  # a regular file of the run folder only: never a link or a hard link to a file outside it
            return True, json.loads(read_inside(workdir, "result.json", _RESULT_BYTES)), None
        except OutputRefused as exc:
            return False, None, f"result.json was not read: {exc}"
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return False, None, f"result.json is not valid JSON ({exc})"
    last = lines[-1][:200] if lines else "<no output>"
    return False, None, f"the script's last stdout line is not a JSON answer (got: {last!r}); print json.dumps(answer) last"


@dataclass(frozen=True)
class Refusals:
    """What the run's cgroups refused or killed, and the CPU seconds its process used (its launcher's count)."""

    forks: int = 0
    memory_kills: int = 0
    cpu_s: float = 0.0


def outside_view(stderr: str, view: SandboxView | None) -> str | None:
    """The absolute path a 'No such file or directory' error names, when the view does not show it."""
    if view is None:
        return None
    for match in re.finditer(r"No such file or directory: '(/[^']*)'", stderr):
        path = Path(match.group(1))
        if not any(path == Path(p) or Path(p) in path.parents for p in view_paths(view)):
            return str(path)
    return None


def diagnose(result: ExecutionResult, limits: SandboxLimits, answer_problem: str | None, refused: Refusals, view: SandboxView | None) -> str | None:
    """Why the run gave no answer (None when it did): the limit that stopped it, or its own last error."""
    if result.timed_out and refused.forks:
        return f"killed after the {limits.wall_s:g} s wall-clock limit while starting processes beyond its limit of {limits.max_processes} (a fork bomb?)"
    if result.timed_out:
        return f"killed after the {limits.wall_s:g} s wall-clock limit (endless loop or too slow)"
    if refused.memory_kills:
        return f"ran out of memory: its processes together went over the run's {limits.memory_mb} MB limit; use less memory (smaller arrays, fewer processes)"
    code = result.exit_code
    if code is not None and code < 0:
        sig = signal.Signals(-code).name
        if sig == "SIGKILL" and refused.cpu_s >= limits.cpu_s - 1:  # PID 1 of its namespace ignores SIGXCPU: the hard limit kills it
            return f"killed by SIGKILL: it exceeded the {limits.cpu_s} s CPU-time limit"
        why = {
            "SIGXCPU": f"the {limits.cpu_s} s CPU-time limit",
            "SIGXFSZ": f"the {limits.file_size_mb} MB file-size limit",
            "SIGKILL": f"a resource limit (memory {limits.memory_mb} MB or {limits.max_processes} processes)",
        }.get(sig, "a signal")
        return f"killed by {sig}: it exceeded {why}"
    if code not in (0, None):
        tail = [line for line in result.stderr.strip().splitlines() if line.strip()]
        last = tail[-1] if tail else "no error message"
        outside = outside_view(result.stderr, view)
        if outside:
            return (f"{outside} is outside the sandbox: generated code sees only its run folder (write files in the current folder), "
                    f"the Python environment, system libraries and inputs granted to the run ({last})")  # fmt: skip
        if "Read-only file system" in result.stderr:
            return f"it wrote outside its run folder, which is read-only to generated code; write files in the current folder ({last})"
        if "File too large" in result.stderr:
            return f"it wrote a file over the {limits.file_size_mb} MB file-size limit ({last})"
        if "No space left on device" in result.stderr:
            return f"it wrote more than the run's {limits.disk_mb} MB disk limit (its folder and /tmp together); write less ({last})"
        if any(m in result.stderr for m in ("Network is unreachable", "Temporary failure in name resolution", "Name or service not known")):
            return f"it tried to reach the network, which the sandbox does not allow (EVOSKILL_SANDBOX_NETWORK); use local data ({last})"
        if "MemoryError" in result.stderr:
            return f"ran out of memory under the {limits.memory_mb} MB limit ({last})"
        if "BlockingIOError" in result.stderr or "Resource temporarily unavailable" in result.stderr:
            return f"could not start more processes (limit {limits.max_processes}): {last}"
        return f"exited with code {code}: {last}"
    return answer_problem
