"""``evoskill learn|skills|memory`` from the command line, on the file-backed store."""

import json

import pytest

from deployments.settings import get_settings
from flows.interfaces.cli.main import main
from skills.store import open_store
from tests.starter import emt_atomization, learn_n2_by_position, rocksalt_density
from tests.starter import rocksalt as rocksalt_crystal

# Three of the starter library's tasks (learning all of them is tests/flows/test_starter_library.py's job).
LIBRARY = [f"skills/library/{name}.json" for name in ("ase_emt_atomization_n2", "pymatgen_rocksalt_density_nacl", "rdkit_fragments_benzyl")]


def _fragment_count(smiles: str, min_path: int, max_path: int) -> int:
    """RDKit's FragmentCatalog count, computed here, as the library task's query describes it."""
    import os

    from rdkit import Chem, RDConfig
    from rdkit.Chem import FragmentCatalog

    params = FragmentCatalog.FragCatParams(min_path, max_path, os.path.join(RDConfig.RDDataDir, "FunctionalGroups.txt"))
    catalog = FragmentCatalog.FragCatalog(params)
    FragmentCatalog.FragCatGenerator().AddFragsFromMol(Chem.MolFromSmiles(smiles), catalog)
    return catalog.GetNumEntries()


@pytest.fixture
def library(workspace, monkeypatch, capsys):
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    assert main(["learn", *LIBRARY]) == 0
    capsys.readouterr()
    return workspace


def test_learn_reports_each_task(library, capsys):
    assert main(["learn", *LIBRARY, "--json"]) == 0
    outcomes = json.loads(capsys.readouterr().out)
    assert [(o["task"], o["status"]) for o in outcomes] == [
        ("ase_emt_atomization_n2", "known"), ("pymatgen_rocksalt_density_nacl", "known"), ("rdkit_fragments_benzyl", "known")
    ]


def test_learn_reports_a_malformed_task_and_learns_the_rest(library, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"user_query": {"1": "q"}}))
    assert main(["learn", str(bad), LIBRARY[0]]) == 1
    out = capsys.readouterr().out
    assert f"{bad}: rejected" in out and "answer: Field required" in out and "ase_emt_atomization_n2: known" in out


