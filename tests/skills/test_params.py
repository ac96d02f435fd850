"""Skill parameters: schema from run()'s signature, validation with named errors."""

import pytest

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
