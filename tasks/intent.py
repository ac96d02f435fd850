"""Intent recognition and tool retrieval: put only the tools a stage needs into its context.

The intent (domain and task type) is read from the query's words, without a model call. Tool
retrieval then keeps the tools of the stage's meta-skills that the settings allow, and ranks
them by BM25 over their descriptions against the query and the intent.

>>> recognise_intent("Relax bulk Cu with EMT and give the energy per atom").domain
'simulation'
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from deployments.settings import Settings
from skills.retrieval import TextIndex
from tasks.tools.registry import Tool, available_tools

__all__ = ["Intent", "recognise_intent", "retrieve_tools", "STAGE_TOOLS"]

Domain = Literal["simulation", "crystal_structure", "molecules", "thermodynamics", "data", "general"]
TaskType = Literal["compute", "convert", "analyse", "look_up"]

_DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "simulation": ("relax", "emt", "ase", "calculator", "optimi", "molecular dynamics", "md ", "force", "atomization", "lennard", "eos", "bulk modulus"),
    "crystal_structure": ("structure", "lattice", "space group", "spacegroup", "symmetry", "cif", "poscar", "xrd", "density", "spglib", "supercell", "primitive"),
    "molecules": ("smiles", "rdkit", "molecule", "fingerprint", "aromatic", "ring", "logp", "tpsa", "molecular weight", "inchi"),
    "thermodynamics": ("phase diagram", "hull", "formation energy", "decomposition", "stable", "stability", "entries", "reaction"),
    "data": ("json", "csv", "table", "file", "convert", "parse", "read", "write", "dataframe"),
}
_TYPE_WORDS: dict[str, tuple[str, ...]] = {
    "convert": ("convert", "write", "export", "round trip", "to cif", "to json", "format"),
    "analyse": ("analy", "compare", "which", "how many", "count", "classif", "identify"),
    "look_up": ("what is the", "look up", "find the", "version", "documentation"),
}

# Which meta-skills each stage may draw tools from.
STAGE_TOOLS: dict[str, tuple[str, ...]] = {
    "research": ("continuous_learning", "memory", "self_reflection", "environment"),
    "debug": ("self_reflection", "continuous_learning", "environment"),
    "planner": ("memory", "continuous_learning"),
}


class Intent(BaseModel):
    """What a query is about (domain) and what it asks for (task type)."""

    domain: Domain = "general"
    task_type: TaskType = "compute"
    packages: list[str] = Field(default_factory=list, description="Packages the query names.")


def recognise_intent(query: str) -> Intent:
    """The domain with most cue words in ``query``, its task type, and the packages it names."""
    text = f" {query.lower()} "
    scores = {d: sum(w in text for w in words) for d, words in _DOMAIN_WORDS.items()}
    domain = max(scores, key=lambda d: scores[d])
    task_type = next((t for t, words in _TYPE_WORDS.items() if any(w in text for w in words)), "compute")
    named = [p for p in ("pymatgen", "ase", "rdkit", "spglib", "smact", "numpy", "scipy", "phonopy") if re.search(rf"\b{p}\b", text)]
    return Intent(domain=domain if scores[domain] else "general", task_type=task_type, packages=named)  # type: ignore[arg-type]  # keys of _DOMAIN_WORDS/_TYPE_WORDS: the Literals' values


def retrieve_tools(query: str, stage: str, settings: Settings, k: int = 5) -> list[Tool]:
    """The ``k`` tools most relevant to ``query`` for ``stage``, among those the settings allow."""
    pool = [t for t in available_tools(settings) if t.meta in STAGE_TOOLS.get(stage, ())]
    if len(pool) <= k:
        return pool
    intent = recognise_intent(query)
    index = TextIndex([f"{t.name.replace('_', ' ')} {t.description}" for t in pool])
    ranked = [pool[h.position] for h in index.rank(f"{query} {intent.domain.replace('_', ' ')} {intent.task_type}", k=len(pool))]
    ranked += [t for t in pool if t not in ranked]  # tools with no word in common keep their registry order
    return ranked[:k]
