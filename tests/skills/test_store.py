"""SkillStore on real maggma stores: validation both ways, idempotent writes, versions, concurrency, bad paths."""

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from deployments.settings import Settings
from skills.documents import Experience, Skill, TestCase
from skills.store import (
    COLLECTIONS,
    SkillStore,
    StoreDocumentError,
    StoreError,
    open_store,
)

ROOT = Path(__file__).parents[2]


def make_skill(code: str = "def run(x: int = 1) -> int:\n    return x + 1\n", name: str = "add_one") -> Skill:
    return Skill(name=name, description="adds one to x", code=code, test_case=TestCase(params={"x": 1}, expected=2))


@pytest.fixture(params=["memory", "monty"])
def store(request, tmp_path) -> SkillStore:
    return open_store(Settings(store=request.param, workspace=tmp_path / "ws"))


def test_same_skill_twice_is_one_document_and_new_code_a_new_version(store):
    first, new = store.put_skill(make_skill())
    again, new_again = store.put_skill(make_skill())
    assert (first.id, new, again.id, new_again) == ("add_one-v1", True, "add_one-v1", False)
    second, _ = store.put_skill(make_skill("def run(x: int = 1) -> int:\n    return 1 + x\n"))
    assert second.id == "add_one-v2" and store.count("skills") == 2
    assert store.get_skill("add_one").id == "add_one-v2" and store.get_skill("add_one-v1").version == 1
    assert [s.id for s in store.latest_skills()] == ["add_one-v2"]
    assert store.delete_skill("add_one") == 2 and store.count("skills") == 0


def test_documents_round_trip_through_their_models(store):
    experience = Experience(query="q", path="deep", verdict="failed", reasons=["r"])
    store.put(experience)
    store.put(experience)  # idempotent: the id is the content hash
    assert store.all(Experience) == [experience] and store.get(Experience, experience.id) == experience


def test_an_invalid_document_is_named_and_the_rest_stay_usable(store):
    store.put_skill(make_skill())
    assert store.check() == []
    store.store("skills").update([{"id": "broken-v1", "name": "Broken Name!", "code": ""}], key="id")
    assert [s.id for s in store.latest_skills()] == ["add_one-v1"]
    assert any("'broken-v1'" in p and "name" in p for p in store.problems)
    with pytest.raises(StoreDocumentError, match="skills document 'broken-v1' is invalid"):
        store.get_skill("broken-v1")
    (problem,) = store.check()  # every collection read: the one broken document, once
    assert problem.startswith("skills document 'broken-v1' is invalid")


def test_missing_skill_is_a_clear_key_error(store):
    with pytest.raises(KeyError, match="no skill 'nothing'"):
        store.get_skill("nothing")


