"""Memory tools over a real store: planning and execution memories persist, knowledge does not."""

from deployments.settings import get_settings
from skills.store import open_store
from tasks.tools.memory import TaskKnowledge, save_to_memory, search_memory


def test_saved_memories_are_found_by_kind_above_the_threshold(workspace):
    store = open_store(get_settings())
    save_to_memory(store, "execution", "count RDKit fragments of a SMILES", "from rdkit import Chem")
    save_to_memory(store, "execution", "count RDKit fragments of a SMILES", "from rdkit import Chem")  # kept once
    save_to_memory(store, "planning", "count RDKit fragments of a SMILES", "use FragmentCatalog with FunctionalGroups.txt")
    assert store.count("memories") == 2
    hits = search_memory(store, "RDKit fragments of the SMILES CCO", kind="planning")
    assert [h.memory.kind for h in hits] == ["planning"] and 0 < hits[0].similarity <= 1
    assert search_memory(store, "RDKit fragments of the SMILES CCO", threshold=0.99) == []
    assert search_memory(store, "phonon band structure of silicon") == []


def test_knowledge_stays_with_the_task(workspace):
    store = open_store(get_settings())
    notes = TaskKnowledge()
    assert save_to_memory(store, "knowledge", "atomization energy", "sum of atom energies minus the molecule's", knowledge=notes) is None
    assert notes.notes == ["atomization energy: sum of atom energies minus the molecule's"]
    assert store.count("memories") == 0
