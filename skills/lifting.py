"""Generalise a plain script without a model: lift the constants the question states into ``run()`` parameters.

A program transformation. Each literal of the script (a formula, element symbol, SMILES or
number) that the question states, as written or through a name ("nitrogen molecule" ↔ ``N2``,
"rock-salt NaCl" ↔ ``Na`` + ``Cl``), becomes a typed parameter whose default is the literal,
named from its use (``fmax=``, ``Lattice.cubic(a)``) or its kind, described by the question's
own words. Literals that only follow from a stated formula (the ``N`` atom of ``N2``, the
``Na`` and ``Cl`` of ``NaCl``) are derived from that parameter instead of becoming parameters
of their own. Everything else stays a constant. A positional argument's name comes from the called
function's signature, which ``names`` reads (in the sandbox: ``skills/signatures.py``); lifting
itself imports nothing the script names. Whether each parameter matters, and whether the
result still reproduces the accepted answer, is checked by running it (``skills/compile.py``).

>>> script = 'from ase.build import molecule\\nm = molecule("N2")\\nprint(len(m) * 2.5)\\n'
>>> draft = lift_script(script, ["How many electrons... of a nitrogen molecule? Return a float."])
>>> sorted(draft.parameters), draft.parameters["formula"]["default"], draft.parameters["formula"]["source"]
(['formula'], 'N2', 'nitrogen molecule')
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import itertools
import keyword
import re
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skills.chemistry import canonical_smiles, formula_counts, formula_elements, is_element, is_formula, same_formula
from skills.crystals import CRYSTAL_KEYS, LATTICE_HELPER, ScriptCrystal, script_crystal
from skills.mentions import GENERIC_WORDS, Mention, find_mentions, words_after, words_before
from skills.numeric import entry_pairs, pair_mentions
from skills.parameter import Parameter
from skills.structures import BUILT, structure_mentions

if TYPE_CHECKING:
    from skills.signatures import ParameterNames

__all__ = ["LiftedDraft", "Lifted", "Site", "lift_script", "LiftError", "bound_name", "render", "where", "schema_of"]

# Literals that shape output or files, never the problem.
_FORMAT_KEYWORDS = frozenset(
    "indent logfile ndigits sep end file flush mode encoding verbose trajectory show_progress sort_keys fmt format "
    "filename fname path dpi loginterval append".split()
)
_INTROSPECTABLE = ("ase", "pymatgen", "rdkit", "spglib", "smact", "numpy")
# Crystallographic and structural numbers that do not depend on the material.
STRUCTURAL = (0.0, 1.0, 0.5, 0.25, 0.75, 1 / 3, 2 / 3, 0.125, 0.375, 0.625, 0.875)

ELEMENTS_HELPER = '''def _elements(formula: str) -> list[str]:
    """Element symbols of a formula in the order written."""
    import re

    return list(dict.fromkeys(re.findall(r"[A-Z][a-z]?", formula)))
'''


COUNTS_HELPER = '''def _counts(formula: str) -> dict[str, float]:
    """How many atoms of each element a formula has ("CO2" → C 1, O 2; "Mg(OH)2" → Mg 1, O 2, H 2)."""
    import re

    stack: list[dict[str, float]] = [{}]
    for element, amount, close, times in re.findall(r"([A-Z][a-z]?)(\\d*\\.?\\d*)|(\\(|\\))(\\d*\\.?\\d*)", formula):
        if close == "(":
            stack.append({})
        elif close == ")":
            group = stack.pop()
            for symbol, count in group.items():
                stack[-1][symbol] = stack[-1].get(symbol, 0) + count * float(times or 1)
        else:
            stack[-1][element] = stack[-1].get(element, 0) + float(amount or 1)
    return stack[0]
'''


class LiftError(ValueError):
    """A script the lifting generaliser cannot work on."""


@dataclass
class Site:
    """One literal in the script: its node, value and how it is used."""

    node: ast.expr
    value: Any
    keyword: str | None = None
    nested: bool = False  # inside a list or tuple: the keyword names the container (``positions=[[0, 0, 0], [1.5, 0, 0]]``)
    call: str | None = None
    position: int | None = None
    arithmetic: bool = False  # an operand of arithmetic (the 2 of 2 * e, the 1/3 of a cube root): part of the formula
    assigned: str | None = None  # the variable a bare ``x = 2.5`` gives it to


@dataclass
class Lifted:
    """A parameter: the mention it came from and the literal sites it replaces (``index`` for a derived element)."""

    name: str
    kind: str
    default: Any
    mention: Mention
    question: str
    sites: list[tuple[Site, int | None]] = field(default_factory=list)
    per_element: PerElement | None = None  # the one element's term, summed over every element of the formula


@dataclass
class PerElement:
    """Where a script computes a term for the one element of its formula and multiplies it by that element's count
    (``n = Atoms("N") ... 2 * e_n`` for N2): the statements of the term and the product, to sum over every element."""

    statements: list[int]  # indices in the module's body
    product: tuple[int, int, int, int]  # where ``2 * e_n`` stands
    result: str  # the term's variable (``e_n``)


@dataclass
class LiftedDraft:
    """The script rewritten as ``run(**parameters)`` plus the script's other constants (to test that they do not matter)."""

    code: str
    parameters: dict[str, dict[str, Any]]
    constants: list[Site]
    lifted: list[Lifted] = field(repr=False, default_factory=list)
    tree: ast.Module | None = field(repr=False, default=None)
    skipped: list[str] = field(default_factory=list)


