"""End to end: a skill answers only the question it computes, from the question's own words, else the code path does."""

import pytest

from deployments.settings import get_settings
from flows.solve import solve
from skills.compile import CompileRequest, compile_skill
from skills.documents import Provenance, Skill, TestCase
from skills.store import open_store
from tests.codes import N2_ANSWER, N2_CODE, N2_QUERY, O2_ANSWER, O2_QUERY, WRONG_ANSWER
from tests.output_attacks import artifacts
from tests.skills.test_binding import ROCKSALT_CODE, ROCKSALT_QUERY

O2_CODE = N2_CODE.replace('"N2"', '"O2"').replace('"N"', '"O"')
FOUR_DECIMALS = "Calculate the atomization energy of N2 using ASE's EMT calculator; return a float in eV rounded to 4 decimals."


@pytest.fixture
def settings(workspace, monkeypatch):
    monkeypatch.setenv("EVOSKILL_LEARN", "false")
    monkeypatch.setenv("EVOSKILL_TRIAGE_LLM", "false")
    return get_settings()


def learned(settings, code: str, query: str, expected: float, name: str) -> Skill:
    """A skill compiled the way an accepted solve compiles one (lifting, relevance check, verification), then stored."""
    result = compile_skill(CompileRequest(code=code, query=query, expected=expected, tolerance=0.001, name=name, provenance=Provenance(query=query)), settings)
    assert result.ok, result.reasons
    stored, _ = open_store(settings).put_skill(result.skill)
    return stored


def literal_n2(settings) -> Skill:
    """A parameterless skill of the N2 answer (as the old literal generaliser made them)."""
    skill = Skill(
        name="n2_literal", code=f"def run():\n    return {N2_ANSWER}\n", test_case=TestCase(expected=N2_ANSWER),
        provenance=Provenance(query=N2_QUERY), output_type="float", unit="eV",
    )  # fmt: skip
    return open_store(settings).put_skill(skill)[0]


def test_a_parameterless_skill_never_answers_another_molecule(settings, scripted):
    literal_n2(settings)
    scripted([{"stage": "research", "content": {"code": O2_CODE}}])
    result = solve(O2_QUERY)
    assert result.success and result.answer == O2_ANSWER and result.path == "deep"
    assert any("n2_literal-v1" in d and "answers only its own question" in d for d in result.declined), result.declined
    assert [s.name for s in result.stages][:2] == ["recall", "skill"] and not result.stages[1].ok


def test_the_same_parameterless_skill_still_answers_its_own_question(settings, scripted):
    literal_n2(settings)
    scripted([])
    result = solve(N2_QUERY)
    assert result.success and result.path == "skill" and result.answer == N2_ANSWER and result.params == []


def test_a_format_number_is_never_bound(settings, scripted):
    learned(settings, N2_CODE, N2_QUERY, N2_ANSWER, "atomization")
    scripted([])
    result = solve(FOUR_DECIMALS)
    assert result.success and result.path == "skill" and result.answer == N2_ANSWER  # 9.6512 if fmax were 4
    assert {p.name: (p.value, p.words) for p in result.params} == {"formula": ("N2", "N2"), "fmax": (0.01, "verified default")}


def test_the_molecule_the_question_names_is_bound(settings, scripted):
    learned(settings, N2_CODE, N2_QUERY, N2_ANSWER, "atomization")
    scripted([])
    result = solve(O2_QUERY)
    assert result.success and result.path == "skill" and result.answer == O2_ANSWER
    assert [(p.name, p.value) for p in result.params] == [("formula", "O2"), ("fmax", 0.01)]


def test_a_compound_specific_default_is_not_used_for_another_compound(settings, scripted):
    learned(settings, ROCKSALT_CODE, ROCKSALT_QUERY, 2.1637, "rocksalt_density")
    query = "What is the density (unit: g/cm^3) of rock-salt MgO, computed with pymatgen? Return a float rounded to 4 decimal places."
    mgo = "import json\nfrom pymatgen.core import Lattice, Structure\ns = Structure.from_spacegroup('Fm-3m', Lattice.cubic(4.212), ['Mg', 'O'], [[0, 0, 0], [0.5, 0.5, 0.5]])\nprint(json.dumps(round(float(s.density), 4)))\n"
    scripted([{"stage": "research", "content": {"code": mgo}}])
    result = solve(query)
    assert result.path == "deep" and result.answer == 3.5826  # the NaCl lattice constant would give 2.5389
    assert any("belongs to Na, Cl in Fm-3m" in d for d in result.declined), result.declined


