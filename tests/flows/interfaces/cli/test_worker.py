"""``evoskill worker``: Dask's worker, started isolated from the folder the user stands in, with the settings given there."""

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from deployments.settings import get_settings
from flows.interfaces.cli import worker
from tests.planted import plant


def test_the_worker_starts_isolated_from_the_users_folder_in_one_evoskill_owns(workspace, tmp_path, monkeypatch):
    here = tmp_path / "here"
    marker = plant(here, "distributed", "dask", "spglib")
    (here / "evoskill.toml").write_text('store_path = "my-store"\nsandbox_inputs = ["data"]\n')
    monkeypatch.chdir(here)
    monkeypatch.setenv("EVOSKILL_WORKSPACE", "ws")  # relative to the folder the user stands in
    monkeypatch.delenv("EVOSKILL_CONFIG")
    started: list[tuple[str, list[str], dict[str, str], str]] = []
    monkeypatch.setattr(worker.os, "execve", lambda path, argv, env: started.append((path, argv, env, os.getcwd())))
    with socket.create_server(("127.0.0.1", 0)) as scheduler:  # answers the reachability check
        address = f"tcp://127.0.0.1:{scheduler.getsockname()[1]}"
        args = argparse.Namespace(scheduler=address, resources="GPU=1", nthreads=1, memory_limit="1GiB", name="w", dry_run=False)
        assert worker.run_worker(args) == 0
    [(path, argv, env, folder)] = started
    assert path == sys.executable and argv[:2] == [sys.executable, "-I"] and argv[2:5] == ["-m", "distributed.cli.dask_worker", address]
    assert Path(folder).is_relative_to(here / "ws") and not any(Path(folder).iterdir())
    # The worker, in its own folder, reads the settings the user gave in theirs.
    assert (env["EVOSKILL_WORKSPACE"], env["EVOSKILL_CONFIG"]) == (str(here / "ws"), str(here / "evoskill.toml"))
    assert (env["EVOSKILL_STORE_PATH"], json.loads(env["EVOSKILL_SANDBOX_INPUTS"])) == (str(here / "my-store"), [str(here / "data")])
    monkeypatch.chdir(folder)
    for key in [k for k in env if k.startswith("EVOSKILL_")]:
        monkeypatch.setenv(key, env[key])
    assert (get_settings().workspace, get_settings().store_root(), get_settings().sandbox_inputs) == (here / "ws", here / "my-store", [here / "data"])
    # The same interpreter and flags, started where the user stands: the installed Dask answers, the planted one stays out.
    usage = subprocess.run([*argv[: argv.index("-m")], "-m", "distributed.cli.dask_worker", "--help"], cwd=here, env=env, capture_output=True, text=True, timeout=120)
    assert usage.returncode == 0 and "--nthreads" in usage.stdout, usage.stderr[-2000:]
    assert not marker.exists()