def _number_node(node: ast.expr) -> float | int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        inner = node.operand.value
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner
    return None


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _key_names_value(key: str) -> bool:
    """Whether a dict's key can name the value it holds: not a module or builtin the generated code may use (``io``,
    ``sum``), nor an element's symbol (``{"Fe": 2.2}`` holds iron's moment: the value is not iron)."""
    return key.isidentifier() and key not in sys.stdlib_module_names and not hasattr(builtins, key) and not is_element(key)


def _sites(tree: ast.Module) -> list[Site]:
    """Every literal that could define the problem, with the call and keyword it feeds."""
    parents: dict[int, ast.AST] = {}
    for outer in ast.walk(tree):
        for inner in ast.iter_child_nodes(outer):
            parents[id(inner)] = outer
    found: list[Site] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr):
            continue
        value: Any = _number_node(node) if not isinstance(node, ast.Constant) or not isinstance(node.value, str) else node.value
        if value is None or (isinstance(node, ast.Constant) and isinstance(parents.get(id(node)), ast.UnaryOp)):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.Expr) or isinstance(parent, (ast.JoinedStr, ast.FormattedValue)):
            continue  # docstrings and f-strings
        if isinstance(parent, ast.Subscript) and parent.slice is node and not isinstance(value, str):
            continue  # an index, not a value (a key such as the "Mn" of guesses["Mn"] may be a stated value)
        site = Site(node=node, value=value)
        if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            site.assigned = parent.targets[0].id
        chain: ast.AST | None = parent
        child: ast.AST = node
        while chain is not None:
            if isinstance(chain, ast.BinOp):
                site.arithmetic = True
            if isinstance(chain, ast.keyword):
                site.keyword = site.keyword or chain.arg  # a dict's own key names it first: relax_kwargs={"fmax": 0.05}
            elif isinstance(chain, ast.Dict):
                key = chain.keys[chain.values.index(child)] if isinstance(child, ast.expr) and child in chain.values else None
                if site.keyword is None and isinstance(key, ast.Constant) and isinstance(key.value, str) and _key_names_value(key.value):
                    site.keyword = key.value
            elif isinstance(chain, ast.Call):
                site.call = _dotted(chain.func)
                if isinstance(child, ast.expr) and child in chain.args:
                    site.position = chain.args.index(child)
                break
            elif not isinstance(chain, (ast.List, ast.Tuple, ast.BinOp, ast.UnaryOp)):
                break
            if isinstance(chain, (ast.List, ast.Tuple)) and site.keyword is None:
                site.nested = True
            child, chain = chain, parents.get(id(chain))
        if site.keyword in _FORMAT_KEYWORDS or (site.call == "round" and site.position == 1):
            continue
        if isinstance(value, str) and (re.search(r"[/\\]|\.\w{2,4}$|\s", value) or not value.strip()):
            continue  # file names, paths and prose
        found.append(site)
    return found


def _table_of(node: ast.expr) -> list[list[Any]] | None:
    """The entries a literal list of pairs holds (``[("Li", 0.0), ("O2", 0.0), ...]``): a formula and a number each."""
    if not isinstance(node, (ast.List, ast.Tuple)) or len(node.elts) < 2:
        return None
    rows = []
    for item in node.elts:
        if not (isinstance(item, (ast.List, ast.Tuple)) and len(item.elts) == 2 and isinstance(item.elts[0], ast.Constant)):
            return None
        name, number = item.elts[0].value, _number_node(item.elts[1])
        if not isinstance(name, str) or not is_formula(name) or number is None:
            return None
        rows.append([name, number])
    return rows