def test_two_candidate_compounds_in_one_question_decline(settings, scripted):
    learned(settings, ROCKSALT_CODE, ROCKSALT_QUERY, 2.1637, "rocksalt_density")
    query = ROCKSALT_QUERY.replace("rock-salt NaCl", "rock-salt MgO (or KCl)").replace("5.64", "4.212")
    scripted([{"stage": "research", "content": {"code": "raise SystemExit('ambiguous')\n"}}])
    result = solve(query)
    assert result.path == "deep" and not result.success
    assert any("MgO" in d and "KCl" in d for d in result.declined), result.declined


def test_a_parameterless_skill_too_unlike_the_question_to_be_tried_says_why(settings, scripted, monkeypatch):
    literal_n2(settings)
    monkeypatch.setenv("EVOSKILL_SKILL_EXACT_THRESHOLD", "0.9")  # this question is 0.67 like the skill's
    scripted([{"stage": "research", "content": {"code": O2_CODE}}])
    result = solve("What is the atomization energy of O2 with ASE's EMT calculator? Return a float in eV rounded to 4 decimal places.")
    assert result.success and result.answer == O2_ANSWER and result.path == "deep"
    assert len(result.declined) == 1 and result.declined[0].startswith("n2_literal-v1 (0."), result.declined
    assert "not tried: the skill has no parameters" in result.declined[0]
    assert "skill" not in [s.name for s in result.stages]  # no skill stage ran


def test_a_skill_below_the_threshold_is_not_tried(settings, scripted, monkeypatch):
    learned(settings, N2_CODE, N2_QUERY, N2_ANSWER, "atomization")
    monkeypatch.setenv("EVOSKILL_SKILL_MATCH_THRESHOLD", "0.99")
    scripted([{"stage": "research", "content": {"code": O2_CODE}}])
    result = solve(O2_QUERY)
    assert result.path == "deep" and result.answer == O2_ANSWER and result.declined == []
    assert "skill" not in [s.name for s in result.stages]


@pytest.mark.parametrize("tail", ["Return a float rounded to 4 decimal places.", "Give it in eV to 4 d.p.", "Return a float (unit: eV)."])
def test_every_kind_of_format_number_leaves_the_verified_value(settings, scripted, tail):
    skill = learned(settings, N2_CODE, N2_QUERY, N2_ANSWER, "atomization")
    assert list(skill.parameters.model_dump()["properties"]) == ["formula", "fmax"] and skill.tunables == ["fmax"]  # a setting: run as stated
    scripted([])
    result = solve(f"Calculate the atomization energy of N2 using ASE's EMT calculator, relaxing the molecule to fmax=0.01 eV/Å first. {tail}")
    assert result.path == "skill" and round(float(result.answer)) == round(N2_ANSWER) and result.params[0].value == "N2"


XE2_QUERY = N2_QUERY.replace("a nitrogen molecule", "an Xe2 molecule")


def test_a_value_the_skill_cannot_use_is_a_sentence_with_the_raw_error_kept(settings, scripted):
    learned(settings, N2_CODE, N2_QUERY, N2_ANSWER, "atomization")
    scripted([{"stage": "research", "content": {"code": WRONG_ANSWER}}])
    result = solve(XE2_QUERY)
    sentence = "The skill could not use formula='Xe2': ase.build.molecule() has no entry for 'Xe2'."
    skill_stage = next(s for s in result.stages if s.name == "skill")
    assert not skill_stage.ok and skill_stage.detail.splitlines()[0] == sentence
    assert "KeyError: 'Xe2'" in skill_stage.detail.splitlines()[1]  # the raw error, below the sentence
    assert any(sentence in d for d in result.declined), result.declined
    assert f"| skill | {skill_stage.wall_s:.2f} | no | {sentence} exited with code 1" in artifacts().decode(errors="replace")
