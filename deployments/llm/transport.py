"""How a chat request reaches a model: the transports (OpenAI-compatible endpoints, scripted replies) and the LLM errors."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import openai

from deployments.files import file_lock, write_atomic

log = logging.getLogger(__name__)

__all__ = [
    "LLMError",
    "LLMTransientError",
    "LLMUnavailableError",
    "LLMSchemaError",
    "LLMBudgetExceeded",
    "ChatReply",
    "Transport",
    "STRUCTURED_MODES",
    "MODES_FILE",
    "OpenAITransport",
    "remembered_mode",
    "remember_mode",
    "ScriptedTransport",
]


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


STRUCTURED_MODES = ("json_schema", "json_object")
MODES_FILE = "llm-structured-output.json"  # under the workspace: the mode each endpoint accepts


# What an endpoint says when it does not take a response_format (llama.cpp: "Input should be 'text' or 'json_object'").
_FORMAT_REFUSAL = re.compile(r"response.?format|json.?schema|json_object", re.IGNORECASE)


class _FormatRefused(Exception):
    """The endpoint refused the request's ``response_format`` (not the request as such)."""

    def __init__(self, mode: str, status: int, message: str):
        super().__init__(f"{mode}: {status} {' '.join(message.split())[:300]}")


class OpenAITransport:
    """Chat completions through the ``openai`` SDK against any compatible endpoint.

    ``mode`` picks how the schema is sent: ``json_schema`` (OpenAI, vLLM), ``json_object`` with an
    inline ``schema`` (llama.cpp's server rejects the former), or ``auto``: the mode this endpoint
    (base URL + model) is known to accept, else ``json_schema`` and, when the endpoint refuses that
    response_format, ``json_object``. What works is remembered for the process and in ``modes_file``.
    """

    def __init__(
        self, base_url: str | None, api_key: str | None, model: str, mode: str, timeout_s: float, modes_file: Path | None = None
    ):
        self._args = (base_url, api_key, model, mode, timeout_s, modes_file)
        self.model = model
        self.mode = mode
        self.where = (base_url or "https://api.openai.com/v1").rstrip("/")
        self.modes_file = modes_file
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0)

    def __reduce__(self) -> tuple[Any, ...]:
        """Rebuilt from its arguments where it is unpickled (a Dask worker running a debug branch)."""
        return (OpenAITransport, self._args)

    @property
    def endpoint(self) -> str:
        """The key under which this endpoint's structured-output mode is remembered."""
        return f"{self.model} @ {self.where}"

    def _modes_to_try(self) -> list[str]:
        if self.mode != "auto":
            return [self.mode]
        first = remembered_mode(self.endpoint, self.modes_file) or STRUCTURED_MODES[0]
        return [first, *(m for m in STRUCTURED_MODES if m != first)]

    def chat(self, stage, messages, schema, max_tokens, temperature) -> ChatReply:
        refusals: list[_FormatRefused] = []
        for mode in self._modes_to_try():
            try:
                reply = self._request(mode, stage, messages, schema, max_tokens, temperature)
            except _FormatRefused as refusal:
                log.info("LLM endpoint %s refused response_format %s", self.endpoint, refusal)
                refusals.append(refusal)
                continue
            if self.mode == "auto":
                remember_mode(self.endpoint, mode, self.modes_file)
            return reply
        raise self._refused(refusals)

    def _refused(self, refusals: list[_FormatRefused]) -> LLMError:
        if self.mode != "auto":
            return LLMError(
                f"LLM endpoint {self.where} refused response_format {refusals[0]}; "
                "EVOSKILL_LLM_STRUCTURED_OUTPUT=auto finds the mode it accepts"
            )
        tried = "; ".join(str(r) for r in refusals)
        return LLMError(f"LLM endpoint {self.where} (model {self.model}) accepted no structured-output mode; tried {tried}")

    def _request(
        self, mode: str, stage: str, messages: list[dict[str, str]], schema: dict[str, Any], max_tokens: int, temperature: float
    ) -> ChatReply:
        """One request in ``mode``; ``_FormatRefused`` when the endpoint refuses that response_format."""
        try:
            resp = self._client.chat.completions.create(  # type: ignore[call-overload]  # plain-dict messages; llama.cpp's json_object + schema format
                model=self.model,
                messages=messages,
                response_format=_response_format(mode, stage, schema),
                max_tokens=max_tokens,
                temperature=temperature,
            )
        except openai.APITimeoutError as exc:
            raise LLMTransientError(f"LLM request to {self.where} timed out: {exc}") from exc
        except openai.APIConnectionError as exc:
            raise LLMUnavailableError(f"cannot reach the LLM endpoint at {self.where}: {exc}") from exc
        except openai.APIStatusError as exc:
            if exc.status_code in (400, 422, 500) and _FORMAT_REFUSAL.search(exc.message):
                raise _FormatRefused(mode, exc.status_code, exc.message) from exc
            if isinstance(exc, (openai.RateLimitError, openai.InternalServerError)):
                raise LLMTransientError(f"LLM endpoint {self.where} answered {exc.status_code}: {exc.message}") from exc
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


def _response_format(mode: str, stage: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` of a request: OpenAI's ``json_schema`` or llama.cpp's ``json_object`` + schema."""
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    name = re.sub(r"[^A-Za-z0-9_-]", "_", stage)[:64]
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}


# Structured-output modes found to work, per endpoint ("model @ base_url"), for this process.
_known_modes: dict[str, str] = {}
_known_lock = threading.Lock()


def _read_modes(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if v in STRUCTURED_MODES} if isinstance(data, dict) else {}


def remembered_mode(endpoint: str, path: Path | None) -> str | None:
    """The structured-output mode ``endpoint`` is known to accept: found by this process, else in ``path``."""
    with _known_lock:
        if endpoint not in _known_modes and (mode := _read_modes(path).get(endpoint)):
            _known_modes[endpoint] = mode
        return _known_modes.get(endpoint)


def remember_mode(endpoint: str, mode: str, path: Path | None) -> None:
    """Keep ``mode`` as the one ``endpoint`` accepts, for this process and (when given) in the JSON file ``path``."""
    with _known_lock:
        if _known_modes.get(endpoint) == mode:
            return
        _known_modes[endpoint] = mode
    if path is None:
        return
    try:
        with file_lock(path.with_suffix(".lock")):
            write_atomic(path, json.dumps(_read_modes(path) | {endpoint: mode}, indent=1, sort_keys=True))
    except OSError as exc:
        log.warning("could not record the structured-output mode of %s in %s: %s", endpoint, path, exc)


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
