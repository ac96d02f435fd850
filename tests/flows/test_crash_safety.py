"""Kill the process (SIGKILL, no clean-up) at each stage of solve and learn, and mid-batch on Dask; then restart.

After every kill: the skills accepted before are all there and unchanged, every stored document is whole
(it validates), no file is half-written, and the work can be retried (a solve) or resumed (a batch).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prefect.settings import PREFECT_API_URL

from deployments.settings import get_settings
from flows.run_skill_batch import batch_answers, run_skill_batch
from flows.solve import solve
from skills.documents import BatchItem, MemoryUnit, Skill, SkillBatch, TestCase
from skills.params import signature_schema
from skills.store import open_store
from tests.codes import (
    N2_ANSWER,
    N2_CODE,
    N2_QUERY,
    N2_SKILL,
    N2_TYPO,
    O2_ANSWER,
    O2_QUERY,
)

REPO = Path(__file__).parents[2]
CLEAR = {"stage": "triage", "content": {"conflict": "", "question": ""}}
DRAFT = {"stage": "compile", "content": {"name": "EMT atomization energy", "description": "Atomization energy with EMT", "code": N2_SKILL}}

WATER = "def run(n: int = 1) -> float:\n    return round(n * 18.015, 3)\n"

# Runs a solve in a child process, SIGKILLing itself when ``target`` is called (before or after it runs).
CHILD = """
import os, signal, sys
import importlib
module_name, attribute = sys.argv[1].split(":")
when, only_type = sys.argv[2], sys.argv[3]
owner = importlib.import_module(module_name)
path = attribute.split(".")
for part in path[:-1]:
    owner = getattr(owner, part)
original = getattr(owner, path[-1])

def killing(*args, **kwargs):
    hit = not only_type or any(type(a).__name__ == only_type for a in args)
    if hit and when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    value = original(*args, **kwargs)
    if hit and when == "after":
        os.kill(os.getpid(), signal.SIGKILL)
    return value

setattr(owner, path[-1], killing)
from flows.solve import solve
from tests.codes import N2_QUERY
solve(N2_QUERY)
print("survived")
"""


@pytest.fixture
def monty(workspace, monkeypatch):
    """The embedded file-backed store, with one skill accepted before anything crashes."""
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    store = open_store(get_settings())
    seeded, _ = store.put_skill(Skill(
        name="seeded_before_the_crash", description="Formula mass of water in g/mol.", code=WATER, parameters=signature_schema(WATER),
        output_type="float", test_case=TestCase(params={"n": 1}, expected=18.015),
    ))  # fmt: skip
    return seeded


def _child_env() -> dict[str, str]:
    return {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PYTHONPATH": str(REPO)}


def _killed_at(target: str, when: str = "before", only_type: str = "") -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-c", CHILD, target, when, only_type], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env=_child_env())  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr  # it died where it was meant to
    return done


def assert_nothing_lost_or_half_written(seeded: Skill) -> None:
    settings = get_settings()
    store = open_store(settings)
    store.refresh()
    assert store.get_skill(seeded.id).model_dump(mode="json") == seeded.model_dump(mode="json")
    assert store.check() == []  # every document the killed process wrote is whole
    workspace = settings.workspace.resolve()
    assert [p.name for p in workspace.rglob("*.tmp")] == []
    for trajectory in (workspace / "trajectories").glob("*.json"):
        json.loads(trajectory.read_text())


def _retry_learns_once() -> None:
    result = solve(N2_QUERY)
    assert result.success and result.answer == N2_ANSWER
    store = open_store(get_settings())
    store.refresh()
    assert [s.id for s in store.all(Skill, {"name": "atomization_energy_ase_emt"})] == ["atomization_energy_ase_emt-v1"]
    assert store.count("memories", {"condition": N2_QUERY}) == 2


def test_killed_during_a_debug_branch(scripted, monty):
    replies = [CLEAR, {"stage": "research", "content": {"code": N2_TYPO}}] + [
        {"stage": f"debug:{s}", "content": {"code": N2_CODE}} for s in ("diagnostic", "introspection", "research")
    ]
    scripted(replies)
    _killed_at("tasks.debug:run_code")
    assert_nothing_lost_or_half_written(monty)
    assert open_store(get_settings()).count("skills", {"name": "atomization_energy_ase_emt"}) == 0
    scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}, DRAFT])
    _retry_learns_once()


def test_killed_between_verification_and_the_store_write(scripted, monty):
    scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}, DRAFT])
    _killed_at("skills.store:SkillStore.put_skill")
    assert_nothing_lost_or_half_written(monty)
    assert open_store(get_settings()).count("skills", {"name": "atomization_energy_ase_emt"}) == 0
    _retry_learns_once()


def test_killed_after_the_skill_before_its_memories(scripted, monty, monkeypatch):
    scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}, DRAFT])
    _killed_at("skills.store:SkillStore.put", only_type="MemoryUnit")
    assert_nothing_lost_or_half_written(monty)
    store = open_store(get_settings())
    store.refresh()
    assert store.get_skill("atomization_energy_ase_emt").version == 1  # the skill was written whole
    assert store.count("memories", {"condition": N2_QUERY}) == 0
    monkeypatch.setenv("EVOSKILL_USE_MEMORY", "false")  # solve with code again (the stored skill would answer it)
    _retry_learns_once()  # the same skill is known, not stored again; the memories are added


def test_killed_after_learning_before_the_trajectory_and_run_record(scripted, monty):
    scripted([CLEAR, {"stage": "research", "content": {"code": N2_CODE}}, DRAFT])
    _killed_at("flows.solve:write_atomic")
    assert_nothing_lost_or_half_written(monty)
    store = open_store(get_settings())
    store.refresh()
    assert store.get_skill("atomization_energy_ase_emt").version == 1 and store.count("memories", {"condition": N2_QUERY}) == 2
    assert store.count("runs") == 0 and not list((get_settings().workspace / "trajectories").glob("*.json"))
    scripted([])
    later = solve(O2_QUERY)  # what was learned before the crash answers the next question
    assert later.success and later.answer == O2_ANSWER and later.path == "skill" and later.skill_id == "atomization_energy_ase_emt-v1"


STORE_WRITER = """
import sys
from skills.documents import MemoryUnit
from skills.store import open_store
from deployments.settings import get_settings
store = open_store(get_settings())
print("ready", flush=True)
i = 0
while True:
    store.put(MemoryUnit(kind="execution", condition=f"torture {i}", subtask=f"torture {i}", solution="x = 1\\n" * 20000))
    i += 1
