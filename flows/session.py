"""Session memory: multi-turn history under a session id owned by one user, resumable; 'satisfied' keeps the last exchange.

>>> from skills.store import open_store
>>> from deployments.settings import Settings
>>> store = open_store(Settings(store="memory", workspace="/tmp/evoskill-doctest"))
>>> Conversation.open(store, "lab-1", user="ada").session.user
'ada'
>>> Conversation.open(store, "lab-1", user="bob")  # doctest: +SKIP
Traceback (most recent call last):
SessionAccessError: no session 'lab-1' for user 'bob'
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from deployments.llm.client import make_client
from deployments.settings import Settings
from flows.learn_step import learn_from_solve
from skills.documents import Session, SessionTurn
from skills.store import SkillStore
from tasks.models import SolveResult, SolveTrajectory
from tasks.tools.memory import save_to_memory

__all__ = ["Conversation", "SessionAccessError", "is_feedback", "owned_session"]

_FEEDBACK = re.compile(r"^\s*(i am |i'm )?(satisfied|that'?s right|correct|thanks?,? (that )?works)[.! ]*$", re.IGNORECASE)


class SessionAccessError(KeyError):
    """The session does not exist for this user (another user's session is reported the same way)."""

    def __str__(self) -> str:
        return str(self.args[0])


def is_feedback(query: str) -> bool:
    """Whether the message is the user's 'satisfied' feedback rather than a question."""
    return bool(_FEEDBACK.match(query))


def owned_session(store: SkillStore, session_id: str, user: str) -> Session | None:
    """The stored session if ``user`` owns it; None if there is none; ``SessionAccessError`` if someone else does."""
    session = store.get(Session, session_id)
    if session is not None and session.user != user:
        raise SessionAccessError(f"no session {session_id!r} for user {user!r}")
    return session


@dataclass
class Conversation:
    store: SkillStore
    session: Session

    @classmethod
    def open(cls, store: SkillStore, session_id: str, user: str = "local") -> Conversation:
        """``user``'s stored session, or a new one under that id (``SessionAccessError`` if another user's)."""
        return cls(store, owned_session(store, session_id, user) or Session(id=session_id, user=user))

    def history(self, turns: int = 3) -> str:
        """The last answered turns as context for the next question."""
        lines = [f"Q: {t.query}\nA: {t.answer if t.answer else 'no answer'}" for t in self.session.turns[-turns:]]
        return "Earlier in this conversation:\n" + "\n".join(lines) if lines else ""

    def update(self, **changes: Any) -> Session:
        """Change the session's own fields (title, notes, bookmark, status, pending) and store it."""
        self.session = self.session.model_copy(update={**changes, "updated": datetime.now(timezone.utc)})
        self.store.put(self.session)
        return self.session

    def add(self, query: str, result: SolveResult) -> None:
        turn = SessionTurn(
            query=query, answer=result.formatted or result.question, success=result.success, path=result.path,
            code=result.code, output=result.output, images=result.images, error=result.error, stages=result.stages,
            wall_s=result.wall_s, skill_id=result.skill_id, params=result.params, suggestion=result.suggestion, flow_run_id=result.flow_run_id,
            trajectory_path=result.trajectory_path,
        )  # fmt: skip
        self._save(self.session.turns + [turn])

    def _save(self, turns: list[SessionTurn]) -> None:
        title = self.session.title or (turns[0].query[:80] if turns else "")
        self.update(turns=turns, title=title, pending=None)

    def feedback(self, started: float, settings: Settings) -> SolveResult:
        """Mark the last answered turn satisfied, save it to the user's memory and, if it was not yet, learn it as a skill."""
        answered = [i for i, t in enumerate(self.session.turns) if t.success]
        if not answered:
            self.update(pending=None)
            return SolveResult(success=False, path="feedback", session=self.session.id, error="nothing answered in this session yet")
        i = answered[-1]
        turn = self.session.turns[i]
        kept: dict[str, Any] = dict(condition=turn.query, source=f"session:{self.session.id}", user=self.session.user)
        if turn.code:
            save_to_memory(self.store, "execution", turn.query, turn.code, **kept)
        save_to_memory(self.store, "planning", turn.query, f"The user was satisfied with the {turn.path} path's answer {turn.answer}.", **kept)
        learned = self._learn(turn, settings) if settings.learn and not turn.skill_id else None
        turns = list(self.session.turns)
        turns[i] = turn.model_copy(update={"satisfied": True, "skill_id": learned or turn.skill_id})
        self._save(turns)
        saved = f"saved to memory: {turn.query[:80]}" + (f"; learned skill {learned}" if learned else "")
        return SolveResult(
            success=True, path="feedback", session=self.session.id, formatted=saved, skill_id=learned, learned=bool(learned),
            wall_s=round(time.perf_counter() - started, 4),
        )

    def _learn(self, turn: SessionTurn, settings: Settings) -> str | None:
        """Compile the turn's accepted code into a skill, from its stored trajectory (solves that deferred learning)."""
        if turn.path not in ("simple", "deep") or not turn.trajectory_path or not Path(turn.trajectory_path).is_file():
            return None
        t = SolveTrajectory.model_validate_json(Path(turn.trajectory_path).read_text())
        if t.answer is None or not t.answer.success:
            return None
        learned = learn_from_solve(t.request, t, turn.path, self.store, make_client(settings), settings)
        return learned.skill_id
