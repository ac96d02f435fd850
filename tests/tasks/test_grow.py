"""Skills grow by evidence: a near miss whose answer agrees with the accepted one learns the question's wording; one whose
answer disagrees learns nothing. Real store, real sandbox runs of the starter atomization skill."""

import pytest

from deployments.settings import get_settings
from skills.answer_spec import read_answer_spec
from skills.binding import BindingDeclined, bind
from skills.disclosure import shared_view
from skills.store import open_store
from tasks.bind import choose_skill
from tasks.grow import grow_near_misses
from tasks.models import SkillMatch, SolveRequest
from tests.starter import emt_atomization, starter_skill

# Every value binds (CO to formula); only words the skill was not verified on ("total") stand in the way.
CO = (
    "What is the total binding energy of a carbon monoxide molecule CO with ASE's EMT calculator, relaxing the molecule "
    "to fmax=0.01 eV/Å first? Return a float rounded to 4 decimal places."
)


@pytest.fixture
def declined(workspace):
    """The starter atomization skill in the store, and its decline of CO: a near miss carrying formula=CO."""
    skill = starter_skill("ase_emt_atomization_n2")
    request = SolveRequest(query=CO, spec=read_answer_spec(CO), user="ada")
    choice = choose_skill(request, [SkillMatch(skill=skill, similarity=0.8)])
    assert choice.match is None
    [decline] = choice.declined
    assert "'total'" in decline.reason and [(b.name, b.value) for b in decline.near or []] == [("formula", "CO"), ("fmax", 0.01)]
    return skill, request, choice.declined


def test_a_near_miss_that_gives_the_accepted_answer_learns_the_question(declined):
    skill, request, declines = declined
    store = open_store(get_settings())
    [growth] = grow_near_misses(request, declines, emt_atomization("CO"), store, get_settings())
    assert growth.grown and growth.answer == emt_atomization("CO"), growth.reason
    grown = store.get_skill(skill.id)
    assert grown.provenance.queries[-1] == CO and grown.provenance.asked_by == {CO: "ada"}
    assert bind(grown, CO).params == {"formula": "CO", "fmax": 0.01}  # the wording binds now
    # Recall hands out the grown document (the store reindexed it).
    assert CO in store.search_skills(CO, k=1)[0][0].provenance.queries
    # The question is ada's words: a starter skill is shown whole, but not with another asker's question.
    assert CO in shared_view(grown, "ada").provenance.queries and CO not in shared_view(grown, "bob").model_dump_json()
    again = grow_near_misses(request, declines, emt_atomization("CO"), store, get_settings())
    assert again[0].grown and store.get_skill(skill.id).provenance.queries.count(CO) == 1


def test_a_near_miss_that_disagrees_learns_nothing_and_says_why(declined):
    skill, request, declines = declined
    store = open_store(get_settings())
    [growth] = grow_near_misses(request, declines, 1.2345, store, get_settings())
    assert not growth.grown and growth.answer == emt_atomization("CO")
    assert "disagrees with the accepted one" in growth.reason and "1.2345" in growth.reason
    assert CO not in store.get_skill(skill.id).provenance.queries
    with pytest.raises(BindingDeclined, match="total"):
        bind(store.get_skill(skill.id), CO)


def test_a_decline_for_more_than_words_is_no_near_miss(workspace):
    skill = starter_skill("ase_emt_atomization_n2")
    two = "What is the total binding energy of CO and of NO with ASE's EMT calculator? Return a float rounded to 4 decimal places."
    choice = choose_skill(SolveRequest(query=two), [SkillMatch(skill=skill, similarity=0.8)])
    assert choice.match is None and choice.declined[0].near is None
