"""A skill's parameters: read from ``run()``'s signature, checked against its JSON schema, parsed from ``k=v``.

>>> schema = signature_schema('def run(formula: str = "N2", fmax: float = 0.01) -> float:\\n    return 0.0\\n')
>>> sorted(schema["properties"]), schema["properties"]["fmax"]["default"]
(['fmax', 'formula'], 0.01)
>>> schema["properties"]["fmax"]["exclusiveMinimum"]  # a force threshold: its role bounds it
0
>>> validate_params(schema, {"formula": "O2"})
{'formula': 'O2', 'fmax': 0.01}
>>> try:
...     validate_params(schema, {"fmax": -1})
... except ParameterError as exc:
...     print(exc)
bad skill parameters — fmax: Input should be greater than 0 (got -1)
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from skills.parameter import Parameter, ParameterSchema, as_schema

__all__ = [
    "SkillCodeError", "is_count_setting", "ParameterError", "BOUND_KEYWORDS", "role_bounds", "with_bounds", "signature_schema", "run_summary", "params_model",
    "validate_params", "parse_assignments", "params_text", "load_param_sets",
]  # fmt: skip

_JSON_TYPES = {"str": "string", "float": "number", "int": "integer", "bool": "boolean", "list": "array", "dict": "object"}
_PY_TYPES: dict[str, type] = {"string": str, "number": float, "integer": int, "boolean": bool, "array": list, "object": dict}


BOUND_KEYWORDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
"""The JSON-schema keywords that bound a number (each one a pydantic constraint: ge, gt, le, lt)."""
_CONSTRAINTS = {"minimum": "ge", "exclusiveMinimum": "gt", "maximum": "le", "exclusiveMaximum": "lt"}
# Words that name a strictly positive setting: thresholds, tolerances, cutoffs, step sizes, widths.
_POSITIVE = frozenset(
    "fmax tol tolerance tolerances threshold thresh cutoff cutoffs rcut ecut encut ecutwfc ecutrho smearing timestep dt "
    "spacing radius width".split()
)
_POSITIVE_PHRASES = re.compile(r"\b(threshold|tolerance|cut-?off|time ?step|convergence criterion|smearing width)\b", re.IGNORECASE)
# Words that name a count of something (an integer that is at least 1).
_COUNTS = frozenset(
    "steps nsteps iterations iteration iter niter maxiter repeat repeats repetitions supercell kpoints kpts nkpts images "
    "nimages samples nsamples points npoints count".split()
)
_KELVIN = re.compile(r"\b(in|of)\s+K\b|\(K\)|\[K\]|\bkelvin\b")
_OTHER_TEMPERATURE_UNITS = re.compile(r"°|celsius|fahrenheit|\bin\s+[CF]\b", re.IGNORECASE)


class SkillCodeError(ValueError):
    """Skill code that does not define a usable ``run(**params)``."""


class ParameterError(ValueError):
    """Parameters that do not fit a skill's schema."""


def _run_function(code: str) -> ast.FunctionDef:
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise SkillCodeError(f"the skill code does not parse: {exc.msg} (line {exc.lineno})") from exc
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "run":
            return node
    raise SkillCodeError("the skill code defines no top-level function run(...)")


def is_count_setting(name: str) -> bool:
    """Whether a parameter's name is that of a count of how a computation is done (steps, iterations, k-points, a
    supercell's repeats, sample points: numpy's ``num``, ``n_…``), not of what is computed on."""
    words = [w for w in name.lower().split("_") if w]
    return bool(_COUNTS & set(words)) or words == ["num"] or (words[:1] in (["n"], ["num"]) and len(words) > 1)


def role_bounds(name: str, prop: Parameter | dict[str, Any]) -> dict[str, Any]:
    """The bounds a numeric parameter's physical role implies, read from its name and description; {} when none.

    A threshold, tolerance, cutoff, time step or width is > 0; a temperature in K is ≥ 0; an integer count
    (steps, iterations, k-points, a supercell's repeats, ``n_…``) is ≥ 1. A bound the parameter's default (its
    verified value) breaks is not the parameter's role: none is given.
    """
    typed = prop if isinstance(prop, Parameter) else Parameter.model_validate(prop)
    if typed.type not in ("number", "integer"):
        return {}
    words = [w for w in name.lower().split("_") if w]
    text = typed.description or ""
    found: dict[str, Any] = {}
    if typed.type == "integer" and (is_count_setting(name) or "number of" in text.lower()):
        found = {"minimum": 1}
    elif _POSITIVE & set(words) or _POSITIVE_PHRASES.search(text):
        found = {"exclusiveMinimum": 0}
    elif ({"temperature", "temp"} & set(words) or "temperature" in text.lower() or _KELVIN.search(text)) and not _OTHER_TEMPERATURE_UNITS.search(text):
        found = {"minimum": 0}
    default = typed.default
    if found and isinstance(default, (int, float)) and not isinstance(default, bool):
        if ("minimum" in found and default < found["minimum"]) or ("exclusiveMinimum" in found and default <= found["exclusiveMinimum"]):
            return {}
    return found


def with_bounds(schema: ParameterSchema | dict[str, Any]) -> ParameterSchema:
    """``schema`` with each numeric parameter's role bounds (``role_bounds``) added where it declares none of its own."""
    typed = as_schema(schema)
    bounded = {}
    for name, prop in typed.properties.items():
        implied = {} if prop.bounds() else role_bounds(name, prop)
        bounded[name] = prop.model_copy(update={_FIELDS[key]: value for key, value in implied.items()}) if implied else prop
    return typed.model_copy(update={"properties": bounded})


