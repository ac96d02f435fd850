"""``evoskill slurm start|stop|status``: the workspace's one-node Slurm cluster (``deployments/slurm.py``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser", "run_slurm"]


def add_parser(sub: Any) -> None:
    slurm = sub.add_parser(
        "slurm",
        help="start, stop or show a one-node Slurm cluster for trying the HPC path",
        description=(
            "A one-node Slurm cluster on this machine (munged, slurmctld and slurmd from Debian's slurm-wlm, as root), "
            "its configuration, state and logs under <workspace>/slurm, the node at 127.0.0.1. With it running, "
            "EVOSKILL_DASK_CLUSTER=slurm submits skill batches to it through dask-jobqueue."
        ),
        epilog=(
            "example:\n  evoskill slurm start\n"
            "  EVOSKILL_DASK_CLUSTER=slurm evoskill skills run NAME --batch items.jsonl --executor dask\n"
            "  evoskill slurm status\n  evoskill slurm stop"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    slurm.add_argument("action", choices=["start", "stop", "status"], help="start the daemons / stop them / show the node, queue and finished jobs")


def run_slurm(args: argparse.Namespace) -> int:
    from deployments.settings import get_settings
    from deployments.slurm import LocalSlurm, SlurmUnavailable

    slurm = LocalSlurm.for_workspace(get_settings().workspace)
    if args.action == "stop":
        was = slurm.running()
        slurm.stop()
        print("stopped" if was else "not running")
        return 0
    if args.action == "start":
        try:
            slurm.start()
        except SlurmUnavailable as exc:
            print(f"evoskill slurm: {exc}", file=sys.stderr)
            return 1
        print(f"Slurm is running: node {slurm.node} {slurm.node_state()}; configuration {slurm.conf}")
        print(f"  to use its commands in a shell: export SLURM_CONF={slurm.conf}")
        return 0
    if not slurm.running():
        reason = slurm.unavailable()
        print(f"not running{f' ({reason})' if reason else ''}; start it with `evoskill slurm start`")
        return 1
    print(f"node {slurm.node}: {slurm.node_state() or 'not answering'}; configuration {slurm.conf}")
    queued = slurm.queue()
    print(f"queue: {len(queued)} job(s)" + "".join(f"\n  {job.job_id}  {job.name}  {job.state}" for job in queued))
    done = slurm.finished()
    print(f"finished: {len(done)} job(s) (log {slurm.job_log})" + "".join(
        f"\n  {job.job_id}  {job.name}  {job.state}  {job.elapsed_s:.0f} s" if job.elapsed_s is not None else f"\n  {job.job_id}  {job.name}  {job.state}"
        for job in done[-10:]
    ))  # fmt: skip
    return 0
