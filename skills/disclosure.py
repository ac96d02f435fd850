"""What of a skill each user sees: its teacher's words only its teacher; everyone else a description made from its code.

A skill learned from a question carries the question's words: its description, its provenance (the question, its
other phrasings, the task and the flow run that show them), its parameters' ``source``, ``cue``, ``cue_after`` and
``description``, and the docstring of its ``run``. They are its teacher's (``provenance.user``: who asked, learned or
imported it) and shown to them alone. Every other user sees the skill as it works: what it returns, the library
calls of its code, its parameters' names, kinds, units and bounds, and its code without comments or docstrings.
A skill of the starter library (learned from evoskill's own task files: nobody's words) is shown whole to everyone;
a skill with no teacher recorded that is not one of them is shown to nobody whole. A question a skill grew by later
(``Provenance.asked_by``: its answer agreed with an accepted one, or its asker accepted it) is its asker's words, shown
to them alone.

>>> from skills.documents import Provenance, Skill, TestCase
>>> code = "from ase.build import molecule\\n\\n\\ndef run(formula: str = 'N2') -> int:\\n    '''For my secret project.'''\\n    return len(molecule(formula))\\n"
>>> skill = Skill(name="count", code=code, description="For my secret project.", output_type="int",
...               parameters={"properties": {"formula": {"type": "string", "default": "N2", "kind": "formula", "source": "N2"}}},
...               test_case=TestCase(expected=2), provenance=Provenance(query="For my secret project.", user="alice"))
>>> shared_view(skill, "alice") is skill
True
>>> bob = shared_view(skill, "bob")
>>> bob.description
'Returns an integer, computed with ase.build.molecule, from formula (a formula).'
>>> "secret" in bob.code or "secret" in bob.model_dump_json()
False
"""

from __future__ import annotations

import ast
import functools
import sys

from skills import STARTER_LIBRARY
from skills.documents import Provenance, Skill
from skills.domain import parameter_kind
from skills.parameter import KIND_WORDS, Parameter

__all__ = ["from_starter_library", "shows_words_to", "describe", "parameter_text", "library_calls", "bare_code", "shared_view", "imported_names"]

_RETURNS = {"float": "a number", "int": "an integer", "bool": "true or false", "str": "a text", "list": "a list", "any": "a value"}
_BOUNDS = {"exclusiveMinimum": ">", "minimum": "≥", "exclusiveMaximum": "<", "maximum": "≤"}
_MAX_CALLS = 8


@functools.cache
def _starter_task_ids() -> frozenset[str]:
    return frozenset(path.stem for path in STARTER_LIBRARY.glob("*.json"))


def from_starter_library(skill: Skill) -> bool:
    """Whether the skill was learned from one of evoskill's own starter task files, taught by nobody in particular."""
    made = skill.provenance
    return made.source == "learn" and made.user is None and made.task_id in _starter_task_ids()


def shows_words_to(skill: Skill, viewer: str | None) -> bool:
    """Whether ``viewer`` may see the words the skill was learned from: its teacher, or anyone for a starter skill."""
    teacher = skill.provenance.user
    return from_starter_library(skill) if teacher is None else teacher == viewer


def parameter_text(name: str, prop: Parameter) -> str:
    """A parameter as its schema has it: ``fmax (a number in eV/Å, > 0)``."""
    kind = parameter_kind(prop)
    what = KIND_WORDS.get(kind) or KIND_WORDS.get(prop.type, "a value")
    if prop.unit:
        what += f" in {prop.unit}"
    bounds = prop.bounds()
    details = [f"{sign} {bounds[key]}" for key, sign in _BOUNDS.items() if key in bounds]
    if prop.derives:
        details.append("with the make-up of its default")
    return f"{name} ({', '.join([what, *details])})"