def _lift_table(tree: ast.Module, question: str, mentions: list[Mention]) -> Lifted | None:
    """The script's list of (formula, number) entries as one parameter, where the question lists the same entries: other
    systems ("Mg 0.0, O2 0.0, MgO -6.2") then take the list whole, whatever its length."""
    pairs = entry_pairs(question, mentions)
    for node in (n for n in ast.walk(tree) if isinstance(n, ast.expr)):
        rows = _table_of(node)
        if rows is None or len(rows) != len(pairs):
            continue
        said = [(a.formula or a.element or "", b.number) for a, b in pairs]
        if all(any(same_formula(f, s) and n == v for s, v in said) for f, n in rows):
            start, end = min(m.start for pair in pairs for m in pair), max(m.end for pair in pairs for m in pair)
            mention = Mention(question[start:end], start, "name")
            return Lifted("", "entries", rows, mention, question, [(Site(node=node, value=rows), None)])
    return None


def _table_name(entry: Lifted) -> str:
    """What the question calls a list of entries, by the word before it ("total energies (eV): Li 0.0, ..."), else entries."""
    before = re.search(r"([A-Za-z]{3,})\s*(?:\([^)]*\))?\s*:?\s*$", entry.question[: entry.mention.start])
    word = before.group(1).lower() if before else ""
    return word if word and word not in GENERIC_WORDS and word not in ("these", "the", "with", "and", "from") else "entries"


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return any(inner is node for inner in ast.walk(outer))


def _matches(value: Any, mention: Mention) -> bool:
    """Whether a literal is what the mention states."""
    if isinstance(value, str):
        if mention.kind == "smiles" or (mention.smiles and not is_formula(value)):
            smiles = canonical_smiles(value)
            if smiles is not None and smiles == mention.smiles:
                return True
        if is_element(value) and mention.element == value:
            return True
        return is_formula(value) and mention.formula is not None and same_formula(value, mention.formula)
    return mention.kind == "number" and mention.number is not None and abs(float(value) - mention.number) <= 1e-12 * max(1, abs(value))


def _kind(value: Any, mention: Mention) -> str:
    if isinstance(value, str):
        if is_formula(value) and mention.formula is not None and same_formula(value, mention.formula):
            return "element" if is_element(value) and len(formula_elements(mention.formula)) == 1 and value == mention.formula else "formula"
        return "element" if is_element(value) else "smiles"
    return "integer" if isinstance(value, int) else "number"


def _call_target(call: str | None, aliases: dict[str, str]) -> str | None:
    """The dotted name of the called function (``np.linspace`` → ``numpy.linspace``), for scientific packages only."""
    if call is None:
        return None
    head, _, rest = call.partition(".")
    target = aliases.get(head)
    if target is None or target.split(".")[0] not in _INTROSPECTABLE:
        return None
    return f"{target}.{rest}" if rest else target


def _positional_name(site: Site, aliases: dict[str, str], signatures: dict[str, list[str]]) -> str | None:
    """The name of the called function's parameter that ``site`` is passed to by position, when its signature is known."""
    target = _call_target(site.call, aliases)
    names = signatures.get(target, []) if target is not None else []
    return names[site.position] if site.position is not None and site.position < len(names) else None


def _receivers(tree: ast.Module, aliases: dict[str, str]) -> dict[str, str]:
    """Variables made by a class of an imported package, with that class's dotted name: ``s = Structure(...)`` or
    ``s = Structure.from_spacegroup(...)`` (a constructor: a ``from_`` class method) gives ``s`` → pymatgen.core.Structure.
    A name assigned twice, or otherwise, is left out."""
    made: dict[str, str | None] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name, call = node.targets[0].id, node.value
        cls = None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
            cls = call.func.id
        elif isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and call.func.attr.startswith("from_"):
            cls = call.func.value.id
        target = aliases.get(cls or "")
        made[name] = target if name not in made and target and cls and cls[:1].isupper() else None
    return {name: target for name, target in made.items() if target is not None and name not in aliases}


_RANGE_WORD = r"(?:to|-|–|—|\.\.\.|…)"  # and "between X and Y" (_range_end)
_WORDS = r"(?:\b([a-z]{3,})\s+)?(?:\b([a-z]{3,})\s+)?\b([a-z]{3,}|[A-Za-z])"  # up to three words, or one symbol ("a")
_NOT_NAMES = frozenset("the and with from over between for all any each some these those range values value using use".split())
_UNIT_WORD = r"(?:Å|eV|K|GPa|nm|%)?"


