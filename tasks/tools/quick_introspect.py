"""``quick_introspect``: what a dotted name is in the installed packages, by static analysis (jedi).

Nothing is imported or executed, so packages with import side effects are safe. A name
that does not resolve gets close matches among the members of its nearest resolvable parent.
"""

from __future__ import annotations

import difflib
import re

import jedi
from pydantic import BaseModel, Field

from tasks.tools.errors import ToolError

__all__ = ["Introspection", "quick_introspect"]

_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


class Introspection(BaseModel):
    """What ``quick_introspect`` found about one name."""

    target: str
    found: bool = False
    full_name: str | None = None
    kind: str | None = Field(default=None, description="module, class, function, instance, ...")
    signatures: list[str] = Field(default_factory=list)
    doc: str = ""
    members: list[str] = Field(default_factory=list, description="Public attributes (inherited ones included).")
    suggestions: list[str] = Field(default_factory=list, description="Close matches when the name does not exist.")

    def __str__(self) -> str:
        if not self.found:
            close = f" Did you mean: {', '.join(self.suggestions)}?" if self.suggestions else ""
            return f"{self.target} does not exist.{close}"
        lines = [f"{self.full_name} ({self.kind})"] + self.signatures
        if self.doc:
            lines.append(self.doc)
        if self.members:
            lines.append("members: " + ", ".join(self.members[:60]))
        return "\n".join(lines)


def _infer(target: str) -> list[jedi.api.classes.Name]:
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        code = f"import {'.'.join(parts[:i])}\n{target}"
        try:
            found = jedi.Script(code).infer(2, len(target))
        except Exception:  # noqa: BLE001 - jedi fails on odd inputs; try a shorter module
            continue
        if found:
            return found
    return []


def _members(target: str) -> list[str]:
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        code = f"import {'.'.join(parts[:i])}\n{target}."
        try:
            names = jedi.Script(code).complete(2, len(target) + 1)
        except Exception:  # noqa: BLE001
            continue
        if names:
            return [n.name for n in names if not n.name.startswith("_")]
    return []


def quick_introspect(target: str) -> Introspection:
    """Look up a dotted name such as ``pymatgen.core.Structure`` or ``ase.eos.EquationOfState.fit``.

    Returns its full name, kind, signatures, the first paragraph of its docstring and its
    public members; for a misspelt name, the closest existing names of its parent.
    """
    target = target.strip()
    if not _DOTTED.fullmatch(target):
        raise ToolError(f"{target!r} is not a dotted Python name.", "pass e.g. 'pymatgen.core.Structure' or 'ase.eos'.")
    result = Introspection(target=target)
    found = _infer(target)
    if found:
        name = found[0]
        result.found = True
        result.full_name = name.full_name or target
        result.kind = name.type
        result.signatures = [s.to_string() for s in name.get_signatures()][:3]
        result.doc = " ".join(name.docstring(raw=True).strip().split("\n\n")[0].split())[:400]
        if name.type in ("module", "class", "instance"):
            result.members = _members(target)
        return result
    parent, _, leaf = target.rpartition(".")
    pool = _members(parent) if parent else []
    if not pool and not parent:
        from tasks.tools.package_graph import installed_top_level

        pool = installed_top_level()
    close = difflib.get_close_matches(leaf, pool, n=5, cutoff=0.6)
    close += [m for m in pool if leaf.lower() in m.lower() and m not in close][: max(0, 5 - len(close))]
    result.suggestions = [f"{parent}.{c}" if parent else c for c in close]
    return result
