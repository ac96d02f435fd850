"""Where a workspace's resident service listens, and under which key: light (no Prefect, no pydantic) for the client.

A service serves the commands of one workspace, one environment (``EVOSKILL_*`` and every other variable), one working
folder, one interpreter and one version of the code and the installed packages: its key hashes them all, so a command never reaches a service that
would run it with other settings or older code. Sockets and records lie in a folder only this user may enter
(``$XDG_RUNTIME_DIR/evoskill`` or ``/tmp/evoskill-<uid>``): nobody else can connect to a service.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from deployments.supervision import command_line

__all__ = ["ServicePlace", "service_place", "runtime_dir", "code_stamp", "ServiceRecord", "read_records", "UnsafeRuntimeDir"]

_PACKAGES = ("flows", "tasks", "skills", "deployments", "benchmarks")
_ROOT = Path(__file__).resolve().parents[3]
# Shell variables that change from one prompt to the next and that no command reads.
_VOLATILE = frozenset({"_", "OLDPWD", "PWD", "SHLVL", "COLUMNS", "LINES", "PS1", "PS2", "PROMPT_COMMAND", "HISTCMD"})


class UnsafeRuntimeDir(RuntimeError):
    """The folder for service sockets exists but another user could enter it."""


@dataclass(frozen=True)
class ServicePlace:
    """The socket a service listens on, its record, and the lock under which one is started."""

    key: str
    socket: Path
    record: Path
    lock: Path


@dataclass(frozen=True)
class ServiceRecord:
    """What a running service says of itself (its ``<key>.json``)."""

    pid: int
    key: str
    workspace: str
    socket: str
    started_at: float
    idle_stop_s: float


def runtime_dir() -> Path:
    """This user's private folder for service sockets (created 0700; refused where another user could enter it)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    folder = Path(base) / "evoskill" if base else Path(tempfile.gettempdir()) / f"evoskill-{os.getuid()}"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise UnsafeRuntimeDir(f"{folder} is not a private folder of this user")
    return folder


def code_stamp() -> str:
    """A hash of the code's files and their times, the interpreter and the installed packages: a service started before
    any of them changed is not used."""
    digest = hashlib.sha256(sys.executable.encode())
    for folder in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:  # a package (un)installed changes it
        digest.update(f"{folder}:{Path(folder).stat().st_mtime_ns}\n".encode())
    for package in _PACKAGES:
        for path in sorted((_ROOT / package).rglob("*.py")):
            digest.update(f"{path}:{path.stat().st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def service_place(workspace: Path) -> ServicePlace:
    """The service of ``workspace`` for this process's environment, working folder and code. The whole environment (but
    for a prompt's volatile variables) makes the key: ``HOME`` decides which credentials are hidden from generated code,
    ``CUDA_VISIBLE_DEVICES`` which GPUs it sees, locale and time zone what it prints."""
    env = sorted((k, v) for k, v in os.environ.items() if k not in _VOLATILE)
    identity = json.dumps({"workspace": str(workspace.resolve()), "cwd": os.getcwd(), "env": env, "code": code_stamp()})
    key = hashlib.sha256(identity.encode()).hexdigest()[:20]
    folder = runtime_dir()
    return ServicePlace(key=key, socket=folder / f"{key}.sock", record=folder / f"{key}.json", lock=folder / f"{key}.lock")


def read_records() -> list[ServiceRecord]:
    """The records of this user's services whose process still runs."""
    try:
        folder = runtime_dir()
    except (OSError, UnsafeRuntimeDir):
        return []
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            record = ServiceRecord(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            continue
        argv = command_line(record.pid) or []
        expected = ["-m", "flows.interfaces.service", "--socket", str(folder / f"{path.stem}.sock"), "--record", str(path)]
        if record.key == path.stem and record.socket == expected[3] and argv[1:7] == expected:  # that service, not a pid reused
            found.append(record)
    return found
