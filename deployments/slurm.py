"""A one-node Slurm cluster on this machine, for trying and testing the HPC path (``evoskill slurm start|stop|status``).

It runs Debian's ``munged``, ``slurmctld`` and ``slurmd`` (package ``slurm-wlm``) as root, with a configuration
evoskill writes under ``<workspace>/slurm`` (on every start, unless someone edited it since: then it is kept): its state,
spool, logs, pid files and munge key live there, slurmd listens on 127.0.0.1 (``NoInAddrAny``; slurmctld 22.05 still listens on every interface, where
only requests signed with the workspace's own munge key are taken), on ports chosen for the workspace, and the job-completion log (``jobs.log``, Slurm's
``jobcomp/filetxt``) records every finished job, as ``sacct`` would with a database. Processes of this workspace that
submit (dask-jobqueue's ``sbatch``) find it through ``SLURM_CONF`` (``LocalSlurm.env``), which
``deployments.cluster`` sets when ``EVOSKILL_DASK_CLUSTER=slurm`` and this cluster runs. A node with NVIDIA GPUs
declares them as ``gres/gpu``; on one without, a job asking ``--gres=gpu:1`` is refused by ``sbatch``.

>>> slurm = LocalSlurm.for_workspace(Path(".evoskill"))     # doctest: +SKIP
>>> slurm.start()                                           # doctest: +SKIP
>>> slurm.queue()                                           # doctest: +SKIP
[]
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from deployments.net import free_port

__all__ = ["SlurmUnavailable", "LocalSlurm", "SlurmJob", "missing_programs", "PROGRAMS"]

PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo", "scontrol")
_SOCKET_MAX = 100  # a Unix socket's path must fit in 108 bytes


class SlurmUnavailable(RuntimeError):
    """The local Slurm cluster cannot start here; the message says why and what to do."""


@dataclass(frozen=True)
class SlurmJob:
    """One job as ``squeue`` or the job-completion log reports it."""

    job_id: str
    name: str
    state: str
    elapsed_s: float | None = None
    exit_code: str = ""


def missing_programs() -> list[str]:
    """The Slurm and munge programs not on ``PATH`` (``/usr/sbin`` included)."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return [name for name in PROGRAMS if shutil.which(name, path=path) is None]


def _program(name: str) -> str:
    return shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])) or name


def _memory_mb() -> int:
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20)


def _alive(pid_file: Path) -> int | None:
    """The pid a daemon's pid file names, where that process runs and is that daemon (``munged.pid``: munged); a pid left
    by a crash and reused by another process is not it."""
    try:
        pid = int(pid_file.read_text().strip())
        program = Path(f"/proc/{pid}/comm").read_text().strip()
    except (OSError, ValueError):
        return None
    return pid if program == pid_file.name.removesuffix(".pid") else None


