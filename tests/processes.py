"""Looking for a run's processes from the host."""

import os
from pathlib import Path

# What the launcher (a cold run) and the warm executor (its runners and runs are forks of it) run: in their command lines.
SANDBOX_MARKERS = ("main(json.loads(sys.argv[1]))", "serve(json.loads(sys.argv[1]))")


def marked(marker: str) -> list[int]:
    """The host's processes whose command line holds ``marker`` (a zombie's is empty)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def sandbox_processes(started_after: float = 0.0) -> list[int]:
    """This process's descendants that belong to the sandbox (launchers, warm executors, their runners and runs) and started
    after ``started_after`` (a ``time.CLOCK_BOOTTIME`` reading)."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    sandboxed = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat[1])
        if any(marker.encode() in cmdline for marker in SANDBOX_MARKERS) and int(stat[19]) / ticks >= started_after:
            sandboxed.add(int(entry.name))
    me = os.getpid()

    def descends(pid: int) -> bool:
        seen = set()
        while pid in parents and pid not in seen:
            seen.add(pid)
            pid = parents[pid]
            if pid == me:
                return True
        return False

    return sorted(pid for pid in sandboxed if descends(pid))
