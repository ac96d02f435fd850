"""Reading a model's reply: the JSON object in it, parsed into a pydantic model, and replies that echo their schema."""

from __future__ import annotations

import json
import sys
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

__all__ = [
    "SCHEMA_WORDS",
    "SCHEMA_TYPES",
    "ECHO_PROBLEM",
    "echoes_schema",
    "parse_reply",
    "reply_json",
    "validation_summary",
]


# JSON-Schema keywords and type names: what a reply that echoes its schema is made of.
SCHEMA_WORDS = frozenset(
    {"$schema", "$defs", "$ref", "definitions", "properties", "additionalProperties", "required", "items", "prefixItems",
     "type", "title", "description", "default", "enum", "const", "anyOf", "allOf", "oneOf", "format", "examples",
     "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum", "pattern", "uniqueItems"}
)  # fmt: skip


SCHEMA_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})


def _object_span(text: str) -> str | None:
    """The text from the first ``{`` to the last ``}`` (one JSON object inside prose or a fence)."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else None


def parse_reply(text: str, schema: type[T]) -> T:
    """Validate a reply; tolerate a fenced block or prose around one JSON object."""
    try:
        return schema.model_validate_json(text)
    except ValidationError:
        span = _object_span(text)
        if span is None:
            raise
        return schema.model_validate_json(span)


def reply_json(text: str) -> Any:
    """The JSON value of a reply (or of the one object inside its prose); ``None`` when there is none."""
    for candidate in (text, _object_span(text)):
        try:
            return json.loads(candidate) if candidate else None
        except ValueError:
            continue
    return None


ECHO_PROBLEM = "the reply echoed the schema instead of filling it"


def echoes_schema(data: Any, schema: dict[str, Any]) -> bool:
    """Whether a reply (its JSON value) repeats ``schema`` or parts of it instead of filling it in.

    One field gives the echo away when it holds a schema node, one of the schema's descriptions, or a list of schema
    words with a JSON-Schema keyword in it. A bare type name (``"string"``, ``["string"]``) is a legitimate value on its
    own (a ``dtype``, the stdlib module ``string``): it counts only when the whole reply is made of such words.

    >>> schema = {"title": "Reply", "type": "object", "required": ["code"], "properties": {
    ...     "packages": {"type": "array", "items": {"type": "string"}, "description": "Packages it imports."},
    ...     "code": {"type": "string", "description": "The script."}}}
    >>> echoes_schema(schema, schema), echoes_schema({"packages": ["items", "type", "description"], "code": "x"}, schema)
    (True, True)
    >>> echoes_schema({"packages": {"type": "array", "items": {"type": "string"}}, "code": "x"}, schema)
    True
    >>> echoes_schema({"packages": ["string"], "code": "string"}, schema)
    True
    >>> echoes_schema({"packages": ["numpy"], "code": "print(type(1))"}, schema)
    False
    >>> echoes_schema({"packages": ["enum", "string"], "code": "import enum, string"}, schema)
    False
    """
    if not isinstance(data, dict):
        return False
    fields = schema.get("properties", {})
    if _is_schema_itself(data, fields, schema):
        return True
    filled = {name: data[name] for name in fields if name in data and data[name] not in (None, "", [], {})}
    if any(_echoes_field(value, fields[name], schema) for name, value in filled.items()):
        return True
    return _is_made_of_schema_words(filled, fields, schema)


def _is_schema_itself(data: dict[str, Any], fields: dict[str, Any], schema: dict[str, Any]) -> bool:
    """The reply's own keys are the schema's: ``properties``, ``$defs``, ``type: object``, its ``title``, keywords only."""
    stray = set(data) - set(fields)
    if stray & {"properties", "$defs", "definitions", "$schema"}:
        return True
    if "type" in stray and data["type"] in SCHEMA_TYPES:
        return True
    if "title" in stray and data["title"] == schema.get("title"):
        return True
    return bool(stray) and stray <= SCHEMA_WORDS and not set(data) & set(fields)


def _echoes_field(value: Any, node: dict[str, Any], schema: dict[str, Any]) -> bool:
    """A field's value that is an echo by itself: its own schema, a description, or a list of schema words.

    A list counts only when it holds a JSON-Schema keyword: a word of ``SCHEMA_WORDS`` that is neither one of the
    schema's field names (a bind reply listing other parameters) nor a stdlib module (``enum`` in ``packages``).
    Type names alone (``["string"]``) are left to ``_is_made_of_schema_words``.
    """
    if isinstance(value, dict):
        return _is_schema_node(value, node)
    if isinstance(value, str):
        return value.strip() in _descriptions(schema)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        words = {v.strip() for v in value}
        if words <= _descriptions(schema):
            return True
        names = _field_names(schema)
        keywords = (words & SCHEMA_WORDS) - names - sys.stdlib_module_names
        return len(words) >= 2 and bool(keywords) and words <= SCHEMA_WORDS | SCHEMA_TYPES | names
    return False


def _is_made_of_schema_words(filled: dict[str, Any], fields: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Every filled field holds only type names or keywords, and the reply is more than one optional field.

    ``{"packages": ["string"], "code": "string"}`` is an echo; ``{"dtype": "string"}`` (one optional bind parameter)
    and ``{"conflict": "string", "question": ""}`` are answers.
    """
    if not filled or not all(_is_schema_word_value(value, fields[name]) for name, value in filled.items()):
        return False
    return len(filled) >= 2 or bool(set(filled) & set(schema.get("required", ())))


def _is_schema_word_value(value: Any, node: dict[str, Any]) -> bool:
    """A type name or keyword (not one of the field's allowed values), a list of them, or a dict of keywords."""
    allowed = {v for sub in [node, *(node.get("anyOf") or node.get("oneOf") or [])] for v in sub.get("enum", ())}
    words = SCHEMA_TYPES | SCHEMA_WORDS
    if isinstance(value, str):
        return value.strip() in words and value.strip() not in allowed
    if isinstance(value, list):
        return bool(value) and all(isinstance(v, str) and v.strip() in words - allowed for v in value)
    if isinstance(value, dict):
        return bool(value) and set(value) <= SCHEMA_WORDS
    return False


def _is_schema_node(value: dict[str, Any], node: dict[str, Any]) -> bool:
    """A dict of schema keywords where the field takes no object, or one repeating the field's title or description."""
    if not value or not set(value) <= SCHEMA_WORDS:
        return False
    if not _types(node) & {None, "object"}:
        return True
    return any(key in node and value.get(key) == node[key] for key in ("title", "description"))


def _types(node: dict[str, Any]) -> set[str | None]:
    """The JSON types a schema node allows (``None``: unconstrained or a reference)."""
    return {sub.get("type") for sub in node.get("anyOf") or node.get("oneOf") or [node]}


def _walk(schema: Any) -> list[dict[str, Any]]:
    """Every schema node (dict) inside ``schema``, itself included."""
    if isinstance(schema, list):
        return [n for item in schema for n in _walk(item)]
    if not isinstance(schema, dict):
        return []
    return [schema, *(n for value in schema.values() for n in _walk(value))]


def _descriptions(schema: dict[str, Any]) -> set[str]:
    return {d.strip() for n in _walk(schema) if isinstance(d := n.get("description"), str) and d.strip()}


def _field_names(schema: dict[str, Any]) -> set[str]:
    return {name for n in _walk(schema) if isinstance(props := n.get("properties"), dict) for name in props}


def validation_summary(error: ValidationError) -> str:
    """The first three problems of a validation error, one short phrase each (what a re-ask tells the model)."""
    parts = [f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in error.errors()[:3]]
    return "; ".join(parts)
