"""Whether a skill's code runs a machine-learned potential, which a GPU speeds up: read from what the code imports and
calls, never from its comments or strings."""

from __future__ import annotations

import ast

__all__ = ["prefers_gpu"]

_PACKAGES = frozenset("chgnet torch matgl mace sevenn fairchem orb_models mattersim".split())
_FORCE_FIELDS = frozenset("CHGNet M3GNet MACE GAP Nequip SevenNet MatterSim Orb".split())


def prefers_gpu(code: str) -> bool:
    """Whether the code imports a machine-learned potential's package (CHGNet, MACE, M3GNet, ... or torch itself) or asks
    atomate2 for one (``MLFF.CHGNet``, ``force_field_name="CHGNet"``).

    >>> prefers_gpu("relax = ForceFieldRelaxMaker(force_field_name='CHGNet')"), prefers_gpu("from ase.calculators.emt import EMT")
    (True, False)
    >>> prefers_gpu("import numpy as np, torch"), prefers_gpu("ForceFieldRelaxMaker(force_field_name=MLFF.CHGNet)")
    (True, True)
    >>> prefers_gpu('def run():\\n    \\"\\"\\"\\n    import torch is not needed here\\n    \\"\\"\\"\\n    return 1\\n')
    False
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] in _PACKAGES for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in _PACKAGES:
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "MLFF":
            return True
        if isinstance(node, ast.keyword) and node.arg == "force_field_name" and isinstance(node.value, ast.Constant):
            if str(node.value.value).removeprefix("MLFF.") in _FORCE_FIELDS:
                return True
    return False
