"""A skill run that failed on one of its parameter values, said in words: which parameter, which value, who refused it.

Read from the run's traceback (stderr), generically: a ``KeyError`` whose key is a parameter's value, or a
``ValueError`` whose message names a parameter's (text) value. Anything else is left as the raw error.

>>> stderr = '''Traceback (most recent call last):
...   File "<string>", line 4, in <module>
...   File "skill.py", line 12, in run
...   File "/venv/lib/python3.11/site-packages/ase/build/molecule.py", line 68, in molecule
...   File "/venv/lib/python3.11/site-packages/ase/collections/collection.py", line 55, in __getitem__
... KeyError: 'Xx9'
... '''
>>> explain_run_error(stderr, {"formula": "Xx9", "fmax": 0.01})
"The skill could not use formula='Xx9': ase.build.molecule() has no entry for 'Xx9'."
>>> explain_run_error("skill emt-v1 failed: exited with code 1: KeyError: 'Xx9'", {"formula": "Xx9"})
"The skill could not use formula='Xx9': it was looked up and not found (KeyError: 'Xx9')."
"""

from __future__ import annotations

import ast
import re
from typing import Any

__all__ = ["explain_run_error"]

SKILL_FILE = "skill.py"  # the name the runner compiles a skill's code under (skills/runner.py)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+, in (?P<func>\S+)', re.MULTILINE)
_RAISED = re.compile(r"(?:^|(?<=: ))(?P<type>[A-Za-z_][\w.]*(?:Error|Exception)): ?(?P<message>.*)$", re.MULTILINE)


def _callable(path: str, func: str) -> str:
    """``.../site-packages/ase/build/molecule.py`` + ``molecule`` → ``ase.build.molecule()``."""
    if path == SKILL_FILE:
        return "the skill's own code"
    tail = re.split(r"(?:site|dist)-packages/", path)[-1] if re.search(r"(?:site|dist)-packages/", path) else path.rsplit("/", 1)[-1]
    module = re.sub(r"(/__init__)?\.py$", "", tail).replace("/", ".")
    if func.startswith(("<", "_")):
        return module
    return f"{module}()" if module.rsplit(".", 1)[-1] == func else f"{module}.{func}()"


def _where(traceback: str) -> str | None:
    """What the skill's code called that raised: the frame right after the skill's last own frame (None when unknown)."""
    frames = [(m["file"], m["func"]) for m in _FRAME.finditer(traceback)]
    own = [i for i, (path, _) in enumerate(frames) if path == SKILL_FILE]
    if not own:
        return None
    callee = frames[own[-1] + 1] if own[-1] + 1 < len(frames) else frames[own[-1]]
    return _callable(*callee)


def _key(message: str) -> Any:
    try:
        return ast.literal_eval(message.strip())
    except (ValueError, SyntaxError):
        return message.strip()


def explain_run_error(error: str, params: dict[str, Any]) -> str | None:
    """A sentence naming the parameter whose value the run refused, from its stderr or error line; None when none did."""
    traceback = error.rsplit("Traceback (most recent call last):", 1)[-1]
    raised = list(_RAISED.finditer(traceback))
    if not raised:
        return None
    kind, message = raised[-1]["type"].rsplit(".", 1)[-1], raised[-1]["message"]
    where = _where(traceback)
    if kind in ("KeyError", "LookupError"):
        key = _key(message)
        for name, value in params.items():
            if value is not None and not isinstance(value, (dict, list)) and str(value) == str(key):
                found = f"{where} has no entry for {value!r}" if where else f"it was looked up and not found ({kind}: {value!r})"
                return f"The skill could not use {name}={value!r}: {found}."
    if kind == "ValueError":
        for name, value in params.items():
            if isinstance(value, str) and len(value) >= 2 and re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", message):
                return f"The skill could not use {name}={value!r}: {where or 'the skill'} refused it ({message.strip()[:200]})."
    return None
