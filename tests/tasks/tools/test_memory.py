"""Memory tools over a real store: planning and execution memories persist, knowledge does not."""

from deployments.settings import get_settings
from skills.store import open_store
from tasks.tools.memory import TaskKnowledge, save_to_memory, search_memory
from tasks.tools.registry import ToolBox


def test_saved_memories_are_found_by_kind_above_the_threshold(workspace):
    store = open_store(get_settings())
    save_to_memory(store, "execution", "count RDKit fragments of a SMILES", "from rdkit import Chem")
    save_to_memory(store, "execution", "count RDKit fragments of a SMILES", "from rdkit import Chem")  # kept once
    save_to_memory(store, "planning", "count RDKit fragments of a SMILES", "use FragmentCatalog with FunctionalGroups.txt")
    assert store.count("memories") == 2
    hits = search_memory(store, "RDKit fragments of the SMILES CCO", kind="planning", user="local")
    assert [h.memory.kind for h in hits] == ["planning"] and 0 < hits[0].similarity <= 1
    assert search_memory(store, "RDKit fragments of the SMILES CCO", threshold=0.99, user="local") == []
    assert search_memory(store, "phonon band structure of silicon", user="local") == []


def test_knowledge_stays_with_the_task(workspace):
    store = open_store(get_settings())
    notes = TaskKnowledge()
    assert save_to_memory(store, "knowledge", "atomization energy", "sum of atom energies minus the molecule's", knowledge=notes) is None
    assert notes.notes == ["atomization energy: sum of atom energies minus the molecule's"]
    assert store.count("memories") == 0


def test_the_toolbox_binds_the_caller_so_alice_memory_never_reaches_bob(workspace):
    settings = get_settings()
    store = open_store(settings)
    query = "relax a copper cell with EMT and report the lattice constant"
    save_to_memory(store, "execution", query, "# ALICE-CANARY alice's code", user="alice")
    save_to_memory(store, "execution", query, "# shared starter code")
    alice, bob = ToolBox(settings, store, user="alice"), ToolBox(settings, store, user="bob")
    for tool in ("search_memory", "save_to_memory"):
        assert "user" not in bob.tools[tool].arguments_model().model_json_schema()["properties"]
    found = bob.call("search_memory", query=query, k=10, threshold=0.0)
    assert found.ok and [h.memory.solution for h in found.value] == ["# shared starter code"]
    as_alice = bob.call("search_memory", query=query, user="alice")
    assert not as_alice.ok and "ALICE-CANARY" not in (as_alice.error or "") + as_alice.output
    assert not bob.call("save_to_memory", kind="execution", subtask=query, solution="# planted", user="alice").ok
    assert bob.call("save_to_memory", kind="execution", subtask=query, solution="# bob's code").value.user == "bob"
    assert {h.memory.solution for h in alice.call("search_memory", query=query, k=10, threshold=0.0).value} == {
        "# ALICE-CANARY alice's code", "# shared starter code"}  # fmt: skip
