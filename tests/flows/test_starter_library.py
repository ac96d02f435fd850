"""A new workspace is not a dead end: its first question meets the starter library, learned once."""

import json
import shutil
import time
from collections import Counter

from pymatgen.core import Composition
from rdkit import Chem
from rdkit.Chem import rdMolDescriptors

from deployments.settings import get_settings
from flows.interfaces.cli.main import main
from flows.learn import ensure_starter_library
from flows.transfer import ask_skills
from skills import STARTER_LIBRARY
from skills.runner import run_skill
from skills.store import open_store

O2 = "Calculate the atomization energy (unit: eV) of an oxygen molecule O2 using ASE's EMT calculator, relaxing it to fmax=0.01 eV/Å first. Return a float rounded to 4 decimal places."
# One skill family per task file: the whole library learns to one skill of each family.
LIBRARY_IDS = sorted(f"{json.loads(p.read_text())['skill_family']}-v1" for p in STARTER_LIBRARY.glob("*.json"))
# A few of its tasks, for the tests whose point does not need every family learned.
SOME = ["ase_emt_atomization_n2", "pymatgen_rocksalt_density_nacl", "rdkit_fragments_benzyl"]
SOME_IDS = ["ase_emt_atomization-v1", "pymatgen_rocksalt_density-v1", "rdkit_fragment_count-v1"]


def _monty(monkeypatch):
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    monkeypatch.setenv("EVOSKILL_STARTER_LIBRARY", "true")


def _some_of_the_library(monkeypatch, tmp_path, names: list[str] = SOME):
    """The starter library cut down to ``names`` of its tasks (``SOME`` by default)."""
    folder = tmp_path / "library"
    folder.mkdir()
    for name in names:
        shutil.copy(STARTER_LIBRARY / f"{name}.json", folder)
    monkeypatch.setattr("flows.learn.STARTER_LIBRARY", folder)


def test_a_new_workspace_learns_the_starter_library_once(workspace, monkeypatch):
    _monty(monkeypatch)
    settings = get_settings()
    assert len(LIBRARY_IDS) == len(set(LIBRARY_IDS)) == 30
    started = time.perf_counter()
    outcomes = ensure_starter_library(settings)
    methods = Counter(o.method for o in outcomes or [])
    print(f"\nlearned the starter library ({len(LIBRARY_IDS)} tasks) in {time.perf_counter() - started:.0f} s: {dict(methods)}")
    assert outcomes is not None
    assert {o.task: o.reason for o in outcomes if o.status != "learned"} == {}  # every task learned, or why not
    assert sorted(s.id for s in open_store(settings).latest_skills()) == LIBRARY_IDS
    marker = json.loads((workspace / "starter-library.json").read_text())
    assert sorted(o["skill_id"] for o in marker) == LIBRARY_IDS
    assert ensure_starter_library(settings) is None  # once


def test_deleted_skills_are_not_given_back(workspace, monkeypatch, tmp_path):
    _monty(monkeypatch)
    _some_of_the_library(monkeypatch, tmp_path)
    settings = get_settings()
    ensure_starter_library(settings)
    store = open_store(settings)
    assert sorted(s.id for s in store.latest_skills()) == SOME_IDS
    for skill_id in SOME_IDS:
        store.delete_skill(skill_id.removesuffix("-v1"))
    assert store.count("skills") == 0
    assert ensure_starter_library(settings) is None
    assert open_store(settings).count("skills") == 0


def test_a_workspace_with_skills_of_its_own_is_left_alone(workspace, monkeypatch, capsys):
    _monty(monkeypatch)
    assert main(["learn", str(STARTER_LIBRARY / "rdkit_fragments_benzyl.json")]) == 0
    assert ensure_starter_library(get_settings()) is None
    assert [s.id for s in open_store(get_settings()).latest_skills()] == ["rdkit_fragment_count-v1"]


def test_the_setting_turns_it_off(workspace, monkeypatch):
    _monty(monkeypatch)
    monkeypatch.setenv("EVOSKILL_STARTER_LIBRARY", "false")
    assert ensure_starter_library(get_settings()) is None
    assert open_store(get_settings()).count("skills") == 0


def test_the_first_question_in_a_new_workspace_is_answered_by_a_starter_skill(workspace, monkeypatch, scripted, capsys, tmp_path):
    _monty(monkeypatch)
    _some_of_the_library(monkeypatch, tmp_path)
    scripted([])
    assert main(["solve", O2, "--json"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["path"] == "skill" and summary["skill_id"] == "ase_emt_atomization-v1"
    assert summary["answer"] == 8.5753
    assert sorted(s.id for s in open_store(get_settings()).latest_skills()) == SOME_IDS
    assert "learning the starter skill library" in err


def test_an_empty_store_says_how_to_fill_it(workspace, monkeypatch, capsys):
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    assert main(["skills", "list"]) == 0
    err = capsys.readouterr().err
    assert "0 skills" in err and f"evoskill learn {STARTER_LIBRARY}/*.json" in err


def test_the_hint_never_shows_a_store_password(workspace, monkeypatch, capsys):
    monkeypatch.setenv("EVOSKILL_STORE", "mongodb://alice:s3cret@db.example:27017")
    monkeypatch.setattr("skills.store.open_store", lambda settings: type("Empty", (), {"latest_skills": lambda self: [], "problems": []})())
    assert main(["skills", "list"]) == 0
    err = capsys.readouterr().err
    assert "s3cret" not in err and "alice" not in err and "mongodb://db.example:27017" in err


def test_the_aromatic_ring_and_oxidation_state_skills_learn_their_substance_and_answer_for_another(workspace, monkeypatch, tmp_path):
    _monty(monkeypatch)
    _some_of_the_library(monkeypatch, tmp_path, ["rdkit_aromatic_rings_naphthalene", "pymatgen_oxidation_state_mn_kmno4"])
    settings = get_settings()
    ensure_starter_library(settings)
    store = open_store(settings)
    rings, oxidation = store.get_skill("rdkit_aromatic_ring_count"), store.get_skill("pymatgen_oxidation_state")
    assert rings.test_case.params == {"smiles": "c1ccc2ccccc2c1"} and rings.independent_of == []
    assert oxidation.test_case.params == {"element": "Mn", "formula": "KMnO4"} and oxidation.independent_of == []
    for skill in (rings, oxidation):  # each still reproduces its verified answer in the sandbox
        assert run_skill(skill, skill.test_case.params, settings).answer == skill.test_case.expected

    for name, smiles in [("benzene", "c1ccccc1"), ("anthracene", "c1ccc2cc3ccccc3cc2c1"), ("cyclohexane", "C1CCCCC1")]:
        reply = ask_skills(f"How many aromatic rings does {name} (SMILES {smiles}) have according to RDKit? Return an integer.", store, settings)
        assert reply.skill_id == rings.id, reply.reason
        assert reply.answer == rdMolDescriptors.CalcNumAromaticRings(Chem.MolFromSmiles(smiles)) and reply.params == {"smiles": smiles}

    reply = ask_skills("What is the oxidation state of chromium in K2Cr2O7, as guessed by pymatgen? Return an integer.", store, settings)
    assert reply.skill_id == oxidation.id, reply.reason
    assert reply.params == {"element": "Cr", "formula": "K2Cr2O7"}
    assert reply.answer == round(Composition("K2Cr2O7").oxi_state_guesses()[0]["Cr"]) == 6
