"""A skill's parameters, typed: one ``Parameter`` each (kind, unit, bounds, derivation, the question's words for it).

A skill stores its parameters as the JSON schema of ``run()``'s keyword arguments, with evoskill's own keys beside the
standard ones (``kind``, ``unit``, ``derives``, ``source``, ``cue``, ``cue_after``). ``ParameterSchema`` reads that dict
once into typed fields and writes the same dict back; ``json_schema()`` is what a client sees (an MCP tool's input
schema): standard JSON-schema keywords only, the unit and kind said in the description.

>>> schema = ParameterSchema.model_validate({"type": "object", "properties": {
...     "formula": {"type": "string", "default": "N2", "kind": "formula", "source": "N2", "cue": ["of"], "derives": "elements"},
...     "a": {"type": "number", "default": 3.6, "kind": "number", "unit": "Å", "exclusiveMinimum": 0, "description": "a = 3.6 Å"}}})
>>> schema.properties["a"].exclusive_minimum, schema.properties["formula"].derives, schema.defaults()
(0, 'elements', {'formula': 'N2', 'a': 3.6})
>>> schema.json_schema()["properties"]["a"]
{'type': 'number', 'default': 3.6, 'description': 'a = 3.6 Å (a number in Å)', 'exclusiveMinimum': 0}
>>> schema.model_dump()["properties"]["formula"]
{'type': 'string', 'default': 'N2', 'kind': 'formula', 'derives': 'elements', 'source': 'N2', 'cue': ['of']}
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, SerializerFunctionWrapHandler, model_serializer

__all__ = ["JsonType", "Parameter", "ParameterSchema", "as_schema", "KIND_WORDS"]

JsonType = Literal["string", "number", "integer", "boolean", "array", "object"]

KIND_WORDS = {
    "formula": "a formula", "element": "an element symbol", "smiles": "a SMILES", "number": "a number", "integer": "an integer",
    "boolean": "true or false", "word": "a word", "string": "a text", "array": "a list", "object": "a mapping",
    "structure": "a crystal structure type (fcc, bcc, hcp, rocksalt, …)", "entries": "a list of [formula, number] entries",
    "crystal": "a crystal: space_group, species and fractional coords of its sites",
}  # fmt: skip
"""Each kind (and JSON type) of parameter, for people."""

_STANDARD = ("type", "default", "description", "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "enum", "items", "minItems")


class Parameter(BaseModel):
    """One keyword argument of a skill's ``run()``: its JSON type and verified default, what it is, its bounds, and the
    words of the question it was learned from (``source``, ``cue``, ``cue_after``: its teacher's, see ``disclosure``)."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True, extra="ignore", frozen=True)

    type: JsonType = "string"
    default: JsonValue = Field(default=None, description="The verified value (set unless the schema gives none).")
    description: str | None = Field(default=None, description="A short phrase: the question's words for it, or run()'s docstring.")
    kind: str | None = Field(default=None, description="formula, element, smiles, structure, entries, number, integer, word, …")
    unit: str | None = Field(default=None, description="The unit its numbers are in (Å, eV, K, …).")
    minimum: int | float | None = None
    exclusive_minimum: int | float | None = Field(default=None, alias="exclusiveMinimum")
    maximum: int | float | None = None
    exclusive_maximum: int | float | None = Field(default=None, alias="exclusiveMaximum")
    enum: list[str] | None = Field(default=None, description="The values it takes, where they are few (structure types).")
    items: dict[str, Any] | None = Field(default=None, description="The JSON schema of each item of a list.")
    min_items: int | None = Field(default=None, alias="minItems")
    derives: Literal["elements"] | None = Field(
        default=None, description="'elements': the code uses the formula's elements by position, so the make-up must match."
    )
    source: str | None = Field(default=None, description="The question's words the value was read from.")
    cue: list[str] | None = Field(default=None, description="Words just before the value in the question.")
    cue_after: list[str] | None = Field(default=None, description="Words just after the value in the question.")

    @model_serializer(mode="wrap")
    def _stored(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The stored dict: keys that were never set left out (a default of None that was set is kept)."""
        data: dict[str, Any] = handler(self)
        return {key: value for key, value in data.items() if value is not None or (key == "default" and "default" in self.model_fields_set)}

    @property
    def has_default(self) -> bool:
        return "default" in self.model_fields_set

    def bounds(self) -> dict[str, int | float]:
        """The numeric bounds it declares, by JSON-schema keyword: ``{"exclusiveMinimum": 0.0}``."""
        found = {"minimum": self.minimum, "exclusiveMinimum": self.exclusive_minimum, "maximum": self.maximum, "exclusiveMaximum": self.exclusive_maximum}
        return {key: value for key, value in found.items() if value is not None}

    def without_teacher_words(self) -> Parameter:
        """This parameter without the words of the question it was learned from."""
        return self.model_copy(update={"source": None, "cue": None, "cue_after": None, "description": None})

    def json_schema(self) -> dict[str, Any]:
        """Its standard JSON-schema form (no evoskill keys): the kind and unit said in the description."""
        said = KIND_WORDS.get(self.kind or "") or KIND_WORDS.get(self.type, "a value")
        if self.unit:
            said += f" in {self.unit}"
        if self.derives:
            said += " with the make-up of its default"
        described = said if not self.description else self.description if said in self.description else f"{self.description} ({said})"
        stored = self.model_dump()
        return {key: (described if key == "description" else stored[key]) for key in _STANDARD if key in stored or key == "description"}


class ParameterSchema(BaseModel):
    """The JSON schema of a skill's ``run()`` keyword arguments, each one a typed ``Parameter``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    type: Literal["object"] = "object"
    properties: dict[str, Parameter] = Field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.properties)

    def names(self) -> list[str]:
        return list(self.properties)

    def defaults(self) -> dict[str, Any]:
        """Every parameter's verified value, by name."""
        return {name: prop.default for name, prop in self.properties.items() if prop.has_default}

    def json_schema(self) -> dict[str, Any]:
        """The standard JSON schema a client validates arguments with: no unknown argument, none required (defaults)."""
        return {"type": "object", "properties": {name: prop.json_schema() for name, prop in self.properties.items()}, "additionalProperties": False}


def as_schema(schema: ParameterSchema | dict[str, Any]) -> ParameterSchema:
    """``schema`` typed (a stored dict read once)."""
    return schema if isinstance(schema, ParameterSchema) else ParameterSchema.model_validate(schema)