def _range_end(entry: Lifted) -> str:
    """``min_<what>`` or ``max_<what>`` for a number that opens or closes a range the question names ("fragment path
    lengths 1 to 6", "lattice constants 3.5-3.7 Å", "between 2 and 4 neighbours"), else ''."""
    before, after = entry.question[: entry.mention.start], entry.question[entry.mention.end :]
    number = r"[-+]?\d+(?:\.\d+)?"
    ends = rf"(?:between\s+{number}\s*{_UNIT_WORD}\s*and|(?:from\s+)?{number}\s*{_UNIT_WORD}\s*{_RANGE_WORD})"  # "and" only after "between"
    opens = re.match(rf"\s*{_UNIT_WORD}\s*{_RANGE_WORD}\s*{number}", after)
    if opens or (re.match(rf"\s*{_UNIT_WORD}\s*and\s*{number}", after) and re.search(r"between\s+$", before)):
        named, end = re.search(rf"{_WORDS}\s*[=:]?\s+(?:from\s+|between\s+)?$", before), "min"
    elif re.search(rf"{ends}\s*$", before):
        opened = re.sub(rf"{ends}\s*$", "", before)
        named, end = re.search(rf"{_WORDS}\s*[=:]?\s*$", opened), "max"
    else:
        return ""
    if not named:
        return ""
    words = [w.lower() for w in named.groups() if w and w.lower() not in _NOT_NAMES][-2:]
    words = words[-1:] if words and len(words[-1]) == 1 else words  # a symbol ("a") names it alone
    singular = [w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w for w in words]
    return f"{end}_{'_'.join(singular)}" if singular else ""


_AT_MOST = r"(?:at most|no more than|not more than|up to|below|under|less than|<=|≤|<)"
_AT_LEAST = r"(?:at least|no less than|not less than|above|more than|>=|≥|>)"


def bound_name(entry: Lifted) -> str:
    """``max_<what>`` or ``min_<what>`` for a number the question gives as a bound ("molecular weight at most 500",
    "at most 10 acceptors", "at least 5 H-bond donors"), named by the words before the bound, else the ones after the
    number; else ''."""
    before, after = entry.question[: entry.mention.start], entry.question[entry.mention.end :]
    bound = re.search(rf"(?:{_WORDS}\s+)?(?:(?:of|is|be)\s+)?({_AT_MOST}|{_AT_LEAST})\s*$", before, flags=re.IGNORECASE)
    if not bound:
        return ""
    end = "max" if re.fullmatch(_AT_MOST, bound.group(4), flags=re.IGNORECASE) else "min"
    words = [w.lower() for w in bound.groups()[:3] if w]
    while any(w in ("and", "or", "but") for w in words):  # "donors and no more than 10": those words name another number
        words = words[words.index(next(w for w in words if w in ("and", "or", "but"))) + 1 :]
    words = [w for w in words if w not in _NOT_NAMES][-2:]
    if not words or len(words[-1]) == 1:
        named = re.match(rf"\s*{_UNIT_WORD}\s*((?:[A-Za-z]+-)+[a-z]{{3,}}(?:\s+[a-z]{{3,}})?|[a-z]{{3,}})", after)  # "H-bond acceptors"
        words = [w for w in re.split(r"[\s-]+", named.group(1).lower()) if w not in _NOT_NAMES] if named else []
    return f"{end}_{'_'.join(words)}" if words else ""


