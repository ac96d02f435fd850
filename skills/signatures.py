"""The positional parameter names of functions a script calls, read by importing their modules in the sandbox.

Lifting (``skills/lifting.py``) names a parameter after the function parameter its literal is passed
to: ``np.linspace(3.5, 3.7, 11)`` gives ``start``, ``stop`` and ``num``. Those functions live in
modules the generated script names, and importing a module runs it (``import ase.__main__`` runs
ASE's command line), so a probe imports them in the sandbox, never in evoskill's process. Its answer
is untrusted data: validated and bounded (``_Answer``), and only the names asked for are kept. When
the probe fails the names are not known, and lifting names the parameters from other clues.

>>> from deployments.settings import Settings
>>> names = SandboxSignatures(Settings())                                  # doctest: +SKIP
>>> names(["numpy.linspace"])["numpy.linspace"][:3]                        # doctest: +SKIP
['start', 'stop', 'num']
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from deployments.sandbox.execute import SandboxLimits, run_code
from deployments.settings import Settings

__all__ = ["ParameterNames", "SandboxSignatures", "positional_names"]

log = logging.getLogger(__name__)

ParameterNames = Callable[[list[str]], dict[str, list[str]]]
"""Dotted names of callables (``numpy.linspace``) → the names of their positional parameters, for those that are known."""

_TARGETS, _PARAMETERS, _NAME_CHARS, _TARGET_CHARS = 64, 64, 100, 300

_PROBE = r"""
import importlib, inspect, json, os, sys
os.dup2(2, 1)  # what the imports print goes to stderr: the answer is result.json alone
sys.stdout = sys.stderr
POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)

def resolve(dotted):  # as Python does for ``from a.b import c``: an attribute first, else a submodule
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for at, part in enumerate(parts[1:], start=2):
        obj = getattr(obj, part) if hasattr(obj, part) else importlib.import_module(".".join(parts[:at]))
    return obj

found = {}
for target in TARGETS:
    try:
        parameters = list(inspect.signature(resolve(target)).parameters.values())
    except BaseException:  # an import that fails or exits, a missing attribute, a callable without a signature
        continue
    names = []
    for parameter in parameters:
        if parameter.kind not in POSITIONAL:
            break
        if parameter.name not in ("self", "cls"):
            names.append(parameter.name)
    found[target] = names[:PARAMETERS]
with open("result.json", "w") as answer:
    json.dump({"positional": found}, answer)
"""


def _identifier(name: str) -> str:
    if not name.isidentifier():
        raise ValueError("not a Python identifier")
    return name


_Name = Annotated[str, Field(max_length=_NAME_CHARS), AfterValidator(_identifier)]
_Target = Annotated[str, Field(max_length=_TARGET_CHARS)]


class _Answer(BaseModel):
    """The probe's answer: each callable it could read, with its positional parameters' names."""

    model_config = ConfigDict(extra="forbid")
    positional: dict[_Target, Annotated[list[_Name], Field(max_length=_PARAMETERS)]] = Field(max_length=_TARGETS)


def positional_names(targets: list[str], settings: Settings) -> dict[str, list[str]]:
    """The positional parameter names of each callable in ``targets`` that the sandbox could import and read; ``{}`` when
    the probe failed or answered out of shape."""
    wanted = sorted(set(targets))[:_TARGETS]
    if not wanted:
        return {}
    script = f"import json\nTARGETS = json.loads({json.dumps(json.dumps(wanted))})\nPARAMETERS = {_PARAMETERS}\n{_PROBE}"
    execution = run_code(script, settings.run_root(), SandboxLimits.from_settings(settings), name="signatures")
    if not execution.ok:
        log.warning("reading signatures in the sandbox failed (%s); parameters are named without them", execution.error or "no answer")
        return {}
    try:
        answer = _Answer.model_validate(execution.answer)
    except ValidationError as exc:
        log.warning("the signature probe answered out of shape or bounds (%d problems); parameters are named without it", exc.error_count())
        return {}
    return {target: names for target, names in answer.positional.items() if target in wanted}


class SandboxSignatures:
    """A ``ParameterNames`` reading in the sandbox, each set of callables once (a compile lifts the same script twice)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._read: dict[tuple[str, ...], dict[str, list[str]]] = {}

    def __call__(self, targets: list[str]) -> dict[str, list[str]]:
        key = tuple(sorted(set(targets)))
        if key not in self._read:
            self._read[key] = positional_names(list(key), self.settings)
        return self._read[key]
