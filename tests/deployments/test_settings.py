import pytest
from pydantic import ValidationError

from deployments.settings import get_settings


def test_toml_then_env_then_overrides(workspace, tmp_path, monkeypatch):
    config = tmp_path / "evoskill.toml"
    config.write_text('llm_backend = "openai"\nllm_model = "from-toml"\ndebug_max_attempts = 5\n')
    monkeypatch.setenv("EVOSKILL_CONFIG", str(config))
    monkeypatch.setenv("EVOSKILL_LLM_MODEL", "from-env")
    settings = get_settings()
    assert (settings.llm_backend, settings.llm_model, settings.debug_max_attempts) == ("openai", "from-env", 5)
    assert get_settings(llm_model="given", llm_backend=None).llm_model == "given"


def test_bad_values_are_named(workspace, monkeypatch):
    monkeypatch.setenv("EVOSKILL_SANDBOX_WALL_S", "-1")
    with pytest.raises(ValidationError, match="sandbox_wall_s"):
        get_settings()


def test_api_key_falls_back_to_openai_and_stays_secret(workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-1")
    assert get_settings().api_key() == "sk-canary-1"
    monkeypatch.setenv("EVOSKILL_LLM_API_KEY", "sk-canary-2")
    settings = get_settings()
    assert settings.api_key() == "sk-canary-2"
    assert "sk-canary-2" not in repr(settings) and "sk-canary-2" not in settings.model_dump_json()