def _aliases(tree: ast.Module) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                found[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                found[a.asname or a.name] = f"{node.module}.{a.name}"
    return found


def _identifier(text: str) -> str:
    name = re.sub(r"\W+", "_", text.lower()).strip("_")
    return name if name and name.isidentifier() and not keyword.iskeyword(name) else ""


def _phrase(question: str, mention: Mention) -> str:
    """The question's words for a value: a name as written, a number with the words before it and its unit."""
    if mention.kind != "number":
        return mention.text
    before = question[: mention.start]
    words = re.findall(r"[^\s(]+", before)[-4:]
    unit = f" {mention.unit}" if mention.unit and not mention.text.endswith(mention.unit) else ""
    return re.sub(r"([=:])\s+", r"\1", " ".join([*words, mention.text]).strip()) + unit


def _pick(value: Any, mentions: list[Mention]) -> list[Mention]:
    return [m for m in mentions if _matches(value, m)]


def lift_script(script: str, questions: list[str], names: ParameterNames | None = None) -> LiftedDraft:
    """Rewrite ``script`` as ``run(...)`` with one parameter per constant that ``questions[0]`` states.

    ``names`` reads the positional parameter names of the functions the script calls (without it they are not known).
    Raises ``LiftError`` when the script does not parse or already defines ``run``.
    """
    try:
        tree = ast.parse(script)
    except SyntaxError as exc:
        raise LiftError(f"the script does not parse: {exc.msg} (line {exc.lineno})") from exc
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "run" for n in tree.body):
        raise LiftError("the script already defines run()")
    question = questions[0] if questions else ""
    found = find_mentions(question)
    # An element named as a part ("the Si-Si distance in silicon") is the substance named elsewhere, not a second statement of it.
    mentions = [m for m in found if not (m.part and any(o.element == m.element and not o.part for o in found))]
    sites = _sites(tree)
    table = _lift_table(tree, question, mentions)
    if table is not None:  # its literals are the list's; its mentions are no other literal's
        sites = [s for s in sites if not _inside(s.node, table.sites[0][0].node)]
        listed = pair_mentions(entry_pairs(question, mentions))
        mentions = [m for m in mentions if (m.start, m.text) not in listed]
    crystal = script_crystal(tree)
    if crystal is not None:  # its space group, species and coordinates are the crystal's, not literals of their own
        sites = [s for s in sites if not any(_inside(s.node, crystal.nodes[key]) for key in CRYSTAL_KEYS)]
    aliases = _aliases(tree)
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | set(aliases)
    lifted: dict[int, Lifted] = {} if table is None else {table.mention.start: table}  # by mention start
    skipped: list[str] = []
    # A structure type is lifted only from a script whose arithmetic holds no number that may be the structure's own
    # (the 4 atoms of an fcc cell in ``a = (4 * v0) ** (1 / 3)``).
    named = structure_mentions(question) if not any(s.arithmetic and s.value not in (0, 1) for s in sites) else []
    for site in sites:
        if site.arithmetic and type(site.value) is int and site.value == 1:
            continue  # the 1 of (n - 1) / n: the formula's, never all of "removing one atom" (which del atoms[0] does too)
        if isinstance(site.value, str) and site.value in BUILT:  # bulk("Mg", "hcp", ...) for "hcp magnesium"
            said = [m for m in named if m.name == site.value]
            if said and len({m.name for m in named}) == 1:
                mention = Mention(said[0].text, said[0].start, "name")
                lifted.setdefault(mention.start, Lifted("", "structure", site.value, mention, question)).sites.append((site, None))
            continue
        direct = _pick(site.value, mentions)
        if len(direct) > 1 and site.keyword:  # "sigma = 1.0 Å, epsilon = 1.0 eV": the keyword says which 1.0 it is
            keyed = [m for m in direct if re.search(rf"\b{re.escape(site.keyword)}\s*[=:]?\s*$", question[: m.start], re.IGNORECASE)]
            direct = keyed if len(keyed) == 1 else direct
        if len(direct) > 1 and max(b.start - a.end for a, b in itertools.pairwise(direct)) > 40:
            skipped.append(f"{site.value!r}: stated more than once, in different places")
            continue
        if len(direct) > 1 and isinstance(site.value, (int, float)):
            skipped.append(f"{site.value!r}: the question states this number {len(direct)} times")
            continue
        if direct:
            mention = direct[0]
            entry = lifted.setdefault(mention.start, Lifted("", _kind(site.value, mention), site.value, mention, question))
            if entry.default != site.value and not (isinstance(site.value, str) and entry.kind in ("formula", "element")):
                skipped.append(f"{site.value!r}: its mention already stands for {entry.default!r}")
                continue
            entry.sites.append((site, None))
            continue
        if isinstance(site.value, str) and is_element(site.value):
            parents = [m for m in mentions if m.formula and site.value in formula_elements(m.formula) and not is_element(m.formula)]
            if len({m.formula for m in parents}) == 1:
                mention = parents[0]
                written = next((m.text for m in parents if is_formula(m.text)), mention.formula or "")
                entry = lifted.setdefault(mention.start, Lifted("", "formula", written, mention, question))
                entry.sites.append((site, formula_elements(written).index(site.value)))
    params = list(lifted.values())
    for entry in params:
        direct_sites = [s for s, index in entry.sites if index is None]
        if entry.kind == "formula" and direct_sites:
            entry.default = direct_sites[0].value
        if entry.kind == "formula" and any(index is not None for _, index in entry.sites):
            if not all(index is None or index < len(formula_elements(entry.default)) for _, index in entry.sites):
                entry.sites = [(s, i) for s, i in entry.sites if i is None]
    params = [p for p in params if p.sites]
    if crystal is not None:
        params.append(_crystal_entry(crystal, question, mentions))
    for entry in params:
        entry.per_element = _per_element(tree, entry)
    used: set[str] = set()
    ordered = sorted(params, key=lambda p: p.mention.start)
    typed = {**_receivers(tree, aliases), **aliases}  # s = Structure.from_spacegroup(...): s.get_neighbors is Structure's
    unnamed = [p.sites[0][0] for p in ordered if _needs_signature(p, typed)]
    signatures = names(sorted({t for s in unnamed if (t := _call_target(s.call, typed))})) if names and unnamed else {}
    for entry in ordered:
        site = entry.sites[0][0]
        base = entry.kind if entry.kind in ("formula", "element", "smiles") else _table_name(entry) if entry.kind == "entries" else None
        if entry.kind == "structure":
            base = "crystal_structure"  # a script's own "structure" is often the pymatgen Structure
        if entry.kind == "crystal":
            base = "crystal"
        if base is None and site.assigned and len(entry.sites) == 1:
            base = site.assigned  # x = 2.5 becomes x = x: the parameter keeps the script's own name
            taken.discard(base)
        if base is None:
            base = (
                _identifier(_range_end(entry))  # "path lengths 1 to 6": min_path_length, max_path_length
                or _identifier(bound_name(entry))  # "molecular weight at most 500": max_molecular_weight
                or _identifier(_noun_before(entry) if site.nested else "")  # "from a starting distance of 1.5 Å", not positions
                or _identifier(site.keyword or "")
                or _identifier(_positional_name(site, typed, signatures) or "")
                or _identifier(_noun_after(entry))
                or "value"
            )
        name = base if base not in taken and base != "run" else f"{base}_value"
        suffix = 2
        while name in used:
            name, suffix = f"{base}_{suffix}", suffix + 1
        used.add(name)
        entry.name = name
    by_name = {entry.name: entry for entry in params}
    for entry in params:  # "3.5 to 3.7 Å": the range's unit, written once after its end, is its start's too
        end = by_name.get("max_" + entry.name.removeprefix("min_")) if entry.name.startswith("min_") else None
        if end is not None and entry.mention.unit is None and end.mention.unit:
            entry.mention = dataclasses.replace(entry.mention, unit=end.mention.unit)
    draft = LiftedDraft(code="", parameters={}, constants=[], lifted=params, tree=tree, skipped=skipped)
    lifted_nodes = {id(s.node) for p in params for s, _ in p.sites}
    draft.constants = [
        s for s in sites if id(s.node) not in lifted_nodes and isinstance(s.value, (int, float)) and not s.arithmetic and not _structural(s.value)
    ]
    draft.parameters = {p.name: schema_of(p) for p in params}
    draft.code = render(script, params, question)
    return draft


