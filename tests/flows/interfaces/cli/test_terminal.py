"""A quiet terminal: evoskill's own progress and result on screen, Prefect's log lines and tracebacks in a file."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from prefect.settings import PREFECT_API_URL

from flows.interfaces.cli.terminal import quiet_terminal

REPO = Path(__file__).parents[4]
QUERY = "What is 2+2? Return an integer."


def test_terminal_handlers_go_to_the_file_and_stay_there(tmp_path, capsys):
    target = tmp_path / "logs" / "evoskill.log"
    logger = logging.getLogger("evoskill.test.terminal")
    logger.addHandler(logging.StreamHandler(sys.stderr))
    assert quiet_terminal(path=target) == target
    assert not any(isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler) for h in logger.handlers)
    logger.warning("a line for the file")
    from prefect.logging.configuration import setup_logging

    setup_logging(incremental=False)  # Prefect configures itself again (an in-process server, its engine)
    logging.getLogger("prefect").warning("after Prefect set itself up again")
    warnings.warn("a library's warning", UserWarning, stacklevel=1)
    assert capsys.readouterr().err == ""
    text = target.read_text()
    assert "a line for the file" in text and "after Prefect set itself up again" in text and "a library's warning" in text


def test_evoskills_own_warnings_still_reach_the_terminal_in_one_line(tmp_path, capsys):
    target = tmp_path / "evoskill.log"
    quiet_terminal(path=target)
    try:
        raise OSError("no user namespaces")
    except OSError as exc:
        logging.getLogger("deployments.sandbox.execute").warning("sandbox: generated code runs under resource limits only", exc_info=exc)
    logging.getLogger("prefect.engine").warning("a Prefect line")
    err = capsys.readouterr().err
    assert err == "evoskill: warning: sandbox: generated code runs under resource limits only\n"
    logged = target.read_text()
    assert "no user namespaces" in logged and "a Prefect line" in logged


def test_verbose_leaves_the_terminal_alone(tmp_path):
    handler = logging.StreamHandler(sys.stderr)
    logging.root.addHandler(handler)
    assert quiet_terminal(verbose=True, path=tmp_path / "x.log") is None
    assert handler in logging.root.handlers and not (tmp_path / "x.log").exists()


def _evoskill(workspace: Path, script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("EVOSKILL_")}
    env |= {
        "PREFECT_API_URL": PREFECT_API_URL.value(), "PYTHONPATH": str(REPO), "EVOSKILL_WORKSPACE": str(workspace),
        "EVOSKILL_CONFIG": str(workspace / "absent.toml"), "EVOSKILL_STORE": "memory", "EVOSKILL_STARTER_LIBRARY": "false",
        "EVOSKILL_LLM_BACKEND": "scripted", "EVOSKILL_LLM_SCRIPT": str(script), "EVOSKILL_TOOL_ROUNDS": "0",
        "EVOSKILL_SEARCH_PACKAGES": "[]",
    }  # fmt: skip
    return subprocess.run([sys.executable, "-m", "flows.interfaces.cli.main", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=300)


@pytest.fixture
def unreachable(tmp_path: Path) -> Path:
    """A reply script whose model cannot be reached: the stage fails, Prefect logs the exception with its traceback."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [{"stage": "triage", "content": {"conflict": ""}}] + [{"stage": "research", "error": "unavailable"}] * 3}))
    return script


def test_a_failing_solve_prints_evoskill_lines_only(tmp_path, unreachable):
    done = _evoskill(tmp_path / "ws", unreachable, "solve", QUERY)
    assert done.returncode == 1
    terminal = done.stdout + done.stderr
    assert "cannot reach the LLM endpoint at scripted://" in terminal
    assert "Traceback" not in terminal and "| INFO" not in terminal and "| ERROR" not in terminal, terminal
    logged = (tmp_path / "ws" / "logs" / "evoskill.log").read_text()
    assert "Traceback" in logged and "Finished in state" in logged


def test_verbose_shows_prefect_lines_on_the_terminal(tmp_path, unreachable):
    done = _evoskill(tmp_path / "ws", unreachable, "solve", QUERY, "--verbose")
    assert done.returncode == 1
    assert "Finished in state" in done.stderr and "Traceback" in done.stderr


