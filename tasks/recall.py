"""Recall: what the store already knows about a query — matching skills, memories, preferences."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE
from pydantic import BaseModel, Field

from skills.documents import Preference, Skill
from skills.store import SkillStore
from tasks.settings import Settings
from tasks.stage import Stopwatch, report
from tasks.tools.memory import MemoryHit, search_memory

__all__ = ["SkillMatch", "Recall", "recall"]


class SkillMatch(BaseModel):
    skill: Skill
    similarity: float


class Recall(BaseModel):
    skills: list[SkillMatch] = Field(default_factory=list)
    memories: list[MemoryHit] = Field(default_factory=list)
    preferences: list[Preference] = Field(default_factory=list)
    wall_s: float = 0.0

    def usable_skill(self, settings: Settings) -> SkillMatch | None:
        """The best skill close enough to answer; one without parameters must match almost exactly."""
        for match in self.skills:
            has_params = bool(match.skill.parameters.get("properties"))
            if match.similarity >= (settings.skill_match_threshold if has_params else settings.skill_exact_threshold):
                return match
        return None

    def context(self) -> str:
        """Recalled memories and preferences as prompt text (empty when there are none)."""
        parts = []
        for hit in self.memories:
            m = hit.memory
            label = "A strategy that worked" if m.kind == "planning" else "Code that solved a similar task"
            parts.append(f"{label} ({m.subtask[:200]}):\n{m.solution[:1500]}")
        parts += [f"User preference {p.key}: {p.value}" for p in self.preferences]
        return "\n\n".join(parts)


@task(name="recall", task_run_name="recall", cache_policy=NONE)
def recall(query: str, store: SkillStore, settings: Settings, user: str = "local") -> Recall:
    """Skills (everyone's), and ``user``'s memories and preferences, relevant to ``query`` (no LLM)."""
    watch = Stopwatch()
    skills = [SkillMatch(skill=s, similarity=round(v, 4)) for s, v in store.search_skills(query, k=settings.memory_top_k)]
    memories = search_memory(store, query, k=settings.memory_top_k, threshold=settings.memory_threshold, user=user)
    preferences = store.all(Preference, {"user": user})
    found = Recall(skills=skills, memories=memories, preferences=preferences, wall_s=watch.elapsed())
    best = f"best skill {skills[0].skill.id} ({skills[0].similarity:.2f})" if skills else "no skill"
    report("recall", "done", f"{best}, {len(memories)} memories")
    return found
