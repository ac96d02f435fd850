"""The embedded llama.cpp server reached as a plain OpenAI-compatible endpoint, structured output ``auto``."""

import json

import pytest
from pydantic import BaseModel

import deployments.llm.transport
from deployments.llm.client import make_client
from deployments.llm.server import ensure_server, stop_server
from deployments.llm.transport import MODES_FILE
from deployments.settings import get_settings


class Answer(BaseModel):
    value: int


@pytest.mark.embedded
def test_auto_finds_the_mode_llama_cpp_accepts(workspace, monkeypatch):
    monkeypatch.setattr(deployments.llm.transport, "_known_modes", {})
    server = ensure_server(get_settings())
    try:
        monkeypatch.setenv("EVOSKILL_LLM_BACKEND", "openai")
        monkeypatch.setenv("EVOSKILL_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("EVOSKILL_LLM_MODEL", server.model)
        monkeypatch.setenv("EVOSKILL_LLM_STRUCTURED_OUTPUT", "auto")
        monkeypatch.setenv("EVOSKILL_LLM_TEMPERATURE", "0")
        llm = make_client(get_settings())
        reply = llm.structured("s", "You answer with JSON.", "How many atoms are in a water molecule?", Answer)
    finally:
        stop_server(get_settings())
    assert isinstance(reply, Answer)
    assert [c.ok for c in llm.calls] == [True] and server.model in llm.calls[0].model
    # llama.cpp refused json_schema; json_object (+ inline schema) worked and is remembered.
    assert json.loads((workspace / MODES_FILE).read_text()) == {f"{server.model} @ {server.base_url}": "json_object"}
