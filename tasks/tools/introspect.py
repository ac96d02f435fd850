"""Facts about the APIs a failing script uses, gathered by a probe that runs in the sandbox.

From the script's imports and its error message the probe reports: close matches for a
missing attribute, import name or module; signatures of the functions and classes the
script imports; and the signature of a callable that was given wrong arguments.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from pydantic import BaseModel, Field

from deployments.sandbox.execute import SandboxLimits, run_code

__all__ = ["ProbeRequest", "probe_request", "introspection_notes"]


class ProbeRequest(BaseModel):
    modules: list[str] = Field(default_factory=list, description="Modules the script imports.")
    names: list[list[str]] = Field(default_factory=list, description="[module, name] pairs it imports.")
    missing: list[list[str]] = Field(default_factory=list, description="[module or class, name] not found.")
    missing_module: str | None = None
    called: list[str] = Field(default_factory=list, description="Callables given wrong arguments.")


_PROBE = r'''
import difflib, importlib, inspect, json, pkgutil
req = json.loads(REQUEST)
notes, loaded = [], {}
def load(name):
    try:
        loaded[name] = importlib.import_module(name)
    except Exception as exc:
        notes.append(f"import {name} fails: {type(exc).__name__}: {exc}")
for m in req["modules"]:
    load(m)
def sig(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
def doc(obj):
    d = inspect.getdoc(obj) or ""
    return d.strip().splitlines()[0][:160] if d.strip() else ""
def public(obj):
    return [a for a in dir(obj) if not a.startswith("_")]
def find(name):
    for mod in loaded.values():
        if hasattr(mod, name):
            return getattr(mod, name)
    return None
for owner, name in req["missing"]:
    obj = loaded.get(owner) or find(owner)
    if obj is None and "." in owner:
        load(owner); obj = loaded.get(owner)
    if obj is None:
        continue
    close = difflib.get_close_matches(name, public(obj), n=6, cutoff=0.5)
    notes.append(f"{owner} has no '{name}'; close matches: {close or 'none'}; it has: {public(obj)[:40]}")
if req["missing_module"]:
    parent, _, leaf = req["missing_module"].rpartition(".")
    try:
        pool = [m.name for m in pkgutil.iter_modules(importlib.import_module(parent).__path__)] if parent else [m.name for m in pkgutil.iter_modules()]
        notes.append(f"no module {req['missing_module']}; close: {difflib.get_close_matches(leaf, pool, n=6, cutoff=0.5)}")
    except Exception as exc:
        notes.append(f"no module {req['missing_module']} ({type(exc).__name__})")
for mod, name in req["names"]:
    obj = getattr(loaded.get(mod), name, None)
    if obj is not None and callable(obj):
        notes.append(f"{mod}.{name}{sig(obj)}  {doc(obj)}")
for name in req["called"]:
    obj = find(name)
    if obj is not None and callable(obj):
        notes.append(f"{name}{sig(obj)}  {doc(obj)}")
print(json.dumps(notes))
'''


def probe_request(code: str, error: str) -> ProbeRequest:
    """What to probe, from a script's imports and its error text."""
    req = ProbeRequest()
    try:
        tree = ast.parse(code)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            req.modules += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            req.modules.append(node.module)
            req.names += [[node.module, a.name] for a in node.names if a.name != "*"]
    if m := re.search(r"module '([\w.]+)' has no attribute '(\w+)'", error):
        req.missing.append([m.group(1), m.group(2)])
    if m := re.search(r"'(\w+)' object has no attribute '(\w+)'", error):
        req.missing.append([m.group(1), m.group(2)])
    if m := re.search(r"cannot import name '(\w+)' from '([\w.]+)'", error):
        req.missing.append([m.group(2), m.group(1)])
    if m := re.search(r"No module named '([\w.]+)'", error):
        req.missing_module = m.group(1)
        req.modules = [x for x in req.modules if not x.startswith(m.group(1))]
    req.called += re.findall(r"(\w+)\(\) (?:got an unexpected keyword|missing \d+ required|takes \d+)", error)
    req.modules = sorted(set(req.modules))
    return req


def introspection_notes(code: str, error: str, run_root: Path, limits: SandboxLimits) -> list[str]:
    """Run the probe for ``code`` failing with ``error``; return its notes (empty if it found none)."""
    request = probe_request(code, error)
    if not (request.modules or request.missing_module):
        return []
    probe = f"REQUEST = {json.dumps(request.model_dump_json())}\n{_PROBE}"
    result = run_code(probe, run_root, limits, name="probe")
    if not result.ok or not isinstance(result.answer, list):
        return [f"introspection probe failed: {result.error}"]
    return [str(note) for note in result.answer]
