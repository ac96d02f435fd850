"""The API of compiled extension modules (RDKit's are C++), read by importing them in the sandbox.

Source parsing cannot see into ``.so`` files, so their functions and classes are listed by a
probe that imports them in the sandbox (``deployments/sandbox``): an import's side effects or a
crash stay there, never in evoskill's process. Its answer is untrusted data: validated and bounded
(``_Module``), and a module it does not describe is recorded with the reason. Signatures come from
``__text_signature__`` or, for Boost.Python modules, from the first line of the docstring
(``CalcExactMolWt( (Mol)mol [, …]) -> float``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from deployments.sandbox.execute import SandboxLimits, run_code
from deployments.settings import Settings
from skills.documents import ClassInfo, FunctionInfo, PackageModule

__all__ = ["EXTENSION_SUFFIXES", "extension_module_name", "parse_extension_modules"]

EXTENSION_SUFFIXES = (".so", ".pyd")

# Bounds of the probe's answer: the probe keeps to them, and an answer beyond them is refused whole.
_NAME_CHARS, _DOC_CHARS, _SIGNATURE_CHARS, _ERROR_CHARS = 300, 400, 1000, 300
_MEMBERS, _METHODS = 2000, 80
_MIN_WALL_S = 10.0  # the sandbox's start-up and the imports, however little of the parse budget is left

_PROBE = r'''
import importlib, inspect, json, os, sys
os.dup2(2, 1)  # what the imports print goes to stderr: the answer is result.json alone
sys.stdout = sys.stderr
for root in ROOTS:  # the folders the modules were found in, searched last
    if root not in sys.path:
        sys.path.append(root)
def describe(obj):
    doc = inspect.getdoc(obj) or ""
    lines = [l for l in doc.splitlines()]
    sig = getattr(obj, "__text_signature__", None)
    if not sig and lines and "(" in lines[0] and ")" in lines[0]:
        sig, lines = lines[0].strip().rstrip(":").strip(), lines[1:]
    text = "\n".join(lines).split("C++ signature")[0].strip()
    return {"doc": " ".join(text.split("\n\n")[0].split())[:DOC], "sig": str(sig)[:SIGNATURE] if sig else None}
out = []
for name in NAMES:
    entry = {"module": name, "functions": [], "classes": [], "error": None}
    try:
        mod = importlib.import_module(name)
    except BaseException as exc:
        entry["error"] = f"import failed: {type(exc).__name__}: {exc}"[:ERROR]
        out.append(entry)
        continue
    for attr in sorted(dir(mod)):
        if attr.startswith("_") or len(attr) > NAME:
            continue
        try:
            obj = getattr(mod, attr, None)
            if getattr(obj, "__module__", name) not in (name, None) and not name.endswith(str(getattr(obj, "__module__", ""))):
                continue
            if inspect.isclass(obj):
                methods = [{"name": m, **describe(getattr(obj, m))} for m in sorted(vars(obj))
                           if not m.startswith("_") and len(m) <= NAME and callable(getattr(obj, m, None))]
                entry["classes"].append({"name": attr, **describe(obj), "methods": methods[:METHODS]})
            elif callable(obj):
                entry["functions"].append({"name": attr, **describe(obj)})
        except Exception:  # an attribute that cannot be read or described is left out
            continue
    entry["functions"], entry["classes"] = entry["functions"][:MEMBERS], entry["classes"][:MEMBERS]
    out.append(entry)
with open("result.json", "w") as answer:
    json.dump(out, answer)
'''


class _Member(BaseModel):
    """A function or method as the probe describes it."""

    model_config = ConfigDict(extra="forbid")
    name: Annotated[str, Field(min_length=1, max_length=_NAME_CHARS)]
    doc: Annotated[str, Field(max_length=_DOC_CHARS)] = ""
    sig: Annotated[str, Field(max_length=_SIGNATURE_CHARS)] | None = None


class _Class(_Member):
    methods: list[_Member] = Field(default_factory=list, max_length=_METHODS)


class _Module(BaseModel):
    """One module of the probe's answer."""

    model_config = ConfigDict(extra="forbid")
    module: Annotated[str, Field(max_length=_NAME_CHARS)]
    functions: list[_Member] = Field(default_factory=list, max_length=_MEMBERS)
    classes: list[_Class] = Field(default_factory=list, max_length=_MEMBERS)
    error: Annotated[str, Field(max_length=_ERROR_CHARS)] | None = None


