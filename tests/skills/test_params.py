"""Skill parameters: schema from run()'s signature, validation with named errors, grounding in the question."""

import pytest

from skills.grounding import GroundingError, ground_params
from skills.params import (
    ParameterError,
    SkillCodeError,
    parse_assignments,
    signature_schema,
    validate_params,
)

CODE = 'def run(formula: str = "N2", fmax: float = 0.01, steps: int = 100) -> float:\n    """Doc.\n\n    formula: the molecule\n    """\n    return 0.0\n'


def test_schema_comes_from_the_signature_with_docstring_descriptions():
    schema = signature_schema(CODE)
    assert schema["properties"]["formula"] == {"type": "string", "default": "N2", "description": "the molecule"}
    assert schema["properties"]["steps"] == {"type": "integer", "default": 100}


@pytest.mark.parametrize(
    "code, problem",
    [
        ("def run(x=1):\n    return x\n", "needs one of the annotations"),
        ("def run(x: int):\n    return x\n", "needs a default"),
        ("def run(*args):\n    return 1\n", "named parameters only"),
        ("def other():\n    return 1\n", "no top-level function run"),
        ("def run(:\n", "does not parse"),
    ],
)
def test_unusable_run_functions_are_explained(code, problem):
    with pytest.raises(SkillCodeError, match=problem):
        signature_schema(code)


def test_wrong_types_and_unknown_names_are_named():
    schema = signature_schema(CODE)
    with pytest.raises(ParameterError, match=r"fmax: Input should be a valid number.*got 'fast'"):
        validate_params(schema, {"fmax": "fast"})
    with pytest.raises(ParameterError, match="fmx: Extra inputs"):
        validate_params(schema, {"fmx": 0.1})
    assert validate_params(schema, {"fmax": "0.05"}) == {"formula": "N2", "fmax": 0.05, "steps": 100}


def test_assignments_are_read_as_json_when_they_are():
    assert parse_assignments(["formula=O2", "fmax=0.05", "flags=[1, 2]"]) == {"formula": "O2", "fmax": 0.05, "flags": [1, 2]}
    with pytest.raises(ParameterError, match="NAME=VALUE"):
        parse_assignments(["formula"])


SCHEMA = signature_schema(CODE)


def test_a_value_written_in_the_question_is_kept():
    assert ground_params(SCHEMA, {"formula": "CO", "fmax": 0.05}, "Energy of CO, fmax=0.05")["formula"] == "CO"


def test_an_ungrounded_value_is_replaced_by_the_one_formula_in_the_question():
    bound = ground_params(SCHEMA, {"formula": "{[{", "fmax": 0.1}, "Atomization of O2 using ASE's EMT. Return a float.")
    assert bound == {"formula": "O2", "fmax": 0.01, "steps": 100}


def test_a_number_named_in_the_question_wins_over_the_models_guess():
    assert ground_params(SCHEMA, {"formula": "H2", "fmax": 0.1}, "H2 relaxed to fmax = 0.02")["fmax"] == 0.02


def test_an_entity_the_question_does_not_name_fails_binding():
    with pytest.raises(GroundingError, match="cannot find the value of 'formula'"):
        ground_params(SCHEMA, {"formula": "N2"}, "Atomization energy of an oxygen molecule with EMT")
