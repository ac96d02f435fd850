"""``EVOSKILL_LLM_STRUCTURED_OUTPUT=auto`` against a fake OpenAI-compatible endpoint on loopback."""

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from pydantic import BaseModel

import deployments.llm.transport
from deployments.llm.client import LLMClient, make_client
from deployments.llm.transport import (
    MODES_FILE,
    LLMError,
    LLMTransientError,
    OpenAITransport,
    remember_mode,
)
from deployments.settings import Settings, get_settings
from tests.http_fakes import send_json

# What llama_cpp.server 0.3.36 answers (500) when response_format is {"type": "json_schema", ...}.
LLAMA_CPP_REFUSAL = {
    "error": {
        "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
        "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
        "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/venv/lib/python3.11/site-packages/llama_cpp/server/app.py\", "
        "line 376, in create_chat_completion\n    POST /v1/chat/completions",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}


class Pair(BaseModel):
    name: str
    count: int


@dataclass
class Endpoint:
    """A fake endpoint: accepts the response_format types in ``accepts``, answers ``refusal`` to the others."""

    url: str = ""
    accepts: set[str] = field(default_factory=lambda: {"json_object"})
    refusal: tuple[int, dict] = (500, LLAMA_CPP_REFUSAL)
    bodies: list[dict] = field(default_factory=list)

    def formats(self) -> list[str]:
        """The response_format type of each request received, in order."""
        return [b["response_format"]["type"] for b in self.bodies]

    def answer(self, body: dict) -> tuple[int, dict]:
        self.bodies.append(body)
        if body["response_format"]["type"] not in self.accepts:
            return self.refusal
        return 200, {
            "id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": '{"name": "n", "count": 7}'}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
        }  # fmt: skip


@pytest.fixture
def endpoint():
    fake = Endpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server API
            status, reply = fake.answer(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            send_json(self, status, reply)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    fake.url = f"http://127.0.0.1:{server.server_port}/v1"
    yield fake
    server.shutdown()
    server.server_close()


@pytest.fixture
def fresh_process(monkeypatch):
    """No structured-output mode found by this process yet (as in a new process)."""
    monkeypatch.setattr(deployments.llm.transport, "_known_modes", {})


def auto_client(endpoint, tmp_path, mode="auto"):
    transport = OpenAITransport(endpoint.url, "k", "tiny", mode, timeout_s=5, modes_file=tmp_path / MODES_FILE)
    return LLMClient(transport, Settings())


def test_auto_falls_back_to_json_object_and_remembers_it(endpoint, tmp_path, fresh_process):
    llm = auto_client(endpoint, tmp_path)
    assert llm.structured("research", "sys", "user", Pair) == Pair(name="n", count=7)
    assert endpoint.formats() == ["json_schema", "json_object"]
    assert endpoint.bodies[1]["response_format"]["schema"] == Pair.model_json_schema()
    assert [(c.ok, c.completion_tokens) for c in llm.calls] == [(True, 5)]
    # The second call pays no failed attempt.
    assert llm.structured("research", "sys", "user", Pair).count == 7
    assert endpoint.formats() == ["json_schema", "json_object", "json_object"]
    assert json.loads((tmp_path / MODES_FILE).read_text()) == {f"tiny @ {endpoint.url}": "json_object"}


def test_an_endpoint_that_takes_json_schema_gets_one_request(endpoint, tmp_path, fresh_process):
    endpoint.accepts = {"json_schema"}
    assert auto_client(endpoint, tmp_path).structured("s", "sys", "user", Pair).count == 7
    assert endpoint.formats() == ["json_schema"]
    assert json.loads((tmp_path / MODES_FILE).read_text()) == {f"tiny @ {endpoint.url}": "json_schema"}


def test_another_process_reads_the_mode_from_the_workspace(endpoint, workspace, monkeypatch, fresh_process):
    settings = get_settings(llm_backend="openai", llm_base_url=endpoint.url, llm_model="tiny")
    make_client(settings).structured("s", "sys", "user", Pair)
    assert endpoint.formats() == ["json_schema", "json_object"]
    monkeypatch.setattr(deployments.llm.transport, "_known_modes", {})  # a new process: only the file remembers
    make_client(settings).structured("s", "sys", "user", Pair)
    assert endpoint.formats() == ["json_schema", "json_object", "json_object"]
    assert json.loads((workspace / MODES_FILE).read_text()) == {f"tiny @ {endpoint.url}": "json_object"}


def test_a_remembered_mode_the_endpoint_now_refuses_is_replaced(endpoint, tmp_path, fresh_process):
    # Another server on the same port (an embedded server's port reused) takes the other mode.
    remember_mode(f"tiny @ {endpoint.url}", "json_schema", tmp_path / MODES_FILE)
    assert auto_client(endpoint, tmp_path).structured("s", "sys", "user", Pair).count == 7
    assert endpoint.formats() == ["json_schema", "json_object"]
    assert json.loads((tmp_path / MODES_FILE).read_text()) == {f"tiny @ {endpoint.url}": "json_object"}


@pytest.mark.parametrize("mode, other", [("json_schema", "json_object"), ("json_object", "json_schema")])
def test_explicit_modes_are_never_overridden(endpoint, tmp_path, fresh_process, mode, other):
    endpoint.accepts = {other}
    remember_mode(f"tiny @ {endpoint.url}", other, tmp_path / MODES_FILE)
    llm = auto_client(endpoint, tmp_path, mode=mode)
    with pytest.raises(LLMError, match=f"refused response_format {mode}: 500 .*STRUCTURED_OUTPUT=auto") as caught:
        llm.structured("s", "sys", "user", Pair)
    assert not isinstance(caught.value, LLMTransientError)  # a refused format is no reason to retry the stage
    assert endpoint.formats() == [mode]
    assert [c.ok for c in llm.calls] == [False]


def test_neither_mode_accepted_is_one_clear_error(endpoint, tmp_path, fresh_process):
    endpoint.accepts = set()
    endpoint.refusal = (400, {"error": {"message": "response_format is not supported by this model", "type": "invalid_request_error"}})
    llm = auto_client(endpoint, tmp_path)
    with pytest.raises(LLMError, match=r"accepted no structured-output mode; tried json_schema: 400 .*; json_object: 400 .*not supported"):
        llm.structured("s", "sys", "user", Pair)
    assert endpoint.formats() == ["json_schema", "json_object"]
    assert not (tmp_path / MODES_FILE).exists()


@pytest.mark.parametrize(
    "status, message, error",
    [(500, "llama_decode returned -3 (out of memory)", LLMTransientError), (400, "the prompt is longer than the context", LLMError)],
)
def test_refusals_not_about_the_format_are_not_retried_in_another_mode(endpoint, tmp_path, fresh_process, status, message, error):
    endpoint.accepts = set()
    endpoint.refusal = (status, {"error": {"message": message, "type": "server_error"}})
    llm = auto_client(endpoint, tmp_path)
    with pytest.raises(LLMError, match=f"refused the request|answered {status}") as caught:
        llm.structured("s", "sys", "user", Pair)
    assert type(caught.value) is error
    assert endpoint.formats() == ["json_schema"]
    assert not (tmp_path / MODES_FILE).exists()


def test_an_unreadable_modes_file_is_ignored(endpoint, tmp_path, fresh_process):
    (tmp_path / MODES_FILE).write_text("not json")
    assert auto_client(endpoint, tmp_path).structured("s", "sys", "user", Pair).count == 7
    assert json.loads((tmp_path / MODES_FILE).read_text()) == {f"tiny @ {endpoint.url}": "json_object"}