@pytest.mark.parametrize("service", ["false", "true"], ids=["in-process", "in-the-service"])
def test_ctrl_c_on_a_solve_ends_it_with_one_line_and_no_traceback(tmp_path, service):
    import signal
    import time

    script = tmp_path / "script.json"
    mark = f"120.{os.getpid()}{time.monotonic_ns() % 10_000}"  # the code becomes `sleep MARK`: seen from here, warm run or cold
    slow = f"import os\nos.execv('/bin/sleep', ['sleep', '{mark}'])\n"
    script.write_text(json.dumps({"replies": [{"stage": "research", "content": {"packages": [], "code": slow}}] * 3}))
    query = f"{QUERY[:-1]} ({tmp_path.name})."
    env = {key: value for key, value in os.environ.items() if not key.startswith("EVOSKILL_")}
    env |= {
        "PREFECT_API_URL": PREFECT_API_URL.value(), "PYTHONPATH": str(REPO), "EVOSKILL_WORKSPACE": str(tmp_path / "ws"),
        "EVOSKILL_CONFIG": str(tmp_path / "absent.toml"), "EVOSKILL_STORE": "memory", "EVOSKILL_STARTER_LIBRARY": "false",
        "EVOSKILL_LLM_BACKEND": "scripted", "EVOSKILL_LLM_SCRIPT": str(script), "EVOSKILL_TOOL_ROUNDS": "0", "EVOSKILL_SEARCH_PACKAGES": "[]",
        "EVOSKILL_TRIAGE_LLM": "false", "EVOSKILL_LEARN": "false", "EVOSKILL_SERVICE": service,
    }  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "flows.interfaces.cli.main", "solve", query], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=REPO, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 180
    while not _sleeping(mark):  # the generated code is running
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.2)
    time.sleep(1)
    os.killpg(proc.pid, signal.SIGINT)  # what the terminal sends its foreground process group on Ctrl-C
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stdout + stderr and stderr.rstrip().endswith("evoskill solve: cancelled"), stderr[-3000:]
    deadline = time.monotonic() + 5
    while left := _sleeping(mark):  # the generated code stopped too
        assert time.monotonic() < deadline, f"still running: {left}"
        time.sleep(0.2)
    if service == "true":  # the service's flow run ends Cancelled, not left Running
        deadline = time.monotonic() + 10
        while (state := _solve_run_state(query)) != "CANCELLED":
            assert time.monotonic() < deadline, f"the solve's flow run is {state}"
            time.sleep(0.2)
        assert _solve_run_state(query, "deep-solve") == "CANCELLED"  # and so is its deep-solve subflow


def _solve_run_state(query: str, flow: str = "solve") -> str | None:
    """The state of the newest ``solve`` flow run for ``query``, or of the ``deep-solve`` subflow under it."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.sorting import FlowRunSort

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(sort=FlowRunSort.START_TIME_DESC, limit=50)
        solves = [r for r in runs if r.parameters.get("query") == query and r.state is not None]
        if flow == "solve" or not solves:
            return solves[0].state.type.value if solves else None
        parent = solves[0].id
        subflows = [r for r in runs if r.name == flow and r.parent_task_run_id is not None and r.state is not None
                    and client.read_task_run(r.parent_task_run_id).flow_run_id == parent]  # fmt: skip
    return subflows[0].state.type.value if subflows else None


def _sleeping(mark: str) -> list[str]:
    """The processes running ``sleep MARK`` (the generated code, in whichever executor and namespace it runs)."""
    found = []
    for process in Path("/proc").iterdir():
        try:
            if process.name.isdigit() and (process / "cmdline").read_bytes() == f"sleep\0{mark}\0".encode():
                found.append(process.name)
        except OSError:
            pass
    return found


def test_prefect_imported_after_the_terminal_went_quiet_stays_quiet(tmp_path):
    """A command that imports Prefect only when it needs it: Prefect's own set-up on import is swapped too."""
    target = tmp_path / "evoskill.log"
    script = (
        "import logging, sys\n"
        "from flows.interfaces.cli.terminal import quiet_terminal\n"
        f"quiet_terminal(path={str(target)!r})\n"
        "assert 'prefect' not in sys.modules, 'quiet_terminal imported Prefect'\n"
        "from prefect.logging import get_logger\n"
        "get_logger('prefect.test').warning('said after Prefect was imported')\n"
        "from prefect.logging.configuration import setup_logging\n"
        "setup_logging(incremental=False)\n"
        "get_logger('prefect.test').warning('said after Prefect set itself up again')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    text = target.read_text()
    assert "said after Prefect was imported" in text and "said after Prefect set itself up again" in text


def test_help_and_listing_skills_import_neither_prefect_nor_dask(tmp_path):
    """The doors that only read start quickly: ``--help`` loads no pydantic, ``skills list`` no Prefect, Dask or jobflow."""
    script = (
        "import sys\n"
        "from flows.interfaces.cli.main import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [m for m in ('pydantic', 'prefect', 'distributed', 'jobflow', 'pymatgen') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "main(['skills', 'list'])\n"
        "heavy = [m for m in ('prefect', 'distributed', 'jobflow', 'bm25s') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "EVOSKILL_WORKSPACE": str(tmp_path / "ws")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "evoskill bench" not in done.stdout and "solve" in done.stdout  # the top-level help lists every command
