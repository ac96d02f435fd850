"""Recall: what the store already knows about a query — matching skills, memories, preferences."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NONE

from deployments.progress import report
from deployments.settings import Settings
from skills.documents import Preference
from skills.store import SkillStore
from tasks.models import Recall, SkillMatch
from tasks.stage import Stopwatch
from tasks.tools.memory import search_memory

__all__ = ["recall"]


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