def _gpu_devices() -> list[str]:
    """The NVIDIA device files this machine's Slurm node offers: those ``CUDA_VISIBLE_DEVICES`` names by index, else all."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        named = [f"/dev/nvidia{d.strip()}" for d in visible.split(",") if d.strip().isdigit()]
    else:
        named = [str(p) for p in Path("/dev").glob("nvidia*") if re.fullmatch(r"nvidia\d+", p.name)]
    return sorted((d for d in named if Path(d).exists()), key=lambda d: int(d.removeprefix("/dev/nvidia")))


@dataclass
class LocalSlurm:
    """A one-node Slurm cluster whose every file lives in ``folder``."""

    folder: Path

    @classmethod
    def for_workspace(cls, workspace: Path) -> LocalSlurm:
        return cls(Path(workspace).resolve() / "slurm")

    # --- files -----------------------------------------------------------------------------------------------------
    @property
    def conf(self) -> Path:
        return self.folder / "slurm.conf"

    @property
    def job_log(self) -> Path:
        return self.folder / "jobs.log"

    @property
    def munge_socket(self) -> Path:
        """In the cluster's folder; where that path is too long for a socket, in ``/run`` (root's alone, as the daemons
        are), never in a folder others can write to."""
        inside = self.folder / "munge.sock"
        if len(str(inside)) <= _SOCKET_MAX:
            return inside
        return Path("/run") / f"evoskill-munge-{hashlib.sha256(str(self.folder).encode()).hexdigest()[:12]}.sock"

    def env(self) -> dict[str, str]:
        """What a process that submits to this cluster needs in its environment."""
        return {"SLURM_CONF": str(self.conf)}

    def _ports(self) -> tuple[int, int]:
        """The controller's and the node daemon's ports: chosen once, kept in the configuration."""
        if self.conf.is_file():
            found = dict(re.findall(r"^(SlurmctldPort|SlurmdPort)=(\d+)$", self.conf.read_text(), re.M))
            if len(found) == 2:
                return int(found["SlurmctldPort"]), int(found["SlurmdPort"])
        first = free_port()
        second = free_port()
        while second == first:
            second = free_port()
        return first, second

    @property
    def node(self) -> str:
        return socket.gethostname().split(".")[0]

    def configuration(self) -> str:
        """slurm.conf for one node (this machine's CPUs, 90 % of its memory, its NVIDIA GPUs as gres) at 127.0.0.1."""
        controller, daemon = self._ports()
        f = self.folder
        gpus = len(_gpu_devices())
        lines = [
            "# Written by evoskill (deployments/slurm.py): a one-node cluster for this workspace.",
            "ClusterName=evoskill",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={controller}",
            f"SlurmdPort={daemon}",
            "CommunicationParameters=NoInAddrAny",  # slurmd listens on the node's address (127.0.0.1), not on every interface
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={f / 'state'}",
            f"SlurmdSpoolDir={f / 'spool'}",
            f"SlurmctldPidFile={f / 'slurmctld.pid'}",
            f"SlurmdPidFile={f / 'slurmd.pid'}",
            f"SlurmctldLogFile={f / 'slurmctld.log'}",
            f"SlurmdLogFile={f / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",  # no cgroups needed (containers, VMs)
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={self.job_log}",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "DefMemPerCPU=1024",
            "ReturnToService=2",
            "MpiDefault=none",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "InactiveLimit=0",
            "MinJobAge=300",
            "KillWait=5",
            "Waittime=0",
        ]
        node = f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} RealMemory={int(_memory_mb() * 0.9)} State=UNKNOWN"
        if gpus:
            lines.append("GresTypes=gpu")
            node += f" Gres=gpu:{gpus}"
        lines += [node, f"PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP", ""]
        return "\n".join(lines)

    def _write(self) -> None:
        for sub in ("state", "spool"):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)
        self.folder.chmod(0o700)
        key = self.folder / "munge.key"
        if not key.is_file():
            key.write_bytes(secrets.token_bytes(1024))
        key.chmod(0o600)  # munged refuses a key others can read
        if self._edited():
            return  # the user's own configuration: used as it is
        written = self.configuration()
        self.conf.write_text(written)
        self._stamp.write_text(hashlib.sha256(written.encode()).hexdigest())
        (self.folder / "gres.conf").write_text("".join(f"Name=gpu File={device}\n" for device in _gpu_devices()))

    @property
    def _stamp(self) -> Path:
        return self.folder / ".slurm.conf.sha256"

    def _edited(self) -> bool:
        """Whether slurm.conf is not what evoskill last wrote (someone edited it): then it is kept."""
        try:
            return hashlib.sha256(self.conf.read_bytes()).hexdigest() != self._stamp.read_text().strip()
        except OSError:
            return False

    # --- life --------------------------------------------------------------------------------------------------------
    def unavailable(self) -> str | None:
        """Why the cluster cannot start here, or None."""
        missing = missing_programs()
        if missing:
            return f"Slurm is not installed ({', '.join(missing)} missing): apt-get install slurm-wlm munge (bash .ci/setup does, as root)"
        if os.geteuid() != 0:
            return "the one-node Slurm cluster runs its daemons as root (slurmd starts jobs as their users); run it as root"
        return None

    def running(self) -> bool:
        return all(_alive(self.folder / name) for name in ("munged.pid", "slurmctld.pid", "slurmd.pid"))

    def _run(self, *command: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(command), capture_output=True, text=True, timeout=timeout, env={**os.environ, **self.env()}, check=False)

    def start(self, timeout_s: float = 60.0) -> None:
        """Start munged, slurmctld and slurmd (those not running) and wait until the node takes jobs."""
        reason = self.unavailable()
        if reason:
            raise SlurmUnavailable(reason)
        if self.running() and self.node_state() in ("idle", "mixed", "allocated"):
            return
        self.stop()
        self._write()
        env = {**os.environ, **self.env()}
        munge = [
            _program("munged"), "--force", f"--key-file={self.folder / 'munge.key'}", f"--socket={self.munge_socket}",
            f"--pid-file={self.folder / 'munged.pid'}", f"--seed-file={self.folder / 'munge.seed'}",
            f"--log-file={self.folder / 'munged.log'}",
        ]  # fmt: skip
        for command in (munge, [_program("slurmctld"), "-i"], [_program("slurmd"), "-N", self.node]):
            done = subprocess.run(command, capture_output=True, text=True, timeout=30, env=env, check=False)
            if done.returncode != 0:
                self.stop()
                said = (done.stderr or done.stdout).strip() or self._log_tail(Path(command[0]).name)
                raise SlurmUnavailable(f"{Path(command[0]).name} did not start: {said[-500:]} (logs in {self.folder})")
        deadline = time.monotonic() + timeout_s
        state = ""
        while time.monotonic() < deadline:
            state = self.node_state()
            if state in ("idle", "mixed", "allocated"):
                return
            time.sleep(0.5)
        self.stop()
        raise SlurmUnavailable(f"the node did not become idle within {timeout_s:g} s (state {state or 'unknown'}; logs in {self.folder})")

    def _log_tail(self, program: str) -> str:
        """The last error lines of a daemon's log (slurmd says why it stopped there, not on its stderr)."""
        try:
            lines = (self.folder / f"{program}.log").read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return " | ".join(line for line in lines[-20:] if "error" in line or "fatal" in line)[-500:]

    def stop(self) -> None:
        """Stop the daemons (jobs still running are killed with slurmd)."""
        for name in ("slurmd.pid", "slurmctld.pid", "munged.pid"):
            pid = _alive(self.folder / name)
            if pid is None:
                continue
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if _alive(self.folder / name) is None:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)
        self.munge_socket.unlink(missing_ok=True)

    # --- reading back ----------------------------------------------------------------------------------------------
    def node_state(self) -> str:
        """The node's state as ``sinfo`` says it (``idle``, ``mixed``, ``down``...), or ``""`` when the controller does not answer."""
        try:
            done = self._run(_program("sinfo"), "-h", "-N", "-o", "%T", timeout=10)
        except subprocess.TimeoutExpired:
            return ""
        return done.stdout.strip().split("\n")[0].rstrip("*~#") if done.returncode == 0 else ""

    def queue(self) -> list[SlurmJob]:
        """Jobs waiting or running (``squeue``)."""
        done = self._run(_program("squeue"), "-h", "-o", "%i|%j|%T")
        if done.returncode != 0:
            raise SlurmUnavailable(f"squeue failed: {done.stderr.strip()}")
        rows = [line.split("|", 2) for line in done.stdout.splitlines() if line.count("|") == 2]
        return [SlurmJob(job_id, name, state) for job_id, name, state in rows]

    def finished(self) -> list[SlurmJob]:
        """Every finished job, from the job-completion log (what ``sacct`` gives where accounting has a database)."""
        if not self.job_log.is_file():
            return []
        jobs = []
        for line in self.job_log.read_text().splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            if "JobId" not in fields:
                continue
            jobs.append(SlurmJob(fields["JobId"], fields.get("Name", ""), fields.get("JobState", ""), _elapsed(fields), fields.get("ExitCode", "")))
        return jobs

    def cancel(self, job_id: str) -> None:
        """``scancel`` one job."""
        done = self._run(_program("scancel"), job_id)
        if done.returncode != 0:
            raise SlurmUnavailable(f"scancel {job_id} failed: {done.stderr.strip()}")


def _elapsed(fields: dict[str, str]) -> float | None:
    from datetime import datetime

    try:
        return (datetime.fromisoformat(fields["EndTime"]) - datetime.fromisoformat(fields["StartTime"])).total_seconds()
    except (KeyError, ValueError):
        return None