def _parsed(code: str) -> list[ast.Module]:
    """The code's syntax tree, and that of a script it wraps (a literal skill's ``SCRIPT``)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    trees = [tree]
    for node in tree.body:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["SCRIPT"] and isinstance(node.value, ast.Constant):
            try:
                trees.append(ast.parse(str(node.value.value)))
            except SyntaxError:
                pass
    return trees


def imported_names(tree: ast.Module) -> dict[str, str]:
    """Local name → the dotted module or object it was imported as, from every import of the code."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def _dotted(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return [*base, node.attr] if base else None
    return None


def library_calls(code: str) -> list[str]:
    """The functions and classes of installed libraries (not the standard library) the code calls, by their dotted
    names, in order of first call."""
    calls: list[str] = []
    for tree in _parsed(code):
        imported = imported_names(tree)
        for node in ast.walk(tree):
            parts = _dotted(node.func) if isinstance(node, ast.Call) else None
            if not parts or parts[0] not in imported:
                continue
            name = ".".join([imported[parts[0]], *parts[1:]])
            if name.split(".")[0] not in sys.stdlib_module_names and name not in calls:
                calls.append(name)
    return calls[:_MAX_CALLS]


def describe(skill: Skill) -> str:
    """The skill as its code and parameters say: what it returns, the library calls that compute it, from which parameters."""
    returns = _RETURNS.get(skill.output_type, "a value") + (f" in {skill.unit}" if skill.unit else "")
    calls = library_calls(skill.code)
    with_what = f"computed with {', '.join(calls)}" if calls else f"computed with {', '.join(skill.packages)}" if skill.packages else ""
    properties = skill.parameters.properties
    from_what = (
        "from " + ", ".join(parameter_text(name, prop) for name, prop in properties.items())
        if properties else "with no parameters (the one case it was verified on)"
    )  # fmt: skip
    return f"Returns {returns}, " + (f"{with_what}, " if with_what else "") + f"{from_what}."


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        return body[1:] or [ast.Pass()]
    return body


def bare_code(code: str, docstring: str = "") -> str:
    """The code without comments or docstrings (a wrapped ``SCRIPT`` too); ``run`` documented by ``docstring`` instead."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return "# code that does not parse is not shown\n"
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            node.body = _without_docstring(node.body)
        if isinstance(node, ast.FunctionDef) and node.name == "run" and docstring:
            node.body.insert(0, ast.Expr(ast.Constant(docstring)))
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["SCRIPT"] and isinstance(node.value, ast.Constant):
            node.value = ast.Constant(bare_code(str(node.value.value)))
    return ast.unparse(tree) + "\n"


def _own_wordings(skill: Skill, viewer: str | None) -> Skill:
    """The skill without the questions other askers than ``viewer`` added to it (``Provenance.asked_by``)."""
    made = skill.provenance
    others = {query for query, asker in made.asked_by.items() if asker != viewer}
    if not others:
        return skill
    kept = made.model_copy(update={
        "queries": [q for q in made.queries if q not in others], "asked_by": {q: a for q, a in made.asked_by.items() if q not in others},
    })  # fmt: skip
    return skill.model_copy(update={"provenance": kept})


def shared_view(skill: Skill, viewer: str | None) -> Skill:
    """The skill as ``viewer`` sees it: whole for its teacher (and anyone, for a starter skill), else without its
    teacher's words — described from its code and parameters; a question another asker taught it is theirs alone
    (``Provenance.asked_by``). For showing and prompting only: run the stored skill."""
    if shows_words_to(skill, viewer):
        return _own_wordings(skill, viewer)
    properties = {
        name: prop.without_teacher_words().model_copy(update={"description": parameter_text(name, prop)})
        for name, prop in skill.parameters.properties.items()
    }
    description = describe(skill)
    docstring = "\n".join([description, "", *(f"{name}: {prop.description}" for name, prop in properties.items())]).strip()
    made = skill.provenance
    return skill.model_copy(
        update={
            "description": description,
            "parameters": skill.parameters.model_copy(update={"properties": properties}),
            "code": bare_code(skill.code, docstring),
            "provenance": Provenance(source=made.source, model=made.model, created=made.created),
        }
    )
