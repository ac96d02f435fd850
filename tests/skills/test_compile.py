"""Generalise → verify: only a skill that reproduces the accepted answer in the sandbox is kept."""

import pytest

from benchmarks.task import load_task
from deployments.settings import get_settings
from flows.learn import learn_task
from skills.answer_spec import AnswerSpec
from skills.compile import CompileRequest, compile_skill, default_tolerance
from skills.store import open_store
from tests.codes import N2_ANSWER, N2_CODE, N2_QUERY


@pytest.fixture
def settings(workspace):
    return get_settings()


def test_a_script_without_run_is_lifted_without_a_model(settings):
    result = compile_skill(CompileRequest(code=N2_CODE, query=N2_QUERY, expected=N2_ANSWER, tolerance=0.001), settings)
    assert result.ok and result.method == "lifted" and result.skill.method == "lifted" and result.llm_calls == []
    assert list(result.skill.parameters.model_dump()["properties"]) == ["formula", "fmax"] and result.skill.packages == ["ase"]
    assert result.skill.tunables == ["fmax"]  # a stated setting that did not change N2's answer: run as a question states it
    assert "def run(formula: str = 'N2', fmax: float = 0.01):" in result.skill.code and "_elements(formula)[0]" in result.skill.code
    assert result.verification.answer == N2_ANSWER


def test_a_script_that_lifting_cannot_rewrite_is_kept_literally(settings):
    code = "import json\nglobal_value = 2\ndef helper():\n    global global_value\n    global_value += 1\nhelper()\nprint(json.dumps(global_value))\n"
    result = compile_skill(CompileRequest(code=code, query="What is 2 plus one? Return an integer.", expected=3), settings)
    assert result.ok and result.method == "literal" and result.skill.parameters.model_dump()["properties"] == {}


def test_failing_verification_keeps_nothing(settings):
    task = load_task("skills/library/ase_emt_atomization_n2.json").model_copy(update={"answer": 9.5})
    outcome = learn_task(task, settings, llm=None)
    assert outcome.status == "rejected" and "got 9.9372, expected 9.5 ± 0.001" in outcome.reason
    assert open_store(settings).count("skills") == 0 and open_store(settings).count("memories") == 0


def test_a_script_that_crashes_on_rerun_is_rejected_with_its_error(settings):
    result = compile_skill(CompileRequest(code="import json, random\nprint(json.dumps(random.random()))\n", query="q", expected=0.5), settings)
    assert not result.ok and result.skill is None
    assert result.reasons and all("does not reproduce the accepted answer (got 0." in reason for reason in result.reasons)


FRAGMENTS_RUN = """import os
from rdkit import Chem, RDConfig
from rdkit.Chem import FragmentCatalog


def run(smiles: str = "OCc1ccccc1CN", max_path: int = 6) -> int:
    \"\"\"Number of RDKit FragmentCatalog entries of a molecule.\"\"\"
    params = FragmentCatalog.FragCatParams(1, max_path, os.path.join(RDConfig.RDDataDir, "FunctionalGroups.txt"))
    catalog = FragmentCatalog.FragCatalog(params)
    FragmentCatalog.FragCatGenerator().AddFragsFromMol(Chem.MolFromSmiles(smiles), catalog)
    return catalog.GetNumEntries()
"""


def test_learn_uses_the_run_signature_and_the_task_answer(settings):
    task = load_task("skills/library/rdkit_fragments_benzyl.json").model_copy(update={"solution_code_or_process": FRAGMENTS_RUN})
    outcome = learn_task(task, settings, llm=None)
    assert outcome.status == "learned" and outcome.method == "signature" and outcome.skill_id == "rdkit_fragment_count-v1"
    skill = open_store(settings).get_skill("rdkit_fragment_count")
    assert skill.code == FRAGMENTS_RUN and list(skill.parameters.model_dump()["properties"]) == ["smiles", "max_path"]
    assert skill.provenance.source == "learn" and skill.provenance.task_id == "rdkit_fragments_benzyl"
    assert skill.test_case.params == {"smiles": "OCc1ccccc1CN", "max_path": 6}
    assert skill.test_case.expected == 40 and skill.test_case.tolerance is None and skill.output_type == "int"
    assert learn_task(task, settings, llm=None).status == "known"


def test_learn_lifts_a_library_script_and_verifies_it_on_the_task_answer(settings):
    outcome = learn_task(load_task("skills/library/rdkit_fragments_benzyl.json"), settings, llm=None)
    assert outcome.status == "learned" and outcome.method == "lifted" and outcome.skill_id == "rdkit_fragment_count-v1"
    skill = open_store(settings).get_skill("rdkit_fragment_count")
    assert skill.method == "lifted" and "def run(" in skill.code
    smiles = skill.parameters.model_dump()["properties"]["smiles"]
    assert smiles["default"] == "OCc1ccccc1CN" and smiles["kind"] == "smiles"
    assert skill.test_case.params["smiles"] == "OCc1ccccc1CN"
    assert skill.test_case.expected == 40 and skill.test_case.tolerance is None and skill.output_type == "int"
    assert learn_task(load_task("skills/library/rdkit_fragments_benzyl.json"), settings, llm=None).status == "known"


def test_default_tolerance_follows_the_asked_decimals():
    assert default_tolerance(9.9372, AnswerSpec(output_type="float", decimals=4)) == pytest.approx(5e-5)
    assert default_tolerance(40, AnswerSpec(output_type="int")) is None
    assert default_tolerance(1234.5, AnswerSpec()) == pytest.approx(1.2345e-3)


def test_a_compiled_skill_declares_bounds_and_a_wall_time_from_its_verification(settings):
    code = 'def run(fmax: float = 0.05, steps: int = 10) -> float:\n    """Scaled.\n\n    fmax: force threshold in eV/A\n    """\n    return fmax * steps\n'
    result = compile_skill(CompileRequest(code=code, query="What is 10 steps of 0.05? Return a float.", expected=0.5, tolerance=1e-9), settings)
    assert result.ok and result.method == "signature"
    properties = result.skill.parameters.model_dump()["properties"]
    assert properties["fmax"]["exclusiveMinimum"] == 0 and properties["steps"]["minimum"] == 1
    measured = result.verification.wall_s
    assert result.skill.resources.walltime_s == round(max(settings.skill_walltime_floor_s, settings.skill_walltime_factor * measured), 1)
    assert result.skill.resources.walltime_s >= settings.skill_walltime_floor_s