def _crystal_entry(crystal: ScriptCrystal, question: str, mentions: list[Mention]) -> Lifted:
    """The crystal a script builds with ``from_spacegroup`` as one parameter: its space group, species and coordinates (the
    lattice constants stay their own), named by the question's formula of its elements where there is one."""
    elements = set(crystal.value["species"])
    named = [m for m in mentions if m.formula and set(formula_elements(m.formula)) == elements]
    mention = named[0] if named else Mention(crystal.value["space_group"], len(question), "name")
    sites: list[tuple[Site, int | None]] = [(Site(node=crystal.nodes[key], value=crystal.value.get(key), keyword=key), None) for key in (*CRYSTAL_KEYS, "lattice")]
    return Lifted("", "crystal", crystal.value, mention, question, sites)


def _crystal_words(value: dict[str, Any]) -> str:
    """A crystal for people: "Fm-3m: Na (0, 0, 0), Cl (0.5, 0.5, 0.5)"."""
    sites = ", ".join(f"{s} ({', '.join(f'{x:.4g}' for x in xyz)})" for s, xyz in zip(value["species"], value["coords"], strict=False))
    return f"{value['space_group']}: {sites}"


def _key(node: ast.AST) -> tuple[int, int, int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0), getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)


def _per_element(tree: ast.Module, entry: Lifted) -> PerElement | None:
    """The plan to sum a one-element formula's term over every element, where the script's shape allows it: the element
    is used once, in an assignment whose variables feed only the next statements and, last, one product with the
    element's count (``2 * e_n`` for N2). None for any other shape (the formula then keeps its make-up)."""
    derived = [site for site, index in entry.sites if index is not None]
    if entry.kind != "formula" or len(derived) != 1 or any(i not in (None, 0) for _, i in entry.sites):
        return None
    counts = formula_counts(str(entry.default))
    if counts is None or len(counts) != 1:
        return None
    count = next(iter(counts.values()))
    holders = [i for i, stmt in enumerate(tree.body) if _inside(derived[0].node, stmt)]
    if len(holders) != 1:
        return None
    tainted: set[str] = set()
    statements: list[int] = []
    for index in range(holders[0], len(tree.body)):
        stmt = tree.body[index]
        reads = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if index != holders[0] and not reads & tainted:
            continue
        products = [
            n for n in ast.walk(stmt)
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)
            and {type(n.left), type(n.right)} == {ast.Constant, ast.Name}
            and next(x.value for x in (n.left, n.right) if isinstance(x, ast.Constant)) == count
            and next(x.id for x in (n.left, n.right) if isinstance(x, ast.Name)) in tainted
        ]  # fmt: skip
        if len(products) == 1:
            uses = [n for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id in tainted]
            later = any(isinstance(n, ast.Name) and n.id in tainted for s in tree.body[index + 1 :] for n in ast.walk(s))
            result = next(x.id for x in (products[0].left, products[0].right) if isinstance(x, ast.Name))
            return PerElement(statements, _key(products[0]), result) if len(uses) == 1 and not later else None
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            tainted |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        elif not (isinstance(stmt, ast.Expr) or (isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Attribute) for t in stmt.targets))):
            return None  # a loop, a branch, a function: not a straight term
        statements.append(index)
    return None


