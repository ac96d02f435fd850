"""The transfer protocol end to end: learned from the base, variants answered through the skill, distractors declined."""

import json

from flows.interfaces.cli.main import main
from flows.transfer import transfer

FAMILY = "benchmarks/suites/transfer/pymatgen_rocksalt_density.json"


def test_learned_bases_answer_variants_and_decline_distractors(scripted, tmp_path):
    scripted([])  # no model replies: learning needs none, and binding goes on the question's words alone
    report = transfer([FAMILY], out=str(tmp_path / "run"))
    score = report.families[0]
    assert report.learned == ["pymatgen_rocksalt_density: learned (lifted)"]
    assert score.wrong == 0 and score.correct == score.variants == 4  # fluorite too, stated whole
    assert score.distractors_declined == score.distractors == 4
    assert score.recalled == 4 and all(r.recalled == ["pymatgen_rocksalt_density-v1"] for r in report.rows if r.role == "variant")
    assert all(r.reason for r in report.rows if r.verdict == "declined")
    assert (tmp_path / "run" / "transfer.md").read_text().startswith("| family |")


def test_with_learning_off_no_skill_answers(scripted, tmp_path, capsys):
    scripted([])
    assert main(["transfer", FAMILY, "--no-learn", "--json", "--out", str(tmp_path / "off")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["learned"] == [] and {r["verdict"] for r in report["rows"]} == {"declined"}


def test_a_missing_suite_is_a_usage_error(workspace, capsys):
    assert main(["transfer", "no/such/folder"]) == 2
    assert "no such file or folder" in capsys.readouterr().err
