"""Skill parameters: schema from run()'s signature, validation with named errors."""

import pytest

from skills.documents import Skill, TestCase
from skills.params import (
    ParameterError,
    SkillCodeError,
    parse_assignments,
    role_bounds,
    signature_schema,
    validate_params,
    with_bounds,
)

CODE = 'def run(formula: str = "N2", fmax: float = 0.01, steps: int = 100) -> float:\n    """Doc.\n\n    formula: the molecule\n    """\n    return 0.0\n'


def test_schema_comes_from_the_signature_with_docstring_descriptions():
    schema = signature_schema(CODE)
    assert schema["properties"]["formula"] == {"type": "string", "default": "N2", "description": "the molecule"}
    assert schema["properties"]["steps"] == {"type": "integer", "default": 100, "minimum": 1}  # a count: its role bounds it


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


@pytest.mark.parametrize(
    "name, prop, bounds",
    [
        ("fmax", {"type": "number", "default": 0.01}, {"exclusiveMinimum": 0}),
        ("force", {"type": "number", "default": 0.05, "description": "BFGS force threshold in eV/A"}, {"exclusiveMinimum": 0}),
        ("energy_tol", {"type": "number", "default": 1e-6}, {"exclusiveMinimum": 0}),
        ("r_cutoff", {"type": "number", "default": 6.0}, {"exclusiveMinimum": 0}),
        ("temperature", {"type": "number", "default": 300.0}, {"minimum": 0}),
        ("t", {"type": "number", "default": 300.0, "description": "the temperature in K"}, {"minimum": 0}),
        ("t", {"type": "number", "default": 25.0, "description": "the temperature in °C"}, {}),
        ("steps", {"type": "integer", "default": 200}, {"minimum": 1}),
        ("n_atoms", {"type": "integer", "default": 8}, {"minimum": 1}),
        ("steps", {"type": "number", "default": 200.0}, {}),  # a count is an integer
        ("shift", {"type": "number", "default": -0.5}, {}),  # no role: no bound
        ("fmax", {"type": "number", "default": -1.0}, {}),  # the verified default breaks the bound: not its role
        ("formula", {"type": "string", "default": "N2"}, {}),
    ],
)
def test_role_bounds_follow_a_parameters_name_unit_and_verified_default(name, prop, bounds):
    assert role_bounds(name, prop) == bounds


def test_with_bounds_keeps_bounds_a_schema_declares():
    schema = {"type": "object", "properties": {"fmax": {"type": "number", "minimum": 0.001}}}
    assert with_bounds(schema).model_dump() == schema


def test_validate_params_rejects_values_out_of_bounds_naming_them():
    schema = signature_schema(CODE)
    with pytest.raises(ParameterError, match=r"fmax: Input should be greater than 0 \(got -1\)"):
        validate_params(schema, {"fmax": -1})
    with pytest.raises(ParameterError, match=r"steps: Input should be greater than or equal to 1 \(got 0\)"):
        validate_params(schema, {"steps": 0})
    assert validate_params(schema, {"fmax": 0.05, "steps": 1}) == {"formula": "N2", "fmax": 0.05, "steps": 1}


def test_a_stored_skill_without_bounds_gets_them_when_loaded():
    old = {"type": "object", "properties": {"formula": {"type": "string", "default": "N2"}, "fmax": {"type": "number", "default": 0.01}}}
    document = Skill(name="old", code=CODE, parameters=old, test_case=TestCase(expected=0.0)).model_dump(mode="json")
    document["parameters"] = old  # as an earlier version stored it
    loaded = Skill.model_validate(document)
    assert loaded.parameters.model_dump()["properties"]["fmax"]["exclusiveMinimum"] == 0
    assert loaded.resources.walltime_s == 120.0  # a stored skill without a declared wall time keeps the default
