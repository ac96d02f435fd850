"""The transfer suite is well formed, and the protocol scores what the skill path did (correct, declined, wrong)."""

from pathlib import Path

import pytest

from benchmarks.task import TaskFormatError
from benchmarks.transfer import SkillAnswer, load_transfer_suite, transfer_report

SUITE = Path("benchmarks/suites/transfer")


def test_the_suite_has_at_least_eight_families_each_with_two_variants_and_two_distractors():
    families = load_transfer_suite([SUITE])
    assert len(families) >= 8 and len({f.family for f in families}) == len(families)
    for family in families:
        assert family.base.variant_of is None and "def run(" not in family.base.solution_code_or_process
        assert len(family.variants) >= 2 and len(family.distractors) >= 2
        assert all(v.variant_of == family.base.id and v.answer is not None for v in family.variants)


def test_a_malformed_family_is_named(tmp_path):
    (tmp_path / "broken.json").write_text('{"family": "x", "base": {}}')
    with pytest.raises(TaskFormatError, match="broken.json"):
        load_transfer_suite([tmp_path])


def test_scoring_counts_right_declined_and_wrong_answers_and_answered_distractors():
    family = load_transfer_suite([SUITE / "pymatgen_rocksalt_density.json"])[0]
    first, second, *_ = family.variants

    def ask(query: str) -> SkillAnswer:
        if query == first.query(1):
            return SkillAnswer(skill_id="pymatgen_rocksalt_density-v1", answer=first.answer)
        if query == second.query(1):
            return SkillAnswer(skill_id="pymatgen_rocksalt_density-v1", answer=first.answer)  # another compound's value
        if query == family.distractors[0].query:
            return SkillAnswer(skill_id="pymatgen_rocksalt_density-v1", answer=1.0)
        return SkillAnswer(reason="declined")

    report = transfer_report([family], ask)
    score = report.families[0]
    assert (score.correct, score.wrong, score.declined) == (1, 2, len(family.variants) - 2)
    assert score.distractors_declined == len(family.distractors) - 1
    assert "| pymatgen_rocksalt_density | 1/" in report.markdown()
    assert [r.verdict for r in report.rows if r.role == "distractor"][0] == "wrong"


def test_a_distractor_with_its_own_answer_is_checked_against_it_and_one_without_is_wrong_when_answered():
    family = load_transfer_suite([SUITE / "pymatgen_rocksalt_density.json"])[0]
    with_answer = family.distractors[0].model_copy(update={"answer": 2.5, "absolute_tolerance": 0.001})
    second = family.distractors[1].model_copy(update={"answer": 2.5, "absolute_tolerance": 0.001})
    third = family.distractors[1].model_copy(update={"id": "no-answer", "query": family.distractors[1].query + " ", "answer": None})
    family = family.model_copy(update={"variants": family.variants[:1], "distractors": [with_answer, second, third]})
    answers = {with_answer.query: 2.5, second.query: 3.0, third.query: 2.5}

    def ask(query: str) -> SkillAnswer:
        if query in answers:
            return SkillAnswer(skill_id="pymatgen_rocksalt_density-v1", answer=answers[query])
        return SkillAnswer(reason="declined")

    verdicts = [r.verdict for r in transfer_report([family], ask).rows if r.role == "distractor"]
    assert verdicts == ["correct", "wrong", "wrong"]  # its own answer; another value; a look-alike with nothing to check


def test_retrieval_counts_a_variant_whose_own_family_was_recalled_whether_or_not_it_answered():
    family = load_transfer_suite([SUITE / "pymatgen_rocksalt_density.json"])[0]
    first, second, third, *_ = family.variants

    def ask(query: str) -> SkillAnswer:
        if query == first.query(1):  # recalled third, then declined: retrieval found it, binding did not
            return SkillAnswer(reason="declined", recalled=["rdkit_tpsa-v1", "ase_emt_vacancy-v1", "pymatgen_rocksalt_density-v2"])
        if query == second.query(1):  # only other families recalled
            return SkillAnswer(reason="declined", recalled=["pymatgen_rocksalt_densityx-v1", "rdkit_tpsa-v1"])
        if query == third.query(1):
            return SkillAnswer(skill_id="pymatgen_rocksalt_density-v1", answer=third.answer, recalled=["pymatgen_rocksalt_density-v1"])
        return SkillAnswer(reason="no skill recalled")

    report = transfer_report([family], ask)
    assert [r.family_recalled for r in report.rows if r.role == "variant"][:3] == [True, False, True]
    assert report.families[0].recalled == report.totals.recalled == 2
    assert f"| 2/{len(family.variants)} |" in report.markdown().splitlines()[2]
