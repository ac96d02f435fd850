"""Session memory: multi-turn history under a session id, resumable; 'satisfied' keeps the last exchange."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from skills.documents import Session, SessionTurn
from skills.store import SkillStore
from tasks.models import SolveResult
from tasks.tools.memory import save_to_memory

__all__ = ["Conversation", "is_feedback"]

_FEEDBACK = re.compile(r"^\s*(i am |i'm )?(satisfied|that'?s right|correct|thanks?,? (that )?works)[.! ]*$", re.IGNORECASE)


def is_feedback(query: str) -> bool:
    """Whether the message is the user's 'satisfied' feedback rather than a question."""
    return bool(_FEEDBACK.match(query))


@dataclass
class Conversation:
    store: SkillStore
    session: Session

    @classmethod
    def open(cls, store: SkillStore, session_id: str) -> Conversation:
        """The stored session, or a new one under that id."""
        return cls(store, store.get(Session, session_id) or Session(id=session_id))

    def history(self, turns: int = 3) -> str:
        """The last answered turns as context for the next question."""
        lines = [f"Q: {t.query}\nA: {t.answer if t.success else 'no answer'}" for t in self.session.turns[-turns:]]
        return "Earlier in this conversation:\n" + "\n".join(lines) if lines else ""

    def add(self, query: str, result: SolveResult) -> None:
        turn = SessionTurn(
            query=query, answer=result.formatted or result.question, success=result.success, path=result.path,
            code=result.code if result.success else None, flow_run_id=result.flow_run_id,
        )
        self._save(self.session.turns + [turn])

    def _save(self, turns: list[SessionTurn]) -> None:
        title = self.session.title or (turns[0].query[:80] if turns else "")
        self.session = self.session.model_copy(update={"turns": turns, "title": title, "updated": datetime.now(timezone.utc)})
        self.store.put(self.session)

    def feedback(self, started: float) -> SolveResult:
        """Mark the last answered turn satisfied and save it to memory (execution + planning)."""
        answered = [i for i, t in enumerate(self.session.turns) if t.success]
        if not answered:
            return SolveResult(success=False, path="feedback", session=self.session.id, error="nothing answered in this session yet")
        i = answered[-1]
        turn = self.session.turns[i]
        if turn.code:
            save_to_memory(self.store, "execution", turn.query, turn.code, condition=turn.query, source=f"session:{self.session.id}")
        save_to_memory(
            self.store, "planning", turn.query, f"The user was satisfied with the {turn.path} path's answer {turn.answer}.",
            condition=turn.query, source=f"session:{self.session.id}",
        )
        turns = list(self.session.turns)
        turns[i] = turn.model_copy(update={"satisfied": True})
        self._save(turns)
        return SolveResult(
            success=True, path="feedback", session=self.session.id, formatted=f"saved to memory: {turn.query[:80]}",
            wall_s=round(time.perf_counter() - started, 4),
        )
