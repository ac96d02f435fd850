"""``evoskill worker``: a Dask worker for compiled skills, advertising GPU and memory."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["add_parser", "run_worker"]


def add_parser(sub: Any) -> None:
    worker = sub.add_parser(
        "worker",
        help="start a Dask worker that advertises its resources",
        description=(
            "Start a Dask worker (dask's own, with a nanny) for a running scheduler. It advertises resources "
            "that jobs ask for: a GPU skill runs only on a worker with GPU=1. Without --resources, the GPU count "
            "and the memory limit are detected."
        ),
        epilog="example:\n  dask scheduler &\n  evoskill worker --scheduler tcp://127.0.0.1:8786 --resources GPU=1",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    worker.add_argument("--scheduler", metavar="ADDRESS", help="tcp://HOST:PORT (default: EVOSKILL_DASK_ADDRESS)")
    worker.add_argument("--resources", metavar="NAME=N,...", help="what the worker offers, e.g. GPU=1,MEMORY=16e9")
    worker.add_argument("--nthreads", type=int, help="threads (jobs at once); default EVOSKILL_DASK_THREADS_PER_WORKER")
    worker.add_argument("--memory-limit", help="e.g. 8GiB; default EVOSKILL_DASK_WORKER_MEMORY")
    worker.add_argument("--name", help="the worker's name in the scheduler")
    worker.add_argument("--dry-run", action="store_true", help="print the dask worker command instead of running it")


def run_worker(args: argparse.Namespace) -> int:
    from deployments.interpreter import helper_folder
    from deployments.resources import ResourceError
    from deployments.settings import get_settings
    from deployments.worker import SchedulerUnreachable, check_scheduler, worker_command, worker_environment

    settings = get_settings()
    scheduler = args.scheduler or settings.dask_address
    if not scheduler:
        print("evoskill worker: give --scheduler tcp://HOST:PORT (or set EVOSKILL_DASK_ADDRESS)", file=sys.stderr)
        return 2
    if args.nthreads is not None and args.nthreads < 1:
        print("evoskill worker: --nthreads must be at least 1", file=sys.stderr)
        return 2
    try:
        command = worker_command(settings, scheduler, args.resources, args.nthreads, args.memory_limit, args.name)
    except (ResourceError, ValueError) as exc:
        print(f"evoskill worker: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(" ".join(command))
        return 0
    try:
        check_scheduler(scheduler, settings.dask_connect_timeout_s)
    except SchedulerUnreachable as exc:
        print(f"evoskill worker: {exc}", file=sys.stderr)
        return 1
    print(f"evoskill worker: {' '.join(command[command.index('-m') + 2 :])}", file=sys.stderr, flush=True)
    env = {**os.environ, **worker_environment(settings)}  # resolved before leaving the folder they are relative to
    os.chdir(helper_folder(settings))  # the worker runs in a folder of the workspace, not the user's
    os.execve(command[0], command, env)
    return 0  # not reached
