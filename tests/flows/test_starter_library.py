"""A new workspace is not a dead end: its first question meets the starter library, learned once."""

import json

from deployments.settings import get_settings
from flows.interfaces.cli.main import main
from flows.learn import ensure_starter_library
from skills import STARTER_LIBRARY
from skills.store import open_store

O2 = "Calculate the atomization energy (unit: eV) of an oxygen molecule O2 using ASE's EMT calculator, relaxing it to fmax=0.01 eV/Å first. Return a float rounded to 4 decimal places."
LIBRARY_IDS = ["ase_emt_atomization-v1", "pymatgen_rocksalt_density-v1", "rdkit_fragment_count-v1"]


def _monty(monkeypatch):
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    monkeypatch.setenv("EVOSKILL_STARTER_LIBRARY", "true")


def test_a_new_workspace_learns_the_starter_library_once(workspace, monkeypatch):
    _monty(monkeypatch)
    settings = get_settings()
    outcomes = ensure_starter_library(settings)
    assert outcomes is not None and [o.status for o in outcomes] == ["learned"] * len(LIBRARY_IDS)
    assert sorted(s.id for s in open_store(settings).latest_skills()) == LIBRARY_IDS
    marker = json.loads((workspace / "starter-library.json").read_text())
    assert sorted(o["skill_id"] for o in marker) == LIBRARY_IDS
    assert ensure_starter_library(settings) is None  # once


def test_deleted_skills_are_not_given_back(workspace, monkeypatch):
    _monty(monkeypatch)
    settings = get_settings()
    ensure_starter_library(settings)
    store = open_store(settings)
    for skill_id in LIBRARY_IDS:
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


def test_the_first_question_in_a_new_workspace_is_answered_by_a_starter_skill(workspace, monkeypatch, scripted, capsys):
    _monty(monkeypatch)
    scripted([{"stage": "bind", "content": {"formula": "O2", "fmax": 0.01}}])
    assert main(["solve", O2, "--json"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["path"] == "skill" and summary["skill_id"] == "ase_emt_atomization-v1"
    assert summary["answer"] == 8.5753
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