def test_concurrent_saves_of_one_skill_store_one_version(store):
    threads = [threading.Thread(target=store.put_skill, args=(make_skill(),)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.count("skills") == 1


def test_reads_and_writes_from_many_threads_at_once(store):
    """montydb's SQLite engine shares a connection between threads: the store serialises its calls."""
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(15):
                store.put(Experience(query=f"worker {worker} question {i}", path="deep", verdict="failed", reasons=["x"]))
                store.count("experiences")
                store.all(Experience, {"verdict": "failed"})
                store.count("skills")  # a collection no one has written yet
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and store.count("experiences") == 12 * 15


def test_opening_a_monty_store_creates_every_collection_with_its_table(tmp_path):
    """A reader in another process never finds a collection file without its table."""
    import sqlite3

    store = open_store(Settings(store="monty", workspace=tmp_path / "ws"))
    files = sorted((tmp_path / "ws" / "store" / "evoskill").glob("*.collection"))
    assert len(files) == len(COLLECTIONS) + 1  # and the JobStore's
    for path in files:
        with sqlite3.connect(path) as connection:
            assert connection.execute("select count(*) from documents").fetchone() == (0,)
    assert store.count("skills") == 0


def test_two_processes_saving_at_once_lose_nothing(tmp_path):
    program = (
        "import sys\n"
        "from skills.documents import Skill, TestCase\n"
        "from skills.store import open_store\n"
        "from deployments.settings import Settings\n"
        f"store = open_store(Settings(store='monty', workspace={str(tmp_path / 'ws')!r}))\n"
        "for extra in ['', sys.argv[1]]:\n"
        "    code = 'def run(x: int = 1) -> int:\\n    return x + 1\\n' + extra\n"
        "    store.put_skill(Skill(name='add_one', code=code, test_case=TestCase(params={'x': 1}, expected=2)))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", program, f"# process {i}\n"], cwd=ROOT) for i in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    store = open_store(Settings(store="monty", workspace=tmp_path / "ws"))
    skills = store.all(Skill)
    # The shared skill once, and each process's own variant as its own version: 1 to 5.
    assert sorted(s.version for s in skills) == [1, 2, 3, 4, 5]
    assert len({s.content_hash for s in skills}) == 5


def test_unwritable_store_path_is_reported(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(StoreError, match="EVOSKILL_STORE_PATH"):
        open_store(Settings(store="monty", store_path=blocker / "store", workspace=tmp_path))


def test_unknown_store_setting_is_reported(tmp_path):
    with pytest.raises(StoreError, match="'postgres' is not a store"):
        open_store(Settings(store="postgres", workspace=tmp_path))


def test_skill_search_ranks_by_similarity(store):
    store.put_skill(make_skill())
    store.put_skill(
        Skill(name="rdkit_fragments", description="count RDKit fragments of a SMILES", code="def run() -> int:\n    return 40\n",
              test_case=TestCase(expected=40))
    )
    [(skill, similarity)] = store.search_skills("How many RDKit fragments has the SMILES CCO?", k=1)
    assert skill.name == "rdkit_fragments" and 0 < similarity <= 1
    assert store.search_skills("band gap of silicon", threshold=0.2) == []


def test_a_batch_of_job_outputs_upserts_like_one_document_at_a_time(tmp_path):
    """The file-backed store writes a batch in one pass; what it holds afterwards is what document-by-document upserts give."""
    first = [{"uuid": f"u{i}", "index": 1, "output": i} for i in range(20)]
    second = [{"uuid": f"u{i}", "index": 1, "output": -i} for i in range(10, 30)]  # ten replace, ten are new
    second += [{"uuid": "u5", "index": 2, "output": 55}, {"uuid": "u29", "index": 1, "output": 290}]  # a new index; a key twice: the last wins
    held = {}
    for kind in ("monty", "memory"):
        jobs = open_store(Settings(workspace=tmp_path / kind, store=kind)).job_store()
        jobs.connect()
        jobs.update(first, key=["uuid", "index"])
        jobs.update(second, key=["uuid", "index"])
        held[kind] = sorted((d["uuid"], d["index"], d["output"]) for d in jobs.docs_store.query({}))
    reopened = open_store(Settings(workspace=tmp_path / "monty", store="monty")).job_store()
    reopened.connect()  # the rewritten documents are on disk, not only in this process's view
    assert sorted((d["uuid"], d["index"], d["output"]) for d in reopened.docs_store.query({})) == held["monty"]
    assert held["monty"] == held["memory"]
    assert len(held["monty"]) == 31 and ("u15", 1, -15) in held["monty"] and ("u29", 1, 290) in held["monty"] and ("u3", 1, 3) in held["monty"]


def test_a_key_stored_twice_is_rewritten_where_it_is_read(tmp_path):
    """A batch write rewrites the first stored document of a key, the one queries read, as one-at-a-time upserts do."""
    jobs = open_store(Settings(workspace=tmp_path / "ws", store="monty")).job_store()
    jobs.connect()
    jobs.docs_store._collection.insert_many([{"uuid": "a", "index": 1, "output": 0}, {"uuid": "a", "index": 1, "output": 1}])
    jobs.update([{"uuid": "a", "index": 1, "output": 99}] + [{"uuid": f"b{i}", "index": 1, "output": i} for i in range(8)], key=["uuid", "index"])
    assert jobs.docs_store.query_one({"uuid": "a", "index": 1})["output"] == 99
