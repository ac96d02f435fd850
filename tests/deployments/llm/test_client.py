import json
import pickle
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from pydantic import BaseModel

from deployments.llm.client import LLMClient, make_client
from deployments.llm.transport import (
    LLMBudgetExceeded,
    LLMSchemaError,
    LLMUnavailableError,
    OpenAITransport,
    ScriptedTransport,
)
from deployments.net import free_port
from deployments.settings import Settings
from tests.http_fakes import send_json


class Pair(BaseModel):
    name: str
    count: int


def client(replies, **settings):
    return LLMClient(ScriptedTransport(replies), Settings(**settings))


def test_structured_reply_is_validated_and_recorded():
    llm = client([{"stage": "research", "content": {"name": "N2", "count": 2}}])
    reply = llm.structured("research", "sys", "user", Pair)
    assert reply == Pair(name="N2", count=2)
    [call] = llm.calls
    assert (call.stage, call.model, call.ok) == ("research", "scripted", True)
    assert call.prompt_tokens > 0 and call.completion_tokens > 0 and call.latency_s >= 0


def test_fenced_json_is_accepted():
    llm = client([{"stage": "s", "text": 'Here:\n```json\n{"name": "x", "count": 1}\n```'}])
    assert llm.structured("s", "sys", "user", Pair).count == 1


def test_schema_violation_is_reasked_then_reported_with_stage():
    llm = client(
        [{"stage": "research", "content": {"name": "x"}}, {"stage": "research", "text": "not json"}],
        llm_schema_retries=1,
    )
    with pytest.raises(LLMSchemaError, match=r"stage research.*Pair after 2 tries"):
        llm.structured("research", "sys", "user", Pair)
    assert [c.ok for c in llm.calls] == [False, False]
    # The re-ask tells the model what was wrong.
    second_prompt = llm.transport.received[1][1][-1]["content"]
    assert "count" in second_prompt and "not valid" in second_prompt


def test_schema_reask_can_succeed():
    llm = client([{"stage": "s", "text": "{"}, {"stage": "s", "content": {"name": "x", "count": 3}}], llm_schema_retries=1)
    assert llm.structured("s", "sys", "user", Pair).count == 3
    assert [c.ok for c in llm.calls] == [False, True]


def test_reply_cut_at_max_tokens_is_named():
    llm = client([{"stage": "s", "text": '{"name": "aaaa', "finish_reason": "length"}], llm_schema_retries=0)
    with pytest.raises(LLMSchemaError, match="max_tokens"):
        llm.structured("s", "sys", "user", Pair)


def test_call_budget_is_enforced():
    replies = [{"stage": "s", "content": {"name": "x", "count": i}} for i in range(3)]
    llm = client(replies, max_llm_calls=2)
    llm.structured("s", "sys", "user", Pair)
    llm.structured("s", "sys", "user", Pair)
    with pytest.raises(LLMBudgetExceeded, match="call budget"):
        llm.structured("s", "sys", "user", Pair)


def test_token_budget_is_enforced():
    llm = client([{"stage": "s", "content": {"name": "x" * 400, "count": 1}}] * 2, max_llm_tokens=50)
    llm.structured("s", "sys", "user", Pair)
    with pytest.raises(LLMBudgetExceeded, match="token budget"):
        llm.structured("s", "sys", "user", Pair)


def test_sub_stage_calls_are_recorded_apart_and_share_one_budget():
    """Parallel debug branches ask as debug:<strategy>: each branch's calls are its own, the solve's budget is shared."""
    replies = [{"stage": "debug", "content": {"name": name, "count": i}} for i, name in enumerate("abc")]
    llm = client(replies, max_llm_calls=2)
    assert llm.structured("debug:x", "s", "u", Pair) == Pair(name="a", count=0)
    assert llm.structured("debug:y", "s", "u", Pair) == Pair(name="b", count=1)
    assert [c.stage for c in llm.calls_for("debug:x")] == ["debug:x"] and [c.stage for c in llm.calls_for("debug:y")] == ["debug:y"]
    assert llm.calls_for("debug") == [] and [stage for stage, _ in llm.transport.received] == ["debug:x", "debug:y"]
    with pytest.raises(LLMBudgetExceeded, match=r"stage debug:z: LLM call budget spent \(2/2\)"):
        llm.structured("debug:z", "s", "u", Pair)
    assert len(llm.calls) == 2 and len(llm.transport.received) == 2  # the refused call never reached the model


def test_a_copy_on_a_worker_spends_the_budget_left_and_its_calls_come_back_once():
    replies = [{"stage": stage, "content": {"name": "x", "count": i}} for i, stage in enumerate(["s", "debug", "debug"])]
    llm = client(replies, max_llm_calls=2)
    llm.structured("s", "sys", "user", Pair)
    branch = pickle.loads(pickle.dumps(llm))  # what a Dask worker gets
    assert branch.structured("debug:x", "sys", "user", Pair).count == 1
    with pytest.raises(LLMBudgetExceeded, match=r"\(2/2\)"):
        branch.structured("debug:x", "sys", "user", Pair)
    llm.absorb(branch.calls)
    llm.absorb(branch.calls)  # absorbing twice adds nothing
    assert [c.stage for c in llm.calls] == ["s", "debug:x"]
    assert llm.tokens_used() == sum(c.prompt_tokens + c.completion_tokens for c in branch.calls) > 0


def test_unreachable_endpoint_says_where_it_tried():
    url = f"http://127.0.0.1:{free_port()}/v1"
    llm = LLMClient(OpenAITransport(url, "k", "m", "json_schema", timeout_s=5), Settings())
    with pytest.raises(LLMUnavailableError, match=url.replace(".", r"\.")):
        llm.structured("research", "sys", "user", Pair)
    assert llm.calls[0].ok is False


class _FakeOpenAI(BaseHTTPRequestHandler):
    bodies: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _FakeOpenAI.bodies.append(body)
        reply = {
            "id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": '{"name": "n", "count": 7}'}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
        }  # fmt: skip
        send_json(self, 200, reply)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("mode, expected_type", [("json_schema", "json_schema"), ("json_object", "json_object")])
def test_openai_transport_sends_schema_per_backend_mode(mode, expected_type):
    server = HTTPServer(("127.0.0.1", 0), _FakeOpenAI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        llm = LLMClient(OpenAITransport(url, "secret-key", "tiny", mode, timeout_s=5), Settings())
        assert llm.structured("research", "sys", "user", Pair).count == 7
    finally:
        server.shutdown()
    fmt = _FakeOpenAI.bodies[-1]["response_format"]
    assert fmt["type"] == expected_type
    schema = fmt["json_schema"]["schema"] if mode == "json_schema" else fmt["schema"]
    assert set(schema["properties"]) == {"name", "count"}
    assert (llm.calls[0].prompt_tokens, llm.calls[0].completion_tokens, llm.calls[0].model) == (11, 5, "tiny")


def test_factory_needs_a_script_for_the_scripted_backend():
    with pytest.raises(Exception, match="EVOSKILL_LLM_SCRIPT"):
        make_client(Settings(llm_backend="scripted", llm_script=None))
