"""The API of compiled extension modules (RDKit's are C++), read by importing them in a child process.

Source parsing cannot see into ``.so`` files, so their functions and classes are listed by a
probe that imports them in a separate Python process with a timeout: an import's side effects
or a crash stay there. Signatures come from ``__text_signature__`` or, for Boost.Python
modules, from the first line of the docstring (``CalcExactMolWt( (Mol)mol [, …]) -> float``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from skills.documents import ClassInfo, FunctionInfo, PackageModule

__all__ = ["EXTENSION_SUFFIXES", "extension_module_name", "parse_extension_modules"]

EXTENSION_SUFFIXES = (".so", ".pyd")

_PROBE = r'''
import importlib, inspect, json, sys
def describe(obj):
    doc = inspect.getdoc(obj) or ""
    lines = [l for l in doc.splitlines()]
    sig = getattr(obj, "__text_signature__", None)
    if not sig and lines and "(" in lines[0] and ")" in lines[0]:
        sig, lines = lines[0].strip().rstrip(":").strip(), lines[1:]
    text = "\n".join(lines).split("C++ signature")[0].strip()
    return {"doc": " ".join(text.split("\n\n")[0].split())[:400], "sig": sig}
out = []
for name in json.loads(sys.argv[1]):
    entry = {"module": name, "functions": [], "classes": [], "error": None}
    try:
        mod = importlib.import_module(name)
    except BaseException as exc:
        entry["error"] = f"import failed: {type(exc).__name__}: {exc}"[:300]
        out.append(entry)
        continue
    for attr in sorted(dir(mod)):
        if attr.startswith("_"):
            continue
        obj = getattr(mod, attr, None)
        if getattr(obj, "__module__", name) not in (name, None) and not name.endswith(str(getattr(obj, "__module__", ""))):
            continue
        if inspect.isclass(obj):
            methods = [{"name": m, **describe(getattr(obj, m))} for m in sorted(vars(obj)) if not m.startswith("_") and callable(getattr(obj, m, None))]
            out_cls = {"name": attr, **describe(obj), "methods": methods[:80]}
            entry["classes"].append(out_cls)
        elif callable(obj):
            entry["functions"].append({"name": attr, **describe(obj)})
    out.append(entry)
print(json.dumps(out))
'''


def extension_module_name(path: Path) -> str:
    """``rdMolDescriptors.so`` or ``rdBase.cpython-311-x86_64-linux-gnu.so`` → ``rdMolDescriptors`` / ``rdBase``."""
    return path.name.split(".")[0]


def _function(entry: dict, owner: str) -> FunctionInfo:
    return FunctionInfo(name=entry["name"], qualname=f"{owner}.{entry['name']}", doc=entry.get("doc") or "", text_signature=entry.get("sig"))


def parse_extension_modules(package: str, modules: list[tuple[str, Path, str]], timeout_s: float) -> list[PackageModule]:
    """Describe extension modules ``(module name, file, stamp)`` with one child process; a failure is kept per module."""
    if not modules:
        return []
    names = [m for m, _, _ in modules]
    try:
        proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(names)], capture_output=True, text=True, timeout=max(timeout_s, 1.0))
        found = {e["module"]: e for e in json.loads(proc.stdout.strip().splitlines()[-1])} if proc.returncode == 0 and proc.stdout.strip() else {}
        problem = None if found else f"probe failed: {(proc.stderr.strip().splitlines() or ['no output'])[-1][:200]}"
    except subprocess.TimeoutExpired:
        found, problem = {}, f"probe timed out after {timeout_s:.0f} s"
    except json.JSONDecodeError:
        found, problem = {}, "probe printed no JSON"
    documents = []
    for module, path, stamp in modules:
        entry = found.get(module)
        doc = PackageModule(package=package, module=module, path=str(path), stamp=stamp)
        if entry is None or entry.get("error"):
            doc.error = (entry or {}).get("error") or problem
        else:
            doc.functions = [_function(f, module) for f in entry["functions"]]
            doc.classes = [
                ClassInfo(name=c["name"], qualname=f"{module}.{c['name']}", doc=c.get("doc") or "",
                          methods=[_function(m, f"{module}.{c['name']}") for m in c["methods"]])
                for c in entry["classes"]
            ]  # fmt: skip
        documents.append(doc)
    return documents
