"""The warm executor: runs forked from a process with the heavy packages imported, each as contained as a cold run.

The containment itself is tested by ``test_attacks.py`` under both executors; here: what a fork must not
carry from one run to the next, what happens when a run or the executor itself dies, and the fallbacks.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from deployments.sandbox import execute, warm
from deployments.sandbox.execute import SandboxLimits, isolation_report, run_code, warm_up
from deployments.sandbox.models import ExecutionResult


@pytest.fixture(params=["bwrap", "unshare"])
def limits(request: pytest.FixtureRequest) -> SandboxLimits:
    """Limits of a warm run under each isolation with namespaces, the executor started and ready."""
    if not isolation_report(wanted=request.param)["namespaces"]:
        pytest.skip(f"{request.param} isolation is not available here")
    chosen = SandboxLimits(isolation=request.param, wall_s=20, warm=True)
    assert warm_up(chosen), "the warm executor did not start"
    return chosen


def _executor(limits: SandboxLimits) -> execute.WarmExecutor:
    found = execute._executor_for(execute._isolation(limits.isolation, limits.network), limits)
    assert found is not None
    return found


def test_a_warm_run_answers_with_the_packages_already_imported(limits, tmp_path):
    code = (
        "import json, sys\n"
        "before = sorted(m for m in ('numpy', 'ase', 'pymatgen.core', 'spglib') if m in sys.modules)\n"
        "from pymatgen.core import Lattice, Structure\n"
        "s = Structure(Lattice.cubic(5.64), ['Na'] * 4 + ['Cl'] * 4, [[0, 0, 0], [0, .5, .5], [.5, 0, .5], [.5, .5, 0],"
        " [.5, .5, .5], [.5, 0, 0], [0, .5, 0], [0, 0, .5]])\n"
        "open('structure.json', 'w').write(s.to_json())\n"
        "print(json.dumps([before, round(s.density, 4)]))\n"
    )
    result = run_code(code, tmp_path, limits)
    assert result.ok, result.error
    assert result.executor == "warm"
    assert result.answer == [["ase", "numpy", "pymatgen.core", "spglib"], 2.1637]
    assert json.loads((Path(result.workdir) / "structure.json").read_text())["@class"] == "Structure"  # its files are kept


def test_a_package_the_executor_did_not_import_is_imported_by_the_run(limits, tmp_path):
    result = run_code("import json, sys, sqlite3, fractions\nprint(json.dumps('fractions' in sys.modules))\n", tmp_path, limits)
    assert result.ok and result.executor == "warm" and result.answer is True


def _wait_for_one_holding(limits: SandboxLimits, modules: set[str], code: str | None = None) -> None:
    """Wait (up to 120 s) until an executor of these limits' isolation has imported ``modules``; meanwhile ask for one
    again with each run of ``code`` (another one starting, as an earlier test's may, defers a start)."""
    deadline = time.monotonic() + 120
    while not any(execute._profile(e).kind == limits.isolation and e.holds(frozenset(modules)) for e in warm.executors()):
        assert time.monotonic() < deadline, f"no {limits.isolation} executor imported {sorted(modules)}"
        if code is not None:
            execute._executor_for(execute._isolation(limits.isolation, limits.network), limits, code)
        time.sleep(0.2)


@pytest.fixture
def extras_at_once(monkeypatch):
    """Executors beyond the packages' start without the pause between two starts (each test starts its own)."""
    monkeypatch.setattr(warm, "_EXTRA_EVERY_S", 0.0)


def test_code_whose_imports_were_asked_before_gets_an_executor_that_has_them(limits, tmp_path, extras_at_once):
    code = (
        "import json, sys\nbefore = 'pymatgen.io.vasp' in sys.modules\n"
        "from pymatgen.core import Lattice, Structure\nfrom pymatgen.io.vasp import Poscar\n"
        "print(json.dumps([before, str(Poscar(Structure(Lattice.cubic(4.2), ['Na', 'Cl'], [[0, 0, 0], [.5, .5, .5]]))).split()[0]]))\n"
    )
    assert "pymatgen.io.vasp" not in limits.warm_packages
    for _ in range(2):  # once (a verification run), twice (its first answer): the packages' executor, importing it; one starts
        first = run_code(code, tmp_path, limits)
        assert first.ok and first.executor == "warm" and first.answer == [False, "Na1"], first.error
    _wait_for_one_holding(limits, {"pymatgen.io.vasp"}, code)
    later = run_code(code, tmp_path, limits)
    assert later.ok and later.executor == "warm" and later.answer == [True, "Na1"], later.error
    assert run_code("import json, sys\nprint(json.dumps('pymatgen.io.vasp' in sys.modules))\n", tmp_path, limits).answer is False  # others stay


def test_a_run_never_lands_on_an_executor_started_for_other_codes_imports(limits, tmp_path, extras_at_once):
    planted = "import json\nif False:\n    import pymatgen.io.vasp, rdkit.Chem.MCS\nprint(json.dumps(1))\n"
    for _ in range(2):
        assert run_code(planted, tmp_path, limits).answer == 1
    _wait_for_one_holding(limits, {"pymatgen.io.vasp", "rdkit.Chem.MCS"}, planted)
    victim = "import json, sys\nimport pymatgen.io.vasp\nprint(json.dumps('rdkit.Chem.MCS' in sys.modules))\n"
    for _ in range(3):
        result = run_code(victim, tmp_path, limits)
        assert result.ok and result.answer is False, result.error  # never forked from the planted executor


def test_executors_beyond_the_packages_start_one_at_a_time_and_few_are_kept(limits, tmp_path):
    kind = execute._isolation(limits.isolation, limits.network)
    before = {id(e) for e in warm.executors()}
    modules = ["pymatgen.io.vasp", "pymatgen.io.xyz", "pymatgen.io.pwscf", "pymatgen.io.lammps.data", "pymatgen.io.gaussian"]
    threads = [threading.Thread(target=lambda m=m: [execute._executor_for(kind, limits, f"import {m}\n") for _ in range(2)]) for m in modules]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    started = [e for e in warm.executors() if id(e) not in before]
    assert len(started) <= 1, [execute._profile(e).packages[-1] for e in started]  # one at a time, and not again within the pause
    assert _executor(limits).alive()  # the packages' executor is never stopped for them


def test_an_executor_stopped_while_it_starts_is_ended_and_never_ready(tmp_path):
    gate, launched = threading.Event(), []

    def launch(sock: int) -> subprocess.Popen[bytes]:
        gate.wait(10)
        proc = subprocess.Popen(["sleep", "60"], stderr=subprocess.PIPE, pass_fds=[sock], start_new_session=True)
        launched.append(proc)
        return proc

    executor = warm.WarmExecutor("stopped-while-starting", launch, lambda _: None, warm.RunCgroups)
    stopper = threading.Thread(target=executor.stop)
    stopper.start()
    time.sleep(0.2)
    gate.set()
    stopper.join(10)
    assert executor.ready.wait(30) and executor.state == "stopped" and not executor.alive()
    assert all(proc.wait(10) is not None for proc in launched)  # nothing it launched runs on


def test_an_executor_started_for_stored_skills_code_answers_their_first_run(limits, tmp_path, extras_at_once):
    skills = [
        "def run():\n    from pymatgen.analysis.bond_valence import BVAnalyzer\n    return 1\n",
        "import json, sys\nbefore = ['pymatgen.analysis.bond_valence' in sys.modules, 'pymatgen.io.vasp' in sys.modules]\n"
        "from pymatgen.io.vasp import Poscar\nprint(json.dumps(before))\n",
    ]
    assert not execute.warm_up_for(["import json\nfrom rdkit.Chem import Descriptors\n"], limits)  # the packages' executor holds it
    deadline = time.monotonic() + 60
    while not execute.warm_up_for(skills, limits):  # deferred while another extra executor starts (an earlier test's)
        assert time.monotonic() < deadline, "no executor started for the stored skills' imports"
        time.sleep(0.2)
    _wait_for_one_holding(limits, {"pymatgen.analysis.bond_valence", "pymatgen.io.vasp"})
    result = run_code(skills[1], tmp_path, limits)
    assert result.ok and result.executor == "warm" and result.answer == [True, True], result.error


def test_matplotlib_imported_by_the_executor_draws_in_a_run(limits, tmp_path):
    code = (
        "import json, sys\nbefore = 'matplotlib.pyplot' in sys.modules\nimport matplotlib.pyplot as plt\n"
        "plt.plot([0, 1], [1, 0])\nplt.savefig('plot.png')\nprint(json.dumps(before))\n"
    )
    # Under unshare the executor has no writable folder for matplotlib's font cache: its import failed there, leaving
    # nothing half-imported, and the run imports it itself.
    held = _executor(limits).holds(frozenset({"matplotlib.pyplot"}))
    assert held or limits.isolation == "unshare"
    result = run_code(code, tmp_path, limits)
    assert result.ok and result.executor == "warm" and result.answer is held, result.error
    assert (Path(result.workdir) / "plot.png").read_bytes().startswith(b"\x89PNG")


def test_what_a_run_changes_in_modules_does_not_reach_the_next_run(limits, tmp_path):
    tamper = (
        "import json, sys, numpy, ase\n"
        "numpy.pi = 3.0\n"
        "numpy.linalg.det = lambda a: 42.0\n"
        "sys.modules['ase'] = None\n"
        "sys.modules['evoskill_planted'] = type(sys)('evoskill_planted')\n"
        "import builtins\nbuiltins.len = lambda x: -1\n"
        "print(json.dumps('tampered'))\n"
    )
    check = (
        "import json, sys, numpy\n"
        "import ase\n"
        "print(json.dumps([numpy.pi, float(numpy.linalg.det(numpy.eye(2))), ase.__name__, 'evoskill_planted' in sys.modules, len([1, 2])]))\n"
    )
    assert run_code(tamper, tmp_path, limits).answer == "tampered"
    result = run_code(check, tmp_path, limits)
    assert result.ok and result.executor == "warm"
    assert result.answer == [3.141592653589793, 1.0, "ase", False, 2]


def test_each_run_draws_its_own_random_numbers(limits, tmp_path):
    code = "import json, random, numpy\nprint(json.dumps([random.random(), float(numpy.random.rand())]))\n"
    draws = [run_code(code, tmp_path, limits).answer for _ in range(3)]
    assert len({d[0] for d in draws}) == 3 and len({d[1] for d in draws}) == 3  # not the executor's sequence, replayed


def _side_by_side(holding: str, looking: str, run_root: Path, limits: SandboxLimits) -> tuple[ExecutionResult, ExecutionResult]:
    """Run ``holding``, and while it runs, ``looking``: both results."""
    held: list[ExecutionResult] = []
    thread = threading.Thread(target=lambda: held.append(run_code(holding, run_root, limits)))
    thread.start()
    time.sleep(0.3)
    looked = run_code(looking, run_root, limits)
    thread.join()
    return held[0], looked


def test_runs_at_the_same_time_see_neither_each_others_files_nor_processes(limits, tmp_path):
    secret = "import json, os, time\nopen('secret.txt', 'w').write('mine')\nopen('/tmp/scratch.txt', 'w').write('mine')\ntime.sleep(3)\nprint(json.dumps(os.getpid()))\n"
    look = (
        "import json, os, time\ntime.sleep(0.5)\n"
        "seen = [os.path.exists('secret.txt'), os.path.exists('/tmp/scratch.txt'), sorted(os.listdir('.')),"
        " sorted(p for p in os.listdir('/proc') if p.isdigit())]\n"
        "print(json.dumps(seen))\n"
    )
    holder, other = _side_by_side(secret, look, tmp_path, limits)
    assert other.ok and other.executor == "warm"
    assert other.answer == [False, False, ["main.py", "tmp"], ["1"]]  # its own folder, /tmp and PID namespace
    assert holder.answer == 1


def test_a_run_killed_at_the_wall_clock_limit_leaves_the_executor_serving(limits, tmp_path):
    executor = _executor(limits)
    pid = executor.pid
    stuck = run_code("while True:\n    pass\n", tmp_path, SandboxLimits(**{**limits.__dict__, "wall_s": 1.0}))
    assert not stuck.ok and stuck.timed_out and stuck.executor == "warm" and "1 s wall-clock limit" in stuck.error
    after = run_code("import json\nprint(json.dumps('still here'))\n", tmp_path, limits)
    assert after.ok and after.executor == "warm" and after.answer == "still here"
    assert _executor(limits).pid == pid  # the same executor


def test_a_run_cannot_signal_or_see_the_executor(limits, tmp_path):
    code = (
        "import json, os, signal\nsent = []\n"
        "for pid in range(2, 50):\n"
        "    try:\n"
        "        os.kill(pid, signal.SIGKILL)\n"
        "        sent.append(pid)\n"
        "    except OSError:\n"
        "        pass\n"
        "print(json.dumps([sent, os.getppid()]))\n"
    )
    result = run_code(code, tmp_path, limits)
    assert result.ok and result.answer == [[], 0]  # alone in its PID namespace: no parent, nobody to signal
    assert run_code("import json\nprint(json.dumps(1))\n", tmp_path, limits).executor == "warm"


def _processes_under(pid: int) -> set[int]:
    import psutil

    return {child.pid for child in psutil.Process(pid).children(recursive=True)}


def _wait_for_a_run(pid: int, before: set[int], timeout: float = 30.0) -> None:
    """Until a process the executor ``pid`` did not have ``before`` appears under it (the run, forked), then a moment more."""
    deadline = time.monotonic() + timeout
    while not _processes_under(pid) - before:
        assert time.monotonic() < deadline, "the run never reached the executor"
        time.sleep(0.05)
    time.sleep(0.5)


def test_the_executor_killed_mid_run_fails_that_run_clearly_and_the_next_run_still_answers(limits, tmp_path, caplog):
    executor = _executor(limits)
    outcome: dict[str, object] = {}
    running = threading.Thread(target=lambda: outcome.setdefault("run", run_code("import time\ntime.sleep(20)\n", tmp_path, limits)))
    idle = _processes_under(executor.pid)  # type: ignore[arg-type]  # a started executor has a pid
    running.start()
    _wait_for_a_run(executor.pid, idle)  # type: ignore[arg-type]  # the run is the executor's child by now (a fixed pause was too short on a busy machine)
    with caplog.at_level(logging.WARNING, logger="deployments.sandbox"):
        os.killpg(executor.pid, signal.SIGKILL)  # type: ignore[arg-type]  # started in its own session
        running.join(timeout=30)
        deadline = time.monotonic() + 30  # the executor's own thread notices the end and warns (late on a busy machine)
        while not any("the warm executor stopped" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
            time.sleep(0.05)
    lost = outcome["run"]
    assert not lost.ok and not lost.timed_out and lost.executor == "warm"  # type: ignore[attr-defined]
    assert "the warm executor stopped during the run" in lost.stderr  # type: ignore[attr-defined]
    assert any("the warm executor stopped" in r.getMessage() for r in caplog.records)
    after = run_code("import json\nprint(json.dumps('answered'))\n", tmp_path, limits)  # cold while a new executor starts
    assert after.ok and after.answer == "answered"
    assert warm_up(limits) and _executor(limits).pid != executor.pid
    assert run_code("import json\nprint(json.dumps(1))\n", tmp_path, limits).executor == "warm"


def test_an_executor_that_cannot_start_leaves_runs_cold_with_one_warning(tmp_path, monkeypatch, caplog):
    def broken(kind, limits, view):
        def launch(sock):
            import subprocess

            return subprocess.Popen(["/bin/sh", "-c", "echo 'cannot import the packages' >&2; exit 3"], stderr=subprocess.PIPE, pass_fds=[sock])

        return launch

    monkeypatch.setattr(execute, "_launch_warm", broken)
    limits = SandboxLimits(wall_s=20, warm=True, warm_packages=("json",))  # a profile of its own
    with caplog.at_level(logging.WARNING, logger="deployments.sandbox"):
        assert warm_up(limits) is False
        results = [run_code("import json\nprint(json.dumps(7))\n", tmp_path, limits) for _ in range(3)]
    assert [(r.ok, r.answer, r.executor) for r in results] == [(True, 7, "cold")] * 3
    warnings = [r.getMessage() for r in caplog.records if "warm executor" in r.getMessage()]
    assert warnings == ["sandbox: warm executor unavailable (cannot import the packages); runs start cold"]


def test_warm_off_runs_cold(tmp_path):
    result = run_code("import json\nprint(json.dumps(1))\n", tmp_path, SandboxLimits(warm=False))
    assert result.ok and result.executor == "cold"


def _warm_groups() -> set[Path]:
    root = Path("/sys/fs/cgroup")
    while True:
        try:
            return set(root.glob("**/evoskill-warm-*")) if root.is_dir() else set()
        except FileNotFoundError:  # a group went (a run ended) while the tree was read: read it again
            continue


def test_warm_runs_leave_no_cgroup_behind(limits, tmp_path):
    controllers = [name for name, there in execute.cgroup_support().items() if there]
    if not controllers:
        pytest.skip("no cgroups here")
    executor = _executor(limits)
    waiting = {Path(g) for g in executor.waiting_cgroups}
    assert len(waiting) == len(controllers)
    assert all(len((g / "cgroup.procs").read_text().split()) == 2 for g in waiting)  # the next run's process and its runner, ready in its groups
    before = _warm_groups()
    for _ in range(5):
        assert run_code("import json\nprint(json.dumps(1))\n", tmp_path, limits).executor == "warm"
    deadline = time.monotonic() + 15  # a run's groups go with its process, which the kernel reaps a moment after it ends
    while (waiting & (after := _warm_groups()) or _left_behind(after - before, executor)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (waiting & after)  # the groups the first of these runs took are gone with it
    assert not _left_behind(after - before, executor)  # of the groups made for the five runs, only the next run's remain
    assert {Path(g) for g in executor.waiting_cgroups} <= after


def _left_behind(made: set[Path], executor) -> set[Path]:
    """Groups made since, other than the executor's next run's, that no process is in: left behind by a run that ended. (A
    group with processes in it is a live run's, of this executor or of another on the machine, and not left behind.)"""
    def empty(group: Path) -> bool:
        try:
            return not (group / "cgroup.procs").read_text().split()
        except OSError:  # removed meanwhile: not left behind
            return False

    return {g for g in made - {Path(w) for w in executor.waiting_cgroups} if empty(g)}


_REPORT_TAMPERING = (
    "import os, socket, time\n"
    "for fd in [int(name) for name in os.listdir('/proc/self/fd')]:\n"
    "    try:\n"
    "        if os.readlink(f'/proc/self/fd/{fd}').startswith('socket:'):\n"
    "            link = socket.socket(fileno=fd)\n"
    "            link.send(SAID)\n"
    "            link.close()\n"
    "    except OSError:\n"
    "        pass\n"
    "time.sleep(6)\n"
)


@pytest.mark.parametrize("said", [b"", b"--1", b"not a code", b"999"])
def test_a_run_cannot_switch_off_its_wall_clock_through_the_socket_it_reports_on(limits, tmp_path, said):
    started = time.perf_counter()
    result = run_code(_REPORT_TAMPERING.replace("SAID", repr(said)), tmp_path, SandboxLimits(**{**limits.__dict__, "wall_s": 1.5}))
    assert result.executor == "warm" and result.timed_out and not result.ok and "1.5 s wall-clock limit" in result.error
    assert time.perf_counter() - started < 5
    assert run_code("import json\nprint(json.dumps(1))\n", tmp_path, limits).answer == 1


def test_a_run_does_not_see_the_terminals_of_a_run_at_the_same_time(limits, tmp_path):
    if limits.isolation != "bwrap":
        pytest.skip("the unshare view has no terminals at all (cold runs neither)")
    holder = "import json, os, time\nmaster, slave = os.openpty()\nos.write(master, b'from the other run\\n')\ntime.sleep(3)\nprint(json.dumps(os.ttyname(slave)))\n"
    look = "import json, os, time\ntime.sleep(0.8)\nprint(json.dumps(sorted(os.listdir('/dev/pts'))))\n"
    held, other = _side_by_side(holder, look, tmp_path, limits)
    assert held.ok and held.answer.startswith("/dev/pts/")
    assert other.ok and other.answer == ["ptmx"]  # terminals of its own: none open