_FIELDS = {"minimum": "minimum", "exclusiveMinimum": "exclusive_minimum", "maximum": "maximum", "exclusiveMaximum": "exclusive_maximum"}


def signature_schema(code: str) -> dict[str, Any]:
    """The JSON schema of ``run``'s keyword parameters; each needs a type annotation and a literal default."""
    fn = _run_function(code)
    args = fn.args
    if args.vararg or args.kwarg or args.posonlyargs:
        raise SkillCodeError("run() must take named parameters only (no *args, **kwargs or positional-only)")
    names = args.args + args.kwonlyargs
    defaults = [None] * (len(args.args) - len(args.defaults)) + list(args.defaults) + list(args.kw_defaults)
    properties: dict[str, Any] = {}
    for arg, default in zip(names, defaults, strict=True):
        kind = ast.unparse(arg.annotation) if arg.annotation else None
        if kind not in _JSON_TYPES:
            raise SkillCodeError(f"parameter {arg.arg!r} needs one of the annotations {sorted(_JSON_TYPES)} (got {kind})")
        if default is None:
            raise SkillCodeError(f"parameter {arg.arg!r} needs a default value (the verified example)")
        try:
            value = ast.literal_eval(default)
        except ValueError as exc:
            raise SkillCodeError(f"the default of {arg.arg!r} must be a literal, not {ast.unparse(default)}") from exc
        properties[arg.arg] = {"type": _JSON_TYPES[kind], "default": value}
    doc = ast.get_docstring(fn) or ""
    for line in doc.splitlines():  # "name: description" lines document parameters
        name, _, text = line.strip().partition(":")
        if name in properties and text.strip():
            properties[name]["description"] = text.strip()
    return with_bounds({"type": "object", "properties": properties}).model_dump()


def run_summary(code: str) -> str:
    """The first line of ``run``'s docstring ('' when there is none)."""
    doc = ast.get_docstring(_run_function(code)) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def params_model(schema: ParameterSchema | dict[str, Any], optional: bool = False) -> type[BaseModel]:
    """A pydantic model of the schema (its bounds as constraints); with ``optional`` every field may be omitted (None)."""
    fields: dict[str, Any] = {}
    for name, prop in as_schema(schema).properties.items():
        kind = _PY_TYPES.get(prop.type, Any)
        bounds: dict[str, Any] = {_CONSTRAINTS[k]: v for k, v in prop.bounds().items() if kind in (int, float)}
        fields[name] = (kind | None, Field(None, **bounds)) if optional else (kind, Field(prop.default if prop.has_default else ..., **bounds))
    return create_model("SkillParams", __config__=ConfigDict(extra="forbid", strict=False), **fields)


def validate_params(schema: ParameterSchema | dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with defaults filled in, or ``ParameterError`` naming each wrong one (JSON values only: they travel)."""
    try:
        bound = params_model(schema)(**params).model_dump()
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'params'}: {e['msg']} (got {e.get('input')!r:.80})" for e in exc.errors())
        raise ParameterError(f"bad skill parameters — {problems}") from exc
    for name, value in bound.items():
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ParameterError(
                f"bad skill parameters — {name}: not JSON-serialisable ({exc}); pass numbers, strings, lists and dicts "
                "(a pymatgen object as its .as_dict(), a structure also as a CIF string)"
            ) from exc
    return bound


def parse_assignments(pairs: list[str]) -> dict[str, Any]:
    """``["formula=O2", "fmax=0.05"]`` → ``{"formula": "O2", "fmax": 0.05}`` (values read as JSON when they are)."""
    params: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            raise ParameterError(f"expected NAME=VALUE, got {pair!r}")
        try:
            params[name.strip()] = json.loads(text)
        except json.JSONDecodeError:
            params[name.strip()] = text
    return params


def params_text(params: dict[str, Any], limit: int = 80) -> str:
    """Parameters as ``parse_assignments`` reads them back, for people: ``formula=O2, fmax=0.01`` (long values cut).

    >>> params_text({"formula": "O2", "fmax": 0.01, "label": "1.5", "sites": [0, 1]})
    'formula=O2, fmax=0.01, label="1.5", sites=[0, 1]'
    """

    def shown(value: Any) -> str:
        text = json.dumps(value, default=str, ensure_ascii=False)
        if isinstance(value, str) and value.strip() == value and value:
            try:
                json.loads(value)
            except json.JSONDecodeError:
                text = value  # reads back as this same string
        return text if len(text) <= limit else text[: limit - 1] + "…"

    return ", ".join(f"{name}={shown(value)}" for name, value in params.items())


def load_param_sets(path: Path) -> list[dict[str, Any]]:
    """Parameter sets from a JSON list of objects or a JSON Lines file (one object a line)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ParameterError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        loaded = json.loads(text)
        sets = loaded if isinstance(loaded, list) else [loaded]
    except json.JSONDecodeError:
        sets = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    sets.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ParameterError(f"{path}:{number}: not JSON ({exc.msg}); expected a JSON list or one object a line") from exc
    wrong = [i for i, one in enumerate(sets) if not isinstance(one, dict)]
    if wrong:
        raise ParameterError(f"{path}: item {wrong[0]} is not an object of named parameters")
    if not sets:
        raise ParameterError(f"{path} holds no parameter sets")
    return sets
