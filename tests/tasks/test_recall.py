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


def test_only_skills_close_enough_are_tried_and_parameterless_ones_must_match_closer(workspace):
    from skills.documents import Skill, TestCase
    from tasks.models import Recall, SkillMatch

    settings = get_settings()
    with_params = Skill(name="p", code="def run(x: float = 1.0):\n    return x\n", parameters={"properties": {"x": {"type": "number", "default": 1.0}}}, test_case=TestCase(expected=1.0))
    without = Skill(name="q", code="def run():\n    return 1\n", test_case=TestCase(expected=1))
    found = Recall(skills=[SkillMatch(skill=s, similarity=v) for s, v in [(without, 0.95), (with_params, 0.6), (without, 0.5), (with_params, 0.2), (with_params, 0.1)]])
    tried = [(m.skill.name, m.similarity) for m in found.usable_skills(settings)]
    assert settings.skill_match_threshold == 0.15 and settings.skill_exact_threshold == 0.6
    assert tried == [("q", 0.95), ("p", 0.6), ("p", 0.2)]  # not the parameterless one at 0.5, not anything below 0.15