def extension_module_name(path: Path) -> str:
    """``rdMolDescriptors.so`` or ``rdBase.cpython-311-x86_64-linux-gnu.so`` → ``rdMolDescriptors`` / ``rdBase``."""
    return path.name.split(".")[0]


def _function(member: _Member, owner: str) -> FunctionInfo:
    return FunctionInfo(name=member.name, qualname=f"{owner}.{member.name}", doc=member.doc, text_signature=member.sig)


def _import_root(module: str, path: Path) -> str:
    """The folder ``module`` is imported from: ``…/site-packages`` for ``rdkit/Chem/rdBase.so`` named ``rdkit.Chem.rdBase``."""
    return str(path.resolve().parents[module.count(".")])


def _probe_script(names: list[str], roots: list[str]) -> str:
    bounds = {"NAME": _NAME_CHARS, "DOC": _DOC_CHARS, "SIGNATURE": _SIGNATURE_CHARS, "ERROR": _ERROR_CHARS, "MEMBERS": _MEMBERS, "METHODS": _METHODS}
    header = ["import json", *(f"{key} = {value}" for key, value in bounds.items())]
    header += [f"NAMES = json.loads({json.dumps(json.dumps(names))})", f"ROOTS = json.loads({json.dumps(json.dumps(roots))})"]
    return "\n".join(header) + "\n" + _PROBE


def _probe(modules: list[tuple[str, Path, str]], timeout_s: float, settings: Settings) -> tuple[dict[str, _Module], str | None]:
    """The probe's description of each module it answered for, or why there is none."""
    names = [m for m, _, _ in modules]
    roots = sorted({_import_root(m, path) for m, path, _ in modules})
    limits = dataclasses.replace(SandboxLimits.from_settings(settings, inputs=roots), wall_s=max(timeout_s, _MIN_WALL_S))
    execution = run_code(_probe_script(names, roots), settings.run_root(), limits, name="extension-probe")
    if execution.timed_out:
        return {}, f"probe timed out after {limits.wall_s:.0f} s"
    if not execution.ok:
        return {}, f"probe failed: {(execution.error or 'no answer')[:200]}"
    try:
        answer = TypeAdapter(Annotated[list[_Module], Field(max_length=len(names))]).validate_python(execution.answer)
    except ValidationError as exc:
        return {}, f"probe answered out of shape or bounds ({exc.error_count()} problems)"
    return {entry.module: entry for entry in answer if entry.module in names}, None


def parse_extension_modules(package: str, modules: list[tuple[str, Path, str]], timeout_s: float, settings: Settings) -> list[PackageModule]:
    """Describe extension modules ``(module name, file, stamp)`` with one sandboxed probe; a failure is kept per module."""
    if not modules:
        return []
    found, problem = _probe(modules, timeout_s, settings)
    documents = []
    for module, path, stamp in modules:
        entry = found.get(module)
        doc = PackageModule(package=package, module=module, path=str(path), stamp=stamp)
        if entry is None or entry.error:
            doc.error = (entry.error if entry else None) or problem or "the probe did not describe it"
        else:
            doc.functions = [_function(f, module) for f in entry.functions]
            doc.classes = [
                ClassInfo(name=c.name, qualname=f"{module}.{c.name}", doc=c.doc, methods=[_function(m, f"{module}.{c.name}") for m in c.methods])
                for c in entry.classes
            ]
        documents.append(doc)
    return documents
