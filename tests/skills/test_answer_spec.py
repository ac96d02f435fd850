import pytest

from skills.answer_spec import (
    AnswerSpec,
    coerce_answer,
    consensus_key,
    format_answer,
    read_answer_spec,
)


@pytest.mark.parametrize(
    "query, output_type, unit, decimals",
    [
        ("Calculate the atomization energy (unit: eV) of N2. Return a float rounded to 4 decimal places.", "float", "eV", 4),
        ("Calculate the atomization energy of N2 using ASE's EMT calculator; return a float in eV", "float", "eV", None),
        ("Count the fragments of OCc1ccccc1CN. Return an integer.", "int", None, None),
        ("Is NaCl stable? Return true or false.", "bool", None, None),
        ("List the elements of LiFePO4. Return a list of strings.", "list", None, None),
        ("What is the band gap of Si?", "any", None, None),
    ],
)
def test_reads_the_requested_format(query, output_type, unit, decimals):
    spec = read_answer_spec(query)
    assert (spec.output_type, spec.unit, spec.decimals) == (output_type, unit, decimals)


def test_coercion():
    assert coerce_answer(9.93724, AnswerSpec(output_type="float", decimals=3)) == (9.937, None)
    assert coerce_answer("2.5", AnswerSpec(output_type="float")) == (2.5, None)
    assert coerce_answer(40.0, AnswerSpec(output_type="int")) == (40, None)
    assert coerce_answer(40.5, AnswerSpec(output_type="int"))[1] is not None
    assert coerce_answer(True, AnswerSpec(output_type="float"))[1] is not None
    assert coerce_answer("nine", AnswerSpec(output_type="float"))[1] == "expected a number, got the string 'nine'"
    assert coerce_answer({"a": 1}, AnswerSpec())[0] == {"a": 1}


def test_consensus_key_ignores_float_noise_only():
    assert consensus_key(9.937200000001) == consensus_key(9.9372)
    assert consensus_key(9.9372) != consensus_key(9.9373)
    assert consensus_key({"b": 1, "a": [1.0000000001]}) == consensus_key({"a": [1.0], "b": 1})


def test_format_answer_adds_unit():
    assert format_answer(9.9372, AnswerSpec(unit="eV")) == "9.9372 eV"
    assert format_answer(40, AnswerSpec()) == "40"


def test_the_unit_asked_for_is_the_one_the_question_ends_on_not_one_of_its_data():
    query = "total energies in eV per formula unit: Na 0.0, O2 0.0, Na2O -4.5. E_above_hull of Na2O in eV/atom? 4 decimals"
    assert read_answer_spec(query).unit == "eV/atom"
    assert read_answer_spec("the energy in eV of the cell").unit == "eV"


def test_the_unit_asked_for_is_the_one_of_the_questions_own_sentence():
    query = (
        "I have zinc's hcp lattice parameters from a paper in nanometres: a = 0.2665 nm and c = 0.4947 nm. What is the "
        "hexagonal unit-cell volume in cubic angstroms (Å³) according to pymatgen's Lattice.hexagonal? Return a float."
    )
    assert read_answer_spec(query).unit == "cubic angstroms"


def test_a_list_of_the_askers_own_is_no_list_asked_for():
    query = "I'm plotting Fsp3 values and the next one on my list is caffeine. What is the fraction of sp3 carbons, rounded to 4 decimals?"
    assert read_answer_spec(query).output_type == "any"
    assert read_answer_spec("Return a list of the donor atoms.").output_type == "list"


def test_a_list_the_asker_names_is_no_answer_form_where_nothing_is_said_of_what_to_return():
    asked = "Our ELN stores aspirin as OC(=O)C1=CC=CC=C1OC(C)=O; I deduplicate against a vendor list. What string does RDKit write back?"
    assert read_answer_spec(asked).output_type == "str"
    assert read_answer_spec("Which elements does it hold, as a list?").output_type == "list"
    assert read_answer_spec("Return the vendor list of distances.").output_type == "list"  # said what to return: as it says


def test_rounding_to_a_step_is_rounding_to_its_decimals():
    assert read_answer_spec("rdkit molwt for lidocaine — g/mol, round to 0.001").decimals == 3
    assert read_answer_spec("rounded to the nearest 0.01, please").decimals == 2