def _needs_signature(entry: Lifted, aliases: dict[str, str]) -> bool:
    """Whether naming ``entry`` may take its function's signature: a value passed by position, named by nothing before it."""
    site = entry.sites[0][0]
    if entry.kind in ("formula", "element", "smiles", "entries", "structure", "crystal") or (site.assigned and len(entry.sites) == 1) or _identifier(site.keyword or ""):
        return False
    return site.position is not None and _call_target(site.call, aliases) is not None


def _noun_before(entry: Lifted) -> str:
    """The words that name a number just before it ("a starting distance of 1.5 Å" → starting_distance), else ''."""
    before = re.search(r"\b([a-z]{3,})(?:\s+([a-z]{3,}))?\s+(?:of|=|is|at)\s*$", entry.question[: entry.mention.start])
    if not before:
        return ""
    words = [w for w in before.groups() if w and w not in GENERIC_WORDS and w not in ("the", "and", "with", "from")]
    return "_".join(words)


def _noun_after(entry: Lifted) -> str:
    """The word after a number when it names it ("3x3x3 supercell" → supercell), else ''."""
    after = re.match(r"\s*(?:Å|eV|K|GPa|nm)?\s*([a-z]{3,})\b", entry.question[entry.mention.end :])
    word = after.group(1) if after else ""
    return "" if word in GENERIC_WORDS or is_formula(word) else word


def _structural(value: float) -> bool:
    return any(abs(value - s) < 1e-9 for s in STRUCTURAL) or (isinstance(value, int) and -1 <= value <= 2)


def where(site: Site) -> str:
    """Where a literal is used, for people: ``bulk(a=)``, ``Lattice.cubic(argument 1)``."""
    if site.keyword:
        return f"{site.call or ''}({site.keyword}=)"
    if site.call:
        return f"{site.call}(argument {(site.position or 0) + 1})"
    return "a constant of the script"


def schema_of(entry: Lifted) -> dict[str, Any]:
    """The JSON-schema property of a lifted parameter, with its kind, the question's words for it and its bounds."""
    kind = entry.kind
    positive = kind in ("number", "integer") and isinstance(entry.default, (int, float)) and entry.default > 0
    if kind == "crystal":  # written by no one word of the question: said as the space group and sites it holds
        said = f"the crystal {_crystal_words(entry.default)}"
        return Parameter.model_validate({"type": "object", "default": entry.default, "kind": kind, "source": said, "description": said}).model_dump()
    prop = Parameter.model_validate({
        "type": {"formula": "string", "element": "string", "smiles": "string", "structure": "string", "integer": "integer", "entries": "array"}.get(kind, "number"),
        "default": entry.default,
        "kind": kind,
        "source": _phrase(entry.question, entry.mention),
        "cue": words_before(entry.question, entry.mention.start, 4),
        "cue_after": words_after(entry.question, entry.mention.end, 2),
        "description": _phrase(entry.question, entry.mention),
        "unit": entry.mention.unit or None,
        "enum": sorted(BUILT) if kind == "structure" else None,  # a crystal structure type ase's bulk builds
        "items": _ENTRY if kind == "entries" else None,  # [formula, number] pairs, at least two
        "minItems": 2 if kind == "entries" else None,
        "exclusiveMinimum": 0 if positive else None,
        # the script uses the formula's elements by position: the stoichiometry must match
        "derives": "elements" if kind == "formula" and entry.per_element is None and any(index is not None for _, index in entry.sites) else None,
    })  # fmt: skip
    return prop.model_dump()


_ENTRY = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "minItems": 2, "maxItems": 2}