def test_list_show_run_export_delete_import(library, tmp_path, capsys):
    assert main(["skills", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["id"] for s in listed] == ["ase_emt_atomization-v1", "pymatgen_rocksalt_density-v1", "rdkit_fragment_count-v1"]
    store = open_store(get_settings())
    assert {s.provenance.user for s in store.latest_skills()} == {None}  # the starter library's: taught by nobody in particular
    assert main(["skills", "show", "rdkit_fragment_count"]) == 0
    shown = capsys.readouterr().out
    assert "--param smiles=<smiles>  default 'OCc1ccccc1CN'  bounds: a valid smiles" in shown and "made by: lifted" in shown
    assert "read from: 'OCc1ccccc1CN'" in shown
    assert main(["skills", "run", "rdkit_fragment_count", "-p", "smiles=CCO", "--json"]) == 0
    output = json.loads(capsys.readouterr().out)
    expected = _fragment_count("CCO", 1, 6)
    assert expected != _fragment_count("OCc1ccccc1CN", 1, 6)  # the answer shows the parameter was used, not the default
    # the lifted skill: the SMILES and the maximum path length (6) are parameters; the minimum path length does not change the count
    assert output["success"] and output["params"] == {"min_path_length": 1, "max_path_length": 6, "smiles": "CCO"} and output["answer"] == expected
    exported = tmp_path / "skill.json"
    assert main(["skills", "export", "rdkit_fragment_count", "-o", str(exported)]) == 0
    assert main(["skills", "delete", "rdkit_fragment_count"]) == 0
    assert main(["skills", "show", "rdkit_fragment_count"]) == 1
    assert "no skill 'rdkit_fragment_count'" in capsys.readouterr().err
    assert main(["skills", "import", str(exported)]) == 0
    assert "stored rdkit_fragment_count-v1" in capsys.readouterr().out
    assert store.get_skill("rdkit_fragment_count").provenance.user == "local"  # an imported skill's words are its importer's


def test_import_reverifies_and_rejects_a_tampered_skill(library, tmp_path, capsys):
    exported = tmp_path / "skill.json"
    main(["skills", "export", "pymatgen_rocksalt_density", "-o", str(exported)])
    data = json.loads(exported.read_text())
    data["name"], data["test_case"]["expected"] = "tampered", 9.99
    exported.write_text(json.dumps(data))
    assert main(["skills", "import", str(exported)]) == 1
    assert "tampered: rejected: its test case failed: got 2.1637, expected 9.99 ± 0.001" in capsys.readouterr().out
    exported.write_text("{not json")
    assert main(["skills", "import", str(exported)]) == 1
    assert "not a skill file" in capsys.readouterr().err


def test_bad_parameters_are_a_usage_error_before_anything_runs(library, capsys):
    assert main(["skills", "run", "pymatgen_rocksalt_density", "-p", "a=fast"]) == 2
    assert "a: Input should be a valid number" in capsys.readouterr().err


def test_memory_search_finds_learned_solutions(library, capsys):
    assert main(["memory", "search", "Count the molecular fragments of CCO with RDKit", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits and hits[0]["memory"]["kind"] == "execution" and "FragmentCatalog" in hits[0]["memory"]["solution"]


def test_a_skill_answers_only_inside_what_it_was_verified_on_run_batch_and_export(library, tmp_path, capsys):
    # The starter atomization skill sums over the molecule's atoms: CO is inside it, and answered right.
    assert main(["skills", "run", "ase_emt_atomization-v1", "-p", "formula=CO"]) == 0
    assert json.loads(capsys.readouterr().out) == emt_atomization("CO") == 7.4297
    # One learned from a script that takes N2's first element twice holds for N2's make-up only: CO is refused.
    by_position = learn_n2_by_position()
    capsys.readouterr()  # learning's progress, shown where it takes long
    assert main(["skills", "run", by_position.id, "-p", "formula=CO"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == (
        f"evoskill skills: {by_position.id} was not verified for formula=CO, fmax=0.01: "
        "the skill uses the elements of formula by position, verified on N2; CO has another make-up"
    )
    # The rock-salt density takes a crystal its cubic lattice can hold; the fragment count takes a SMILES.
    tetragonal = json.dumps({**rocksalt_crystal("K", "Cl"), "space_group": "P4/mmm"})
    for args, reason in [
        (["pymatgen_rocksalt_density", "-p", f"crystal={json.dumps(rocksalt_crystal('Ca', 'Xx'))}", "-p", "a=5.0"], "'Xx' is not an element symbol"),
        (["pymatgen_rocksalt_density", "-p", f"crystal={tetragonal}"], "space group P4/mmm is tetragonal"),
        (["rdkit_fragment_count", "-p", "smiles=C1CC"], "'C1CC' is not a SMILES RDKit can read"),
    ]:
        assert main(["skills", "run", *args, "--json"]) == 2, args
        out, err = capsys.readouterr()
        assert out == "" and reason in err and len(err.strip().splitlines()) == 1, err
        assert main(["skills", "export", args[0], "--workflow", *args[1:]]) == 2
        assert reason in capsys.readouterr().err
    assert main(["skills", "run", "pymatgen_rocksalt_density", "-p", f"crystal={json.dumps(rocksalt_crystal('K', 'Cl'))}", "-p", "a=6.29", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == rocksalt_density("K", "Cl", 6.29)

    # A batch: each item outside fails with its reason and gives no answer; the others are answered.
    sets = tmp_path / "sets.jsonl"
    rows = ({"crystal": rocksalt_crystal("K", "Cl"), "a": 6.29}, {"crystal": rocksalt_crystal("Ca", "Xx"), "a": 5.0}, {"crystal": json.loads(tetragonal)})
    sets.write_text("\n".join(json.dumps(p) for p in rows))
    assert main(["skills", "run", "pymatgen_rocksalt_density", "--batch", str(sets), "--executor", "local", "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert (summary["done"], summary["failed"], summary["ran"]) == (1, 2, 1)
    assert main(["skills", "batch", summary["batch_id"], "--json"]) == 0
    items = json.loads(capsys.readouterr().out)["items"]
    assert [(i["status"], i["answer"]) for i in items] == [("done", rocksalt_density("K", "Cl", 6.29)), ("failed", None), ("failed", None)]
    assert "'Xx' is not an element symbol" in items[1]["error"] and "space group P4/mmm is tetragonal" in items[2]["error"]
    assert main(["skills", "run", "--retry", summary["batch_id"], "--executor", "local", "--json"]) == 1  # refused again, not run
    again = json.loads(capsys.readouterr().out)
    assert (again["ran"], again["done"], again["failed"]) == (0, 1, 2)
