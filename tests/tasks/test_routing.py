"""Routing: which recalled skills are tried, and which of them answers (the first that binds the question without doubt).

Pure: no store, no Prefect server; the thresholds are set explicitly.
"""

import pytest

from deployments.settings import Settings
from skills.documents import Provenance, Skill, TestCase
from skills.parameter import ParameterSchema
from tasks.bind import choose_recalled, choose_skill
from tasks.models import Recall, SkillMatch, SolveRequest
from tests.codes import N2_CODE, N2_QUERY
from tests.skills.test_binding import lifted

SETTINGS = Settings(skill_match_threshold=0.3, skill_exact_threshold=0.9)
WITH_PARAMS = Skill(name="p", code="def run(x: float = 1.0):\n    return x\n", parameters={"properties": {"x": {"type": "number", "default": 1.0}}}, test_case=TestCase(expected=1.0))
WITHOUT = Skill(name="q", code="def run():\n    return 1\n", test_case=TestCase(expected=1))
EMPTY_PROPERTIES = WITHOUT.model_copy(update={"name": "r", "parameters": ParameterSchema.model_validate({"type": "object", "properties": {}})})


def tried(*matches: tuple[Skill, float], settings: Settings = SETTINGS) -> list[tuple[str, float]]:
    recall = Recall(skills=[SkillMatch(skill=s, similarity=v) for s, v in matches])
    return [(m.skill.name, m.similarity) for m in recall.usable_skills(settings)]


def test_a_skill_with_parameters_is_tried_from_the_match_threshold_on():
    assert tried((WITH_PARAMS, 0.3), (WITH_PARAMS, 0.29), (WITH_PARAMS, 0.0)) == [("p", 0.3)]


def test_a_skill_without_parameters_is_tried_only_from_the_exact_threshold_on():
    assert tried((WITHOUT, 0.9), (WITHOUT, 0.89), (WITHOUT, 0.5), (EMPTY_PROPERTIES, 0.89), (EMPTY_PROPERTIES, 0.95)) == [("q", 0.9), ("r", 0.95)]


def test_the_order_of_recall_is_kept_and_each_skill_meets_its_own_threshold():
    assert tried((WITHOUT, 0.95), (WITH_PARAMS, 0.6), (WITHOUT, 0.8), (WITH_PARAMS, 0.2)) == [("q", 0.95), ("p", 0.6)]


def test_the_thresholds_come_from_the_settings():
    strict = Settings(skill_match_threshold=0.7, skill_exact_threshold=0.99)
    assert tried((WITH_PARAMS, 0.6), (WITH_PARAMS, 0.7), (WITHOUT, 0.95), (WITHOUT, 0.99), settings=strict) == [("p", 0.7), ("q", 0.99)]
    assert tried((WITHOUT, 0.95), settings=Settings(skill_match_threshold=0.3, skill_exact_threshold=0.95)) == [("q", 0.95)]


def test_nothing_recalled_nothing_tried():
    assert tried() == []


N2 = lifted(N2_CODE, N2_QUERY, keep=("formula",))
LITERAL = Skill(name="literal", code="def run():\n    return 9.9372\n", test_case=TestCase(expected=9.9372), provenance=Provenance(query=N2_QUERY))


def test_the_first_skill_that_binds_answers_and_the_ones_before_it_say_why_they_declined():
    query = N2_QUERY.replace("a nitrogen molecule", "O2")
    choice = choose_skill(SolveRequest(query=query), [SkillMatch(skill=LITERAL, similarity=0.97), SkillMatch(skill=N2, similarity=0.8)])
    assert choice.match is not None and choice.match.skill.id == N2.id and choice.match.similarity == 0.8
    assert choice.binding is not None and choice.binding.params == {"formula": "O2"}
    assert [(d.skill_id, d.similarity) for d in choice.declined] == [(LITERAL.id, 0.97)]
    assert "answers only its own question" in choice.declined[0].reason


def test_the_first_skill_that_binds_wins_over_later_ones():
    query = N2_QUERY.replace("a nitrogen molecule", "O2")
    other = N2.model_copy(update={"name": "other"})
    choice = choose_skill(SolveRequest(query=query), [SkillMatch(skill=N2, similarity=0.8), SkillMatch(skill=other, similarity=0.9)])
    assert choice.match is not None and choice.match.skill.name == N2.name and choice.declined == []


def test_when_every_skill_declines_none_answers_and_all_reasons_are_kept():
    query = N2_QUERY.replace("a nitrogen molecule", "O2 (or was it N2?)")
    choice = choose_skill(SolveRequest(query=query), [SkillMatch(skill=N2, similarity=0.8), SkillMatch(skill=LITERAL, similarity=0.95)])
    assert choice.match is None and choice.binding is None
    assert [d.skill_id for d in choice.declined] == [N2.id, LITERAL.id]
    assert "'O2', 'N2'" in choice.declined[0].reason


def test_a_binding_the_schema_refuses_declines():
    # The binder reads a formula; the parameter's declared JSON type is a number: the schema check refuses it.
    schema = {"type": "object", "properties": {"formula": {"type": "number", "default": 1.0, "kind": "formula", "source": "nitrogen molecule"}}}
    mistyped = N2.model_copy(update={"parameters": ParameterSchema.model_validate(schema)})
    choice = choose_skill(SolveRequest(query=N2_QUERY.replace("a nitrogen molecule", "O2")), [SkillMatch(skill=mistyped, similarity=0.8)])
    assert choice.match is None and choice.binding is None
    assert [d.skill_id for d in choice.declined] == [mistyped.id] and "bad skill parameters" in choice.declined[0].reason


@pytest.mark.parametrize("similarity", [0.95, 0.31])
def test_choosing_does_not_look_at_similarity_again(similarity):
    choice = choose_skill(SolveRequest(query=N2_QUERY), [SkillMatch(skill=N2, similarity=similarity)])
    assert choice.binding is not None and choice.binding.params == {"formula": "N2"}


def test_a_parameterless_skill_not_tried_is_declined_with_why_and_the_rest_are_chosen_from_as_before():
    recall = Recall(skills=[SkillMatch(skill=s, similarity=v) for s, v in [(WITHOUT, 0.8), (N2, 0.7), (EMPTY_PROPERTIES, 0.2)]])
    choice = choose_recalled(SolveRequest(query=N2_QUERY.replace("a nitrogen molecule", "O2")), recall, SETTINGS)
    assert choice.match is not None and choice.match.skill.id == N2.id and choice.binding.params == {"formula": "O2"}
    assert [(d.skill_id, d.similarity, d.tried) for d in choice.declined] == [(WITHOUT.id, 0.8, False)]  # not the one below 0.3
    assert "no parameters" in choice.declined[0].reason and "0.90 or more; this one is 0.80" in choice.declined[0].reason


def test_declined_lists_skills_not_tried_and_those_that_declined_best_first():
    query = N2_QUERY.replace("a nitrogen molecule", "O2 (or was it N2?)")
    recall = Recall(skills=[SkillMatch(skill=LITERAL, similarity=0.95), SkillMatch(skill=N2, similarity=0.85), SkillMatch(skill=WITHOUT, similarity=0.6)])
    choice = choose_recalled(SolveRequest(query=query), recall, SETTINGS)
    assert choice.match is None
    assert [(d.skill_id, d.tried) for d in choice.declined] == [(LITERAL.id, True), (N2.id, True), (WITHOUT.id, False)]
    assert choose_recalled(SolveRequest(query=query), None, SETTINGS).declined == []
