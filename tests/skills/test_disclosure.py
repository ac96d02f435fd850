"""A skill shows its teacher's words to its teacher only; everyone else sees it described from its code and parameters."""

import json

from benchmarks.task import load_task
from skills import STARTER_LIBRARY
from skills.compile import CompileRequest, compile_skill
from skills.disclosure import bare_code, describe, library_calls, shared_view, shows_words_to
from skills.documents import Provenance
from skills.params import signature_schema
from tests.codes import N2_ANSWER, N2_CODE, N2_QUERY

SECRET = "For the Zebulon-Quaxley grant review of Dr. Okonkwo's group (do not share)."
ALICES_WORDS = ["Zebulon", "Quaxley", "Okonkwo", "grant review", "nitrogen", "do not share"]


def _alices_skill(settings):  # noqa: ANN001, ANN202 - Settings, Skill
    """The skill lifting makes of N2_CODE for alice's question (the question's constants become its parameters)."""
    question = f"{N2_QUERY} {SECRET}"
    result = compile_skill(
        CompileRequest(code=N2_CODE, query=question, expected=N2_ANSWER, tolerance=1e-3,
                       provenance=Provenance(query=question, user="alice")),
        settings,
    )  # fmt: skip
    assert result.ok and result.method == "lifted", result.reasons
    return result.skill


def _said(text: str) -> list[str]:
    return [word for word in ALICES_WORDS if word.lower() in text.lower()]


def test_only_the_teacher_sees_the_question_everyone_else_a_description_from_the_code(workspace):
    from deployments.settings import get_settings

    skill = _alices_skill(get_settings())
    assert _said(skill.model_dump_json()), "the stored skill keeps alice's words (for matching and for alice)"
    assert shared_view(skill, "alice") == skill
    bob = shared_view(skill, "bob")
    assert _said(bob.model_dump_json()) == [], bob.model_dump_json()
    assert bob.provenance.query == "" and bob.provenance.user is None and bob.provenance.flow_run_id is None
    # Described from what it does: its library calls, its parameters' names, kinds, units and bounds, what it returns.
    properties = bob.parameters.model_dump()["properties"]
    assert "formula" in properties and "ase.calculators.emt.EMT" in bob.description and "ase.optimize.BFGS" in bob.description
    assert "formula (a formula" in bob.description and bob.description.startswith("Returns ")
    for name, prop in properties.items():
        assert prop["description"].startswith(f"{name} (") and not {"source", "cue", "cue_after"} & set(prop)
    # Its code is the stored code's, without docstrings: the same run() signature, defaults and bounds.
    assert signature_schema(bob.code)["properties"].keys() == skill.parameters.model_dump()["properties"].keys()
    assert {k: v["default"] for k, v in signature_schema(bob.code)["properties"].items()} == skill.test_case.params


def test_the_view_of_the_code_still_runs_to_the_verified_answer(workspace):
    from deployments.settings import get_settings
    from skills.runner import run_skill

    skill = _alices_skill(get_settings())
    bob = shared_view(skill, "bob")
    execution = run_skill(bob, dict(skill.test_case.params), get_settings())
    assert execution.ok and abs(execution.answer - N2_ANSWER) < 1e-3


def test_a_starter_library_skill_is_shown_whole_and_one_without_a_teacher_to_nobody(workspace):
    from deployments.settings import get_settings
    from flows.learn import learn_task

    settings = get_settings()
    path = STARTER_LIBRARY / "rdkit_fragments_benzyl.json"
    learn_task(load_task(path), settings, llm=None, starter=True)
    from skills.store import open_store

    [starter] = open_store(settings).latest_skills()
    assert starter.provenance.user is None and shows_words_to(starter, "bob") and shared_view(starter, "bob") == starter
    # A task learned as anything but the starter library's is its learner's (the settings' user).
    learned = learn_task(load_task(STARTER_LIBRARY / "pymatgen_molar_mass_fe2o3.json"), settings, llm=None)
    assert open_store(settings).get_skill(learned.skill_id).provenance.user == settings.user == "local"
    # The same task learned by a user is that user's: its words are theirs.
    mine = starter.model_copy(update={"provenance": starter.provenance.model_copy(update={"user": "carol"})})
    assert shows_words_to(mine, "carol") and not shows_words_to(mine, "bob")
    # No teacher recorded and not the starter library's (an older store's skill): nobody sees its words.
    unknown = starter.model_copy(update={"provenance": starter.provenance.model_copy(update={"source": "solve"})})
    assert not shows_words_to(unknown, "local") and shared_view(unknown, "local").provenance.query == ""


def test_library_calls_are_read_through_the_imports_of_a_wrapped_script_too():
    code = (
        "SCRIPT = 'import numpy as np\\nfrom ase.build import bulk\\nprint(np.linspace(0, 1, 3), bulk(\"Cu\"))\\n'\n\n\n"
        "def run():\n    '''What my advisor asked on Tuesday.'''\n    import json\n    exec(SCRIPT)\n    return json.loads('1')\n"
    )
    assert library_calls(code) == ["numpy.linspace", "ase.build.bulk"]  # json is the standard library's
    shown = bare_code(code, "Returns a number.")
    assert "advisor" not in shown and "Returns a number." in shown and "numpy" in shown


def test_comments_and_docstrings_are_not_shown_and_a_bound_is():
    code = '"""Module notes of alice."""\n# alice: secret\ndef run(fmax: float = 0.05) -> float:\n    """alice\'s words"""\n    return fmax  # more of alice\n'
    shown = bare_code(code)
    assert "alice" not in shown and signature_schema(shown)["properties"]["fmax"]["default"] == 0.05
    from skills.documents import Skill, TestCase

    skill = Skill(name="relax", code=code, parameters=signature_schema(code), output_type="float", unit="eV",
                  test_case=TestCase(params={"fmax": 0.05}, expected=0.05))  # fmt: skip
    assert describe(skill) == "Returns a number in eV, from fmax (a number, > 0)."
    assert json.loads(shared_view(skill, "bob").parameters.model_dump_json())["properties"]["fmax"]["description"] == "fmax (a number, > 0)"


def test_a_question_a_skill_grew_by_is_its_askers_alone():
    from skills.documents import Skill, TestCase

    skill = Skill(name="count", code="def run(formula: str = 'N2') -> int:\n    return 2\n", output_type="int", test_case=TestCase(expected=2),
                  provenance=Provenance(query="How many atoms has N2?", user="alice"))  # fmt: skip
    grown = skill.model_copy(update={"provenance": skill.provenance.with_wording("Bob's secret count of CO atoms?", "bob")})
    assert grown.provenance.with_wording("Bob's secret count of CO atoms?", "carol") is grown.provenance  # once, by its first asker
    assert grown.provenance.queries == ["Bob's secret count of CO atoms?"] and grown.provenance.asked_by == {
        "Bob's secret count of CO atoms?": "bob"
    }
    assert "Bob's secret" not in shared_view(grown, "alice").model_dump_json()  # its teacher sees her own words, not bob's
    assert shared_view(grown, "alice").provenance.query == "How many atoms has N2?"
    assert "Bob's secret" not in shared_view(grown, "carol").model_dump_json()
    assert shared_view(grown, "bob").provenance.queries == []  # bob is not its teacher: he sees none of alice's words either
