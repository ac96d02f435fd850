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


def test_settings_read_again_follow_every_change_of_environment_file_and_folder(workspace, tmp_path, monkeypatch):
    """get_settings reads once per environment, config text and folder: each change is seen at the next call, and
    no caller's copy is another's."""
    config = tmp_path / "evoskill.toml"
    config.write_text('llm_model = "aa"\n')
    monkeypatch.setenv("EVOSKILL_CONFIG", str(config))
    first = get_settings()
    assert first.llm_model == "aa"
    first.install_allowlist.append("changed-by-a-caller")
    assert get_settings().install_allowlist == []
    config.write_text('llm_model = "bb"\n')  # same size, maybe the same time stamp
    assert get_settings().llm_model == "bb"
    monkeypatch.setenv("EVOSKILL_LLM_MODEL", "from-env")
    assert get_settings().llm_model == "from-env"
    monkeypatch.delenv("EVOSKILL_LLM_MODEL")
    monkeypatch.setenv("EVOSKILL_CONFIG", "evoskill.toml")  # relative: the folder it is read in
    (tmp_path / "here").mkdir()
    (tmp_path / "here" / "evoskill.toml").write_text('llm_model = "cc"\n')
    monkeypatch.chdir(tmp_path / "here")
    assert get_settings().llm_model == "cc"
    monkeypatch.chdir(tmp_path)
    assert get_settings().llm_model != "cc"
