"""`evoskill solve` with a near miss: a recalled skill every value of the question binds, declined only for words. It is
offered (in --json, on the terminal), taken with --accept-suggestion, and grown when the code path's accepted answer
agrees with it. Real store, scripted model, real sandbox runs of the starter atomization skill."""

import io
import json

import pytest

from deployments.settings import get_settings
from flows.interfaces.cli.main import main
from skills.binding import bind
from skills.store import open_store
from tests.starter import emt_atomization, starter_skill

CO = (
    "What is the total binding energy of a carbon monoxide molecule CO with ASE's EMT calculator, relaxing the molecule "
    "to fmax=0.01 eV/Å first? Return a float rounded to 4 decimal places."
)
# What the code path writes for CO: the isolated atoms less the relaxed molecule.
CO_CODE = """import json
from ase import Atoms
from ase.build import molecule
from ase.calculators.emt import EMT
from ase.optimize import BFGS
co = molecule("CO"); co.calc = EMT()
BFGS(co, logfile=None).run(fmax=0.01)
atoms = 0.0
for symbol in co.get_chemical_symbols():
    atom = Atoms(symbol); atom.calc = EMT(); atoms += atom.get_potential_energy()
print(json.dumps(round(atoms - co.get_potential_energy(), 4)))
"""
CLEAR = {"stage": "triage", "content": {"conflict": "", "question": ""}}


@pytest.fixture
def atomization(workspace):
    return starter_skill("ase_emt_atomization_n2")


def _solve(capsys, *args: str) -> tuple[int, dict, str]:
    code = main(["solve", *args, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_a_near_miss_is_offered_beside_the_code_paths_answer_which_grows_the_skill(atomization, scripted, capsys):
    written = {"packages": ["ase"], "code": CO_CODE}
    scripted([CLEAR, {"stage": "simple", "content": written}, {"stage": "research", "content": written}])  # the starter's memories: simple
    code, summary, _ = _solve(capsys, CO)
    assert code == 0 and summary["path"] in ("simple", "deep") and summary["answer"] == emt_atomization("CO")
    offer = summary["suggestion"]
    assert offer["skill_id"] == atomization.id and offer["params"] == {"formula": "CO", "fmax": 0.01} and not offer["accepted"]
    assert offer["verified_on"] == atomization.provenance.query and "'total'" in offer["reason"]
    # The accepted answer agreed with the skill's: the question is now one of its verified questions.
    assert summary["grown"] == [atomization.id]
    grown = open_store(get_settings()).get_skill(atomization.id)
    assert CO in grown.provenance.queries and bind(grown, CO).params == {"formula": "CO", "fmax": 0.01}


def test_accept_suggestion_answers_through_the_skill_and_the_wording_binds_next_time(atomization, scripted, capsys):
    scripted([])  # the skill path asks no model
    code, summary, _ = _solve(capsys, CO, "--accept-suggestion")
    assert code == 0 and summary["path"] == "skill" and summary["skill_id"] == atomization.id
    assert summary["answer"] == emt_atomization("CO") and summary["llm_calls"] == 0  # no code written
    assert summary["suggestion"]["accepted"] and [(p["name"], p["value"]) for p in summary["params"]] == [("formula", "CO"), ("fmax", 0.01)]
    assert open_store(get_settings()).get_skill(atomization.id).stats.uses == 1

    scripted([])  # no model at all: the skill binds the question's words now
    code, again, _ = _solve(capsys, CO)
    assert code == 0 and again["path"] == "skill" and again["skill_id"] == atomization.id and again["suggestion"] is None
    assert again["declined"] == []


def test_on_a_terminal_the_suggestion_is_asked_first(atomization, scripted, capsys, monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    scripted([])
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    assert main(["solve", CO]) == 0
    out, err = capsys.readouterr()
    assert f'This looks like {atomization.id} with formula=CO, fmax=0.01 (it was verified on "{atomization.provenance.query}"). Run it? [y/N]' in err
    assert f"Answer: {emt_atomization('CO')}  (skill {atomization.id})" in out
    assert f"Answered through the suggested skill {atomization.id}" in out


def test_without_the_flag_or_a_terminal_the_code_path_goes_on_and_the_suggestion_is_reported(atomization, scripted, capsys):
    scripted([])  # the code path has no model: no answer, and the suggestion still comes back
    assert main(["solve", CO]) == 1
    out = capsys.readouterr().out
    assert f"This looks like {atomization.id} with formula=CO" in out and "Ask again with --accept-suggestion" in out
    assert open_store(get_settings()).get_skill(atomization.id).stats.uses == 0
