"""``solve`` sent to the workspace's resident service by a door that is not the CLI (the chat, the MCP server).

The door's own process then loads no solve flow: the service, already warm, answers; its stage lines come back as
the door's progress events (``deployments.progress.tell``), and the door's cancel closes the connection, which
cancels the solve there (its sandboxed runs killed, its flow run Cancelled). Where the service cannot start, the door
answers in its own process.

>>> outcome = solve_in_service(settings, "What is the density of NaCl?", session="s1", cancel=threading.Event())  # doctest: +SKIP
>>> outcome.result.formatted if outcome else "the service did not start"                                          # doctest: +SKIP
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from deployments.progress import Status, tell
from deployments.settings import Settings
from flows.interfaces.service.client import Streams, run_in_service
from tasks.models import SolveResult

__all__ = ["ServiceSolve", "solve_in_service", "STAGE_LINE", "STATUS_MARKS"]

STAGE_LINE = re.compile(r"^\[\s*[\d.]+s\] (?P<mark>[…·✓✗]) (?P<stage>.+?)(?:: (?P<detail>.*))?$")  # the CLI's progress lines
STATUS_MARKS: dict[str, Status] = {"…": "start", "·": "progress", "✓": "done", "✗": "failed"}


@dataclass
class ServiceSolve:
    """What the service gave: its ``result``, or ``error`` (cancelled, or the service's last words where it gave no answer)."""

    result: SolveResult | None = None
    error: str | None = None
    said: list[str] = field(default_factory=list)


def solve_in_service(
    settings: Settings, query: str, session: str, cancel: threading.Event, accept_suggestion: bool = False, user: str | None = None,
    defer_learning: bool = False,
) -> ServiceSolve | None:  # fmt: skip
    """Run ``solve`` in the workspace's service for ``session`` (and ``user``; ``defer_learning``: a skill is learned only
    when the user says 'satisfied', as in the chat); None where the service cannot start (the door then solves itself).
    Stage lines are told as progress events as they come; setting ``cancel`` cancels the solve in the service."""
    said: list[str] = []

    def line(text: str) -> None:
        said.append(text)
        heard = STAGE_LINE.match(text.strip())
        if heard:
            tell(heard["stage"], STATUS_MARKS[heard["mark"]], heard["detail"] or "")

    out: list[str] = []
    argv = [
        "solve", "--json", f"--session={session}", *(["--accept-suggestion"] if accept_suggestion else []),
        *([f"--as-user={user}"] if user else []), *(["--defer-learning"] if defer_learning else []), "--", query,
    ]  # fmt: skip
    log = settings.workspace.resolve() / "logs" / "service.log"
    code = run_in_service(argv, [], settings.workspace, log, settings.service_start_timeout_s, Streams.captured(out, line), cancel)
    if code is None:
        return None
    if cancel.is_set():
        return ServiceSolve(error="cancelled", said=said)
    try:
        return ServiceSolve(result=SolveResult.model_validate_json("".join(out)), said=said)
    except ValueError:
        why = [text for text in said if text.strip() and not STAGE_LINE.match(text.strip())][-3:]
        return ServiceSolve(error=f"solve failed in the workspace service (exit code {code}): " + (" ".join(why) or "no answer"), said=said)
