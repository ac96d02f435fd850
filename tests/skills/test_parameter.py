"""A skill's parameters are typed once (``skills/parameter.py``): the stored dict round-trips, clients see standard JSON schema."""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft202012Validator

from skills.documents import Skill, TestCase
from skills.parameter import Parameter, ParameterSchema, as_schema

LIFTED = {
    "type": "object",
    "properties": {
        "formula": {"type": "string", "default": "N2", "kind": "formula", "source": "a nitrogen molecule", "cue": ["energy", "of"],
                    "cue_after": ["using"], "description": "a nitrogen molecule", "derives": "elements"},
        "a": {"type": "number", "default": 4.05, "kind": "number", "unit": "Å", "exclusiveMinimum": 0, "source": "4.05 Å", "cue": ["constant"],
              "cue_after": [], "description": "lattice constant 4.05 Å"},
        "structure": {"type": "string", "default": "fcc", "kind": "structure", "enum": ["bcc", "fcc"], "source": "fcc", "cue": [], "cue_after": []},
        "energies": {"type": "array", "default": [["Li", 0.0], ["O2", 0.0]], "kind": "entries", "minItems": 2,
                     "items": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "minItems": 2, "maxItems": 2}},
    },
}  # fmt: skip
EVOSKILL_KEYS = {"kind", "unit", "derives", "source", "cue", "cue_after"}


def test_a_stored_schema_reads_into_typed_fields_and_writes_back_the_same_dict():
    schema = ParameterSchema.model_validate(LIFTED)
    formula, a = schema.properties["formula"], schema.properties["a"]
    assert (formula.kind, formula.derives, formula.cue, formula.cue_after) == ("formula", "elements", ["energy", "of"], ["using"])
    assert (a.unit, a.exclusive_minimum, a.bounds()) == ("Å", 0, {"exclusiveMinimum": 0})
    assert schema.model_dump() == LIFTED
    assert json.loads(schema.model_dump_json()) == LIFTED
    assert schema.defaults() == {"formula": "N2", "a": 4.05, "structure": "fcc", "energies": [["Li", 0.0], ["O2", 0.0]]}


def test_a_skill_stores_its_parameters_as_before_and_reads_them_typed():
    code = "def run(formula: str = 'N2', a: float = 4.05, structure: str = 'fcc', energies: list = [['Li', 0.0], ['O2', 0.0]]):\n    return 1.0\n"
    skill = Skill(name="x", code=code, parameters=LIFTED, test_case=TestCase(expected=1.0))
    assert isinstance(skill.parameters, ParameterSchema) and skill.parameters.properties["a"].unit == "Å"
    stored = json.loads(skill.model_dump_json())
    assert stored["parameters"] == LIFTED
    assert Skill.model_validate(stored) == skill


def test_keys_it_does_not_know_are_dropped_not_passed_to_clients():
    schema = as_schema({"properties": {"x": {"type": "number", "default": 1.0, "x-vendor": True, "title": "X"}}})
    assert schema.model_dump() == {"type": "object", "properties": {"x": {"type": "number", "default": 1.0}}}


def test_a_schema_without_defaults_keeps_them_unset():
    schema = as_schema({"properties": {"x": {"type": "number"}, "label": {"type": "string", "default": None}}})
    assert not schema.properties["x"].has_default and schema.properties["label"].has_default
    assert schema.defaults() == {"label": None}
    assert schema.model_dump()["properties"] == {"x": {"type": "number"}, "label": {"type": "string", "default": None}}


def test_what_clients_see_is_standard_json_schema_with_kind_and_unit_in_words():
    shown = ParameterSchema.model_validate(LIFTED).json_schema()
    Draft202012Validator.check_schema(shown)
    for name, prop in shown["properties"].items():
        assert not EVOSKILL_KEYS & set(prop), name
    assert shown["properties"]["a"] == {"type": "number", "default": 4.05, "description": "lattice constant 4.05 Å (a number in Å)", "exclusiveMinimum": 0}
    assert "with the make-up of its default" in shown["properties"]["formula"]["description"]
    assert shown["properties"]["structure"]["enum"] == ["bcc", "fcc"]
    assert shown["additionalProperties"] is False
    validator = Draft202012Validator(shown)
    assert not list(validator.iter_errors({"a": 3.6, "structure": "bcc", "energies": [["Mg", 0.0], ["O2", -1.0]]}))
    assert {e.validator for e in validator.iter_errors({"a": 0, "structure": "A15", "energies": [["Mg", 0.0]], "b": 1})} == {
        "exclusiveMinimum", "enum", "minItems", "additionalProperties"
    }  # fmt: skip


def test_a_description_that_already_says_its_kind_is_not_said_twice():
    prop = Parameter(type="number", default=0.01, kind="number", unit="eV/Å", description="fmax (a number in eV/Å, > 0)")
    assert prop.json_schema()["description"] == "fmax (a number in eV/Å, > 0)"
    assert Parameter(type="integer", default=3).json_schema()["description"] == "an integer"


def test_the_parameter_model_is_the_only_reader_of_parameter_keys():
    """No module reads or writes a parameter's keys in a dict by string: each goes through ``Parameter``."""
    offenders = []
    for source in [*Path("skills").glob("*.py"), *Path("flows").rglob("*.py"), *Path("tasks").rglob("*.py")]:
        text = source.read_text()
        for key in ("cue", "cue_after", "derives", "exclusiveMinimum", "minimum", "unit", "kind", "source"):
            if f'prop.get("{key}")' in text or f"prop['{key}']" in text or f'prop["{key}"]' in text:
                offenders.append(f"{source}: {key}")
    assert offenders == []
