"""A skill's parameter schema as form fields, and a submitted form back as parameters.

>>> schema = {"properties": {"formula": {"type": "string", "default": "N2"}, "fmax": {"type": "number"}}}
>>> [(f.name, f.input_type, f.value) for f in form_fields(schema)]
[('formula', 'text', 'N2'), ('fmax', 'number', '')]
>>> form_params(schema, {"formula": "O2", "fmax": "0.05"})
{'formula': 'O2', 'fmax': 0.05}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

__all__ = ["FormField", "form_fields", "form_params"]

_INPUT_TYPES = {"number": "number", "integer": "number", "boolean": "checkbox"}


class FormField(BaseModel):
    name: str
    kind: str = "string"
    input_type: str = "text"
    description: str = ""
    value: str = ""
    required: bool = False
    step: str | None = None


def _shown(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def form_fields(schema: Mapping[str, Any], values: Mapping[str, Any] | None = None) -> list[FormField]:
    """One field per parameter, filled with ``values`` or the defaults; lists and objects are typed as JSON."""
    required = set(schema.get("required", []))
    fields = []
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type", "string")
        value = (values or {}).get(name, prop.get("default"))
        fields.append(
            FormField(
                name=name, kind=kind, input_type=_INPUT_TYPES.get(kind, "text"), description=prop.get("description", ""),
                value=_shown(value), required=name in required, step="1" if kind == "integer" else "any" if kind == "number" else None,
            )
        )  # fmt: skip
    return fields


def form_params(schema: Mapping[str, Any], form: Mapping[str, str]) -> dict[str, Any]:
    """Parameters from submitted text: strings as typed, booleans from checkboxes, the rest read as JSON.

    Empty fields are left out (their defaults apply); text that is not JSON is passed on as it is, for the
    skill's schema to reject with a message that names the parameter.
    """
    params: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type", "string")
        if kind == "boolean":
            params[name] = name in form
            continue
        text = form.get(name, "")
        if text == "":
            continue
        if kind == "string":
            params[name] = text
            continue
        try:
            params[name] = json.loads(text)
        except json.JSONDecodeError:
            params[name] = text
    return params
