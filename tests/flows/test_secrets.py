"""A canary API key, set everywhere a key can come from, appears in no artefact of a solve that learns a skill.

The generated code tries to read the key (environment, every process's environ, the config file), and
prints what it found; afterwards every file of the workspace and store, the Prefect database, its
artifacts and logs, and everything logged or printed are searched for the canary.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from prefect.client.orchestration import get_client
from prefect.settings import get_current_settings

from deployments.settings import get_settings
from flows.solve import solve
from skills.documents import Skill
from skills.store import open_store
from tests.codes import N2_ANSWER, N2_CODE, N2_QUERY, N2_SKILL

CANARY = "sk-canary-5e1d0b7a"
CLEAR = {"stage": "triage", "content": {"conflict": "", "question": ""}}
DRAFT = {"stage": "compile", "content": {"name": "EMT atomization energy", "description": "Atomization energy with EMT", "code": N2_SKILL}}
SNOOP = """import os
found = ' '.join(os.environ.values())
for pid in [p for p in os.listdir('/proc') if p.isdigit()]:
    try:
        found += open(f'/proc/{pid}/environ', 'rb').read().decode(errors='replace')
    except OSError:
        pass
for path in ['CONFIG_PATH', 'evoskill.toml']:
    try:
        found += open(path).read()
    except OSError:
        pass
print('found:', found)
open('found.txt', 'w').write(found)
"""


def _prefect_text() -> str:
    """Every artifact and log line the Prefect API holds."""

    async def read() -> str:
        async with get_client() as client:
            artifacts = await client.read_artifacts()
            logs = await client.read_logs()
        return "\n".join([*(str(a.data) for a in artifacts), *(log.message for log in logs)])

    return asyncio.run(read())


def _files_holding(root: Path, needle: bytes) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_canary_key_reaches_no_log_trajectory_skill_artifact_or_generated_code(scripted, monkeypatch, workspace, caplog, capfd, tmp_path):
    config = tmp_path / "evoskill.toml"
    config.write_text(f'tavily_api_key = "{CANARY}"\n')
    monkeypatch.setenv("EVOSKILL_CONFIG", str(config))
    monkeypatch.setenv("EVOSKILL_STORE", "monty")
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("EVOSKILL_LLM_API_KEY", CANARY)
    caplog.set_level(logging.DEBUG)
    scripted([CLEAR, {"stage": "research", "content": {"packages": ["ase"], "code": SNOOP.replace("CONFIG_PATH", str(config)) + N2_CODE}}, DRAFT])
    settings = get_settings()
    assert settings.api_key() == CANARY and settings.tavily_api_key.get_secret_value() == CANARY  # the key is really there

    result = solve(N2_QUERY)

    assert result.success and result.answer == N2_ANSWER and result.learned
    skill = open_store(settings).get_skill(result.skill_id)
    assert isinstance(skill, Skill) and CANARY not in skill.model_dump_json()
    found = next(Path(settings.run_root()).rglob("found.txt"))  # the snooping code did run
    assert "EVOSKILL" not in found.read_text() and CANARY not in found.read_text()
    assert "found:" in (result.output or "")
    assert _files_holding(settings.workspace.resolve(), CANARY.encode()) == []
    database = Path(get_current_settings().server.database.connection_url.get_secret_value().split("///")[-1])
    assert database.exists()
    assert [p for p in database.parent.glob(database.name + "*") if CANARY.encode() in p.read_bytes()] == []
    prefect_text = _prefect_text()
    assert N2_QUERY[:40] in prefect_text and CANARY not in prefect_text  # the solve's artifact is there, the key is not
    captured = capfd.readouterr()
    assert CANARY not in captured.out + captured.err
    assert caplog.records and CANARY not in "\n".join(r.getMessage() for r in caplog.records)
