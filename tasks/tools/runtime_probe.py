"""``runtime_probe_snippet``: code to paste where a KeyError or AttributeError happened.

The snippet prints what the object really offers (its keys or attributes) and the closest
matches to the name that failed, so the next run shows how to fix the access.
"""

from __future__ import annotations

import re

from tasks.tools.errors import ToolError

__all__ = ["runtime_probe_snippet"]

_IDENT = re.compile(r"[A-Za-z_][\w.\[\]'\"]*")

_TEMPLATE = '''# --- probe: what does {expr} offer? ---
import difflib as _difflib
_obj = {expr}
_avail = [str(k) for k in _obj.keys()] if hasattr(_obj, "keys") else [a for a in dir(_obj) if not a.startswith("_")]
print("PROBE type:", type(_obj).__name__)
print("PROBE available:", _avail[:80])
print("PROBE close to {wanted!s}:", _difflib.get_close_matches({wanted!r}, _avail, n=5, cutoff=0.4))
# --- end probe ---'''


def runtime_probe_snippet(error: str, expression: str = "") -> str:
    """Code to paste just before the failing line of a KeyError/AttributeError.

    ``error`` is the exception text (e.g. ``"'Structure' object has no attribute 'lattice_vectors'"``
    or ``"KeyError: 'energy'"``); ``expression`` is the object being accessed (e.g. ``"structure"``
    or ``"result"``), ``"obj"`` if not given. Run the script again and read the ``PROBE`` lines.
    """
    expr = expression.strip() or "obj"
    if not _IDENT.fullmatch(expr):
        raise ToolError(f"{expression!r} is not an expression to probe.", "pass the variable the failing line reads, e.g. 'structure'.")
    if m := re.search(r"has no attribute '(\w+)'", error):
        wanted = m.group(1)
    elif m := re.search(r"KeyError:?\s*['\"]?([^'\"\n]+)['\"]?", error):
        wanted = m.group(1).strip()
    else:
        raise ToolError(
            "the error is neither a KeyError nor an AttributeError.",
            "for other errors read the traceback, or use quick_introspect on the name that failed.",
        )
    return _TEMPLATE.format(expr=expr, wanted=wanted)
