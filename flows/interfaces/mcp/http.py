"""MCP over streamable HTTP: the server's app behind a bearer token.

On loopback the SDK's DNS-rebinding protection applies and the token is optional; beyond loopback the token is
required (``EVOSKILL_MCP_TOKEN``), and without one the app is not built. With a token set, every request must carry
``Authorization: Bearer <token>``; any other answers 401 before the MCP server sees it.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from mcp.server.lowlevel import Server
from starlette.types import ASGIApp, Receive, Scope, Send

from deployments.net import is_loopback
from deployments.settings import Settings

__all__ = ["BearerToken", "ExposureError", "http_app"]

_MIN_TOKEN_CHARS = 16


class ExposureError(ValueError):
    """MCP over HTTP would listen beyond loopback without a token, or its token is too short."""


class BearerToken:
    """ASGI middleware: HTTP requests need ``Authorization: Bearer <token>`` (compared in constant time), else 401."""

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self._expected = f"Bearer {token}".encode()

    def _authorised(self, scope: Scope) -> bool:
        given = next((value for name, value in scope["headers"] if name == b"authorization"), b"")
        return hmac.compare_digest(given, self._expected)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._authorised(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": "unauthorized", "error_description": "send Authorization: Bearer <EVOSKILL_MCP_TOKEN>"}).encode()
        headers = [(b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="evoskill"'), (b"cache-control", b"no-store")]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def http_app(server: Server[Any], settings: Settings, host: str) -> ASGIApp:
    """``server``'s streamable HTTP app (endpoint ``/mcp``) for listening on ``host``, behind the token when one is set.

    ``ExposureError`` when ``host`` is beyond loopback and ``settings`` have no ``mcp_token``, or the token is short.
    """
    token = settings.mcp_token.get_secret_value() if settings.mcp_token else ""
    if token and len(token) < _MIN_TOKEN_CHARS:
        raise ExposureError(f"EVOSKILL_MCP_TOKEN is too short to resist guessing: use at least {_MIN_TOKEN_CHARS} random characters")
    if not token and not is_loopback(host):
        raise ExposureError(
            f"--host {host} listens beyond loopback, and MCP over HTTP has no authentication of its own: set EVOSKILL_MCP_TOKEN "
            "(a long random string; clients send it as 'Authorization: Bearer <token>'), or listen on 127.0.0.1"
        )
    app = server.streamable_http_app(host=host)
    return BearerToken(app, token) if token else app