def render(script: str, params: list[Lifted], question: str) -> str:
    """The script as a module defining ``run(**params)``; the last ``print(json.dumps(x))`` becomes ``return x``."""
    tree = ast.parse(script)
    replace: dict[tuple[int, int, int, int], ast.expr] = {}
    summed: dict[int, PerElement] = {}  # by the index of the term's first statement
    for entry in params:
        for site, index in entry.sites:
            key = (site.node.lineno, site.node.col_offset, site.node.end_lineno or 0, site.node.end_col_offset or 0)
            name = ast.Name(id=entry.name, ctx=ast.Load())
            if entry.kind == "crystal":  # crystal["species"]; the lattice's constructor chosen by crystal["space_group"]
                group = ast.Subscript(name, ast.Constant("space_group"), ast.Load())
                part = ast.Subscript(name, ast.Constant(site.keyword), ast.Load())
                replace[key] = ast.Call(ast.Name("_lattice", ast.Load()), [group], []) if site.keyword == "lattice" else part
                continue
            replace[key] = name if index is None else ast.Subscript(ast.Call(ast.Name("_elements", ast.Load()), [name], []), ast.Constant(index), ast.Load())
            if index is not None and entry.per_element is not None:
                replace[key] = ast.Name(id="_symbol", ctx=ast.Load())
        if entry.per_element is not None:  # count × term → the sum over the formula's elements of count × term
            plan = entry.per_element
            summed[plan.statements[0]] = plan
            each = ast.parse(f"sum(_count * _term(_symbol) for _symbol, _count in _counts({entry.name}).items())", mode="eval").body
            replace[plan.product] = each

    class _Swap(ast.NodeTransformer):
        def visit(self, node: ast.AST) -> Any:
            if isinstance(node, ast.expr) and hasattr(node, "lineno"):
                key = (node.lineno, node.col_offset, node.end_lineno or 0, node.end_col_offset or 0)
                if key in replace:
                    return replace[key]
            return super().visit(node)

    tree = _Swap().visit(tree)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    terms = {index for plan in summed.values() for index in plan.statements}
    body: list[ast.stmt] = []
    for position, node in enumerate(tree.body):
        if position in summed:
            plan = summed[position]
            term = "\n".join(ast.unparse(tree.body[i]) for i in plan.statements)
            body.extend(ast.parse(f"def _term(_symbol):\n{_indent(term)}\n    return {plan.result}\n").body)
        if position in terms:
            continue
        if node in imports:
            continue
        if isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') == '__name__ == "__main__"':
            body.extend(node.body)
        else:
            body.append(node)
    last = body[-1] if body else None
    returns = _printed_json(last)
    if returns is not None:
        body[-1] = ast.Return(returns)
        inner = "\n".join(ast.unparse(s) for s in body)
    else:
        captured = "\n".join(ast.unparse(s) for s in body) or "pass"
        inner = (
            "import contextlib, io, json\n_out = io.StringIO()\nwith contextlib.redirect_stdout(_out):\n"
            + _indent(captured)
            + "\n_lines = [line for line in _out.getvalue().splitlines() if line.strip()]\nreturn json.loads(_lines[-1])"
        )
    signature = ", ".join(f"{p.name}: {_annotation(p)} = {p.default!r}" for p in params)
    doc_lines = [question.replace("\\", "\\\\").replace('"""', "'''").strip() or "A lifted script."]
    if params:
        doc_lines += [""] + [f"{p.name}: {_phrase(question, p.mention) if p.kind != 'crystal' else 'the crystal ' + _crystal_words(p.default)}" for p in params]
    doc = "\n".join(doc_lines)
    helper = ELEMENTS_HELPER + "\n\n" if any(i is not None and p.per_element is None for p in params for _, i in p.sites) else ""
    helper += COUNTS_HELPER + "\n\n" if summed else ""
    helper += LATTICE_HELPER + "\n\n" if any(p.kind == "crystal" for p in params) else ""
    head = "\n".join(ast.unparse(n) for n in imports)
    return (
        (head + "\n\n\n" if head else "")
        + helper
        + f'def run({signature}):\n    """{_indent(doc).lstrip()}\n    """\n{_indent(inner)}\n\n\n'
        + 'if __name__ == "__main__":\n    import json as _json\n\n    print(_json.dumps(run()))\n'
    )


def _annotation(entry: Lifted) -> str:
    return {"integer": "int", "number": "float", "entries": "list", "crystal": "dict"}.get(entry.kind, "str")


def _printed_json(node: ast.stmt | None) -> ast.expr | None:
    """``x`` of a final ``print(json.dumps(x))``."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _dotted(node.value.func) == "print"):
        return None
    args = node.value.args
    if len(args) == 1 and not node.value.keywords and isinstance(args[0], ast.Call) and _dotted(args[0].func) in ("json.dumps", "dumps"):
        inner = args[0]
        if len(inner.args) == 1:
            return inner.args[0]
    return None


def _indent(text: str) -> str:
    return "\n".join(("    " + line) if line.strip() else "" for line in text.splitlines())