"""


def test_store_writes_are_atomic_per_document_under_kill_minus_nine(monty):
    """A writer is SIGKILLed at arbitrary moments, mid-write included; every document left behind is whole."""
    for delay in (0.3, 0.55, 0.8, 1.05, 1.3):
        writer = subprocess.Popen([sys.executable, "-c", STORE_WRITER], stdout=subprocess.PIPE, text=True, cwd=REPO, env=_child_env())
        assert writer.stdout.readline().strip() == "ready"
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    store = open_store(get_settings())
    store.refresh()
    written = store.all(MemoryUnit, {"subtask": {"$regex": "^torture"}})
    assert len(written) >= 5 and all(m.solution == "x = 1\n" * 20000 for m in written)
    assert_nothing_lost_or_half_written(monty)


SLOW_SKILL = "import time\n\n\ndef run(x: int = 1) -> int:\n    time.sleep(0.2)\n    return x + 1\n"

BATCH_CHILD = """
import sys
from distributed import LocalCluster
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
import os
os.environ["EVOSKILL_DASK_CLUSTER"] = "address"
os.environ["EVOSKILL_DASK_ADDRESS"] = cluster.scheduler_address
from flows.run_skill_batch import run_skill_batch
run_skill_batch("slow_add_one", [{"x": i} for i in range(40)], executor="dask")
print("survived")
"""


def test_killed_mid_batch_on_dask_then_resumed(monty):
    store = open_store(get_settings())
    skill, _ = store.put_skill(Skill(
        name="slow_add_one", description="Adds one, slowly.", code=SLOW_SKILL, parameters=signature_schema(SLOW_SKILL),
        output_type="int", test_case=TestCase(params={"x": 1}, expected=2),
    ))  # fmt: skip
    child = subprocess.Popen([sys.executable, "-c", BATCH_CHILD], cwd=REPO, env=_child_env(), start_new_session=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    deadline, done = time.monotonic() + 240, 0
    while time.monotonic() < deadline and done < 8:
        time.sleep(0.2)
        store.refresh()
        done = store.count("batch_items", {"status": "done"})
        assert child.poll() is None, child.stderr.read().decode()[-2000:]
    os.killpg(child.pid, signal.SIGKILL)  # the process and its Dask cluster, mid-batch
    child.wait()
    assert 8 <= done < 40

    batch = store.all(SkillBatch)[0]
    items = store.all(BatchItem, {"batch_id": batch.id})
    assert len(items) == 40  # every item was stored before anything ran
    finished_before = {i.index for i in items if i.status == "done"}
    assert len(finished_before) < 40
    assert_nothing_lost_or_half_written(monty)

    resumed = run_skill_batch(batch_id=batch.id, executor="local")
    assert resumed.ran == 40 - len(finished_before) and resumed.done == 40 and resumed.failed == 0
    answers = batch_answers(store, batch.id)
    assert [answer for _, answer in answers] == [i + 1 for i in range(40)]
    assert store.get_skill(skill.id).stats.uses >= resumed.ran
