"""Memory tools: ``save_to_memory`` and ``search_memory`` over ChemAgent's three memories.

- planning: strategies that worked ("condition → how to approach it");
- execution: (condition, sub-task, sub-solution) units, e.g. a query and the code that answered it;
- knowledge: principles for the task at hand; kept for one task only (``TaskKnowledge``), never stored.

>>> from deployments.settings import Settings
>>> from skills.store import open_store
>>> store = open_store(Settings(store="memory", workspace="/tmp/evoskill-doctest"))
>>> _ = save_to_memory(store, "execution", "count RDKit fragments of a SMILES", "from rdkit import Chem ...", user="ada")
>>> [hit.memory.subtask for hit in search_memory(store, "how many RDKit fragments does this SMILES have", user="ada")]
['count RDKit fragments of a SMILES']
>>> search_memory(store, "how many RDKit fragments does this SMILES have", user="bob")
[]

As tools, both act for the caller: the toolbox binds ``user`` (never a model-visible argument).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from skills.documents import MemoryUnit
from skills.store import SkillStore

__all__ = ["MemoryHit", "save_to_memory", "search_memory", "TaskKnowledge"]


class MemoryHit(BaseModel):
    memory: MemoryUnit
    similarity: float


def save_to_memory(
    store: SkillStore,
    kind: Literal["planning", "execution", "knowledge"],
    subtask: str,
    solution: str,
    condition: str = "",
    source: str | None = None,
    knowledge: TaskKnowledge | None = None,
    user: str | None = None,
) -> MemoryUnit | None:
    """Keep what was learned. Planning and execution units are stored (saving twice keeps one), as ``user``'s
    when given, else as everyone's (the starter library; a tool call always has its caller's ``user``); knowledge
    goes to the task's ``TaskKnowledge`` only and is returned as None."""
    if kind == "knowledge":
        if knowledge is not None:
            knowledge.add(f"{subtask}: {solution}")
        return None
    unit = MemoryUnit(kind=kind, user=user, condition=condition, subtask=subtask, solution=solution, source=source)
    store.put(unit)
    return unit


def search_memory(
    store: SkillStore,
    query: str,
    kind: Literal["planning", "execution"] | None = None,
    k: int = 3,
    threshold: float = 0.3,
    *,
    user: str,
) -> list[MemoryHit]:
    """The ``k`` stored memories most similar to ``query`` (similarity ≥ ``threshold``), best first:
    everyone's and ``user``'s own, never another user's; each content once.

    The same content is often stored more than once: code learned under each phrasing of its question, a user's
    own copy of a starter memory. An execution memory is its code; a planning one its strategy for its subtask.
    """
    found = store.search_memories(query, k=4 * k, threshold=threshold, kind=kind, user=user)
    hits: dict[tuple[str, ...], MemoryHit] = {}
    for memory, similarity in found:
        code = memory.kind == "execution" and memory.solution.strip()
        key = (memory.kind, memory.solution.strip()) if code else (memory.kind, memory.subtask.strip(), memory.solution.strip())
        hits.setdefault(key, MemoryHit(memory=memory, similarity=similarity))  # the best ranked copy
    return list(hits.values())[:k]


@dataclass
class TaskKnowledge:
    """Principles and formulas noted while solving one task; discarded with it."""

    notes: list[str] = field(default_factory=list)

    def add(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)
