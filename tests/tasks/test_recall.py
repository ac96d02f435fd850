"""Recall is scoped to the user: their memories and preferences, and everyone's; never another user's."""

from deployments.settings import get_settings
from skills.documents import Preference
from skills.store import open_store
from tasks.recall import recall
from tasks.tools.memory import save_to_memory


def test_recall_sees_own_and_shared_memories_and_own_preferences(workspace):
    settings = get_settings()
    store = open_store(settings)
    query = "relax a copper cell with EMT and report the lattice constant"
    save_to_memory(store, "execution", query, "# shared starter code")
    save_to_memory(store, "execution", query, "# ada's code", user="ada")
    save_to_memory(store, "execution", query, "# bob's code", user="bob")
    store.put(Preference(key="unit", value="eV", user="ada"))
    store.put(Preference(key="unit", value="kJ/mol", user="bob"))

    found = recall.fn(query, store, settings, "ada")
    assert sorted(hit.memory.solution for hit in found.memories) == ["# ada's code", "# shared starter code"]
    assert [(p.key, p.value) for p in found.preferences] == [("unit", "eV")]
    assert "User preference unit: eV" in found.context() and "bob" not in found.context()
    assert len({p.id for p in store.all(Preference)}) == 2  # one key, two users: two documents
