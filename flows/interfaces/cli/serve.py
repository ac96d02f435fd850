"""``evoskill serve`` (the chat web app) and ``evoskill mcp`` (skills as MCP tools)."""

from __future__ import annotations

import argparse
import getpass
import sys

__all__ = ["add_parsers", "run_serve", "run_mcp"]


def add_parsers(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser(
        "serve",
        help="the chat web app and skills browser",
        description="Serve the chat web app: sessions over the solve flow, feedback, and a skills browser.",
        epilog="Login is off by default (everyone is EVOSKILL_USER); EVOSKILL_WEB_LOGIN=true asks for the accounts "
        "added with --add-user. A --host beyond loopback needs login (or EVOSKILL_WEB_OPEN_WITHOUT_LOGIN=true) and the "
        "names users browse to in EVOSKILL_WEB_ALLOWED_HOSTS; put TLS in front and set EVOSKILL_WEB_SECURE_COOKIE=true.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    serve.add_argument("--add-user", metavar="NAME", help="add an account (or set its password, read from the terminal or stdin) and exit")
    mcp = sub.add_parser(
        "mcp",
        help="serve skills as MCP tools",
        description="Serve every stored skill as an MCP tool (its parameter schema as the input schema), "
        "plus solve, search_memory and list_skills. New skills appear without a restart.",
        epilog="Over HTTP beyond loopback, clients must send 'Authorization: Bearer <EVOSKILL_MCP_TOKEN>'; without the "
        "setting the server refuses to start there.",
    )
    mcp.add_argument("--transport", choices=["stdio", "http"], default="stdio", help="stdio (default) or streamable HTTP")
    mcp.add_argument("--host", default="127.0.0.1", help="http: address to listen on (default 127.0.0.1)")
    mcp.add_argument("--port", type=int, default=8502, help="http: port (default 8502); the endpoint is /mcp")


def _add_user(settings, name: str) -> int:  # noqa: ANN001 - Settings, imported lazily
    from flows.interfaces.web.users import UserBook, UserError

    password = getpass.getpass(f"password for {name}: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n")
    try:
        UserBook(settings.workspace.resolve() / "web-users.json").add(name, password)
    except UserError as exc:
        print(f"evoskill serve: {exc}", file=sys.stderr)
        return 2
    print(f"user {name} saved; start the app with EVOSKILL_WEB_LOGIN=true evoskill serve")
    return 0


def _exposure(settings, host: str) -> tuple[str | None, list[str]]:  # noqa: ANN001 - Settings, imported lazily
    """Why the chat may not listen on ``host`` (or None), and the warnings to print when it does."""
    from deployments.net import is_loopback

    if is_loopback(host):
        return None, []
    if not settings.web_login and not settings.web_open_without_login:
        return (
            f"--host {host} listens beyond loopback, and login is off: anyone who reaches the port would ask questions, run "
            f"code and read the sessions of EVOSKILL_USER={settings.user}. Set EVOSKILL_WEB_LOGIN=true (accounts: evoskill "
            "serve --add-user NAME), or EVOSKILL_WEB_OPEN_WITHOUT_LOGIN=true to expose the chat without login anyway."
        ), []
    warnings = []
    if not settings.web_login:
        bar = "!" * 78
        warnings.append(
            f"{bar}\n!! EXPOSED WITHOUT LOGIN (EVOSKILL_WEB_OPEN_WITHOUT_LOGIN=true): everyone who reaches {host} is\n"
            f"!! EVOSKILL_USER={settings.user}: asks questions (generated code runs on this machine), reads and changes\n"
            f"!! that user's sessions and memories, and runs every skill.\n{bar}"
        )
    if not settings.web_allowed_hosts:
        warnings.append("note: EVOSKILL_WEB_ALLOWED_HOSTS is empty, so only loopback names are answered; list the names users browse to")
    if not settings.web_secure_cookie:
        warnings.append("note: serve beyond loopback behind TLS, with EVOSKILL_WEB_SECURE_COOKIE=true")
    return None, warnings


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from deployments.prefect_server import prefect_runtime
    from deployments.progress import add_listener, remove_listener
    from deployments.settings import get_settings
    from flows.interfaces.cli.terminal import Progress
    from flows.interfaces.service.client import service_solves
    from flows.interfaces.web.app import create_app
    from flows.learn import ensure_starter_library
    from tasks.debug_strategies import check_strategies

    settings = check_strategies(get_settings())
    if args.add_user:
        return _add_user(settings, args.add_user)
    refused, warnings = _exposure(settings, args.host)
    if refused:
        print(f"evoskill serve: {refused}", file=sys.stderr)
        return 2
    for warning in warnings:
        print(warning, file=sys.stderr)
    in_service = service_solves(settings)  # its questions are answered by the service the CLI and MCP use
    if in_service:  # it imports and gets ready while this process does
        _start_service_meanwhile(settings, "chat")
    with prefect_runtime(settings) as where:
        add_listener(progress := Progress())
        ensure_starter_library(settings)
        remove_listener(progress)
        prefect_ui = where.removesuffix("/api") if where.startswith("http") else None
        app = create_app(settings, prefect_ui=prefect_ui)
        _get_ready_meanwhile(settings, solves=not in_service)
        print(f"evoskill chat on http://{args.host}:{args.port}/chat  (Prefect: {where}; login {'on' if settings.web_login else 'off'})", file=sys.stderr)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def _get_ready_meanwhile(settings, solves: bool = True) -> None:  # noqa: ANN001 - Settings, imported lazily
    """Load what the first answer needs (flows, the Prefect server, the warm executor) while the server starts listening
    (``solves``: the server runs solves itself)."""
    import threading

    from flows.readiness import get_ready

    threading.Thread(target=get_ready, args=(settings, solves), name="readiness", daemon=True).start()


def _start_service_meanwhile(settings, door: str) -> None:  # noqa: ANN001 - Settings, imported lazily
    """Start the workspace's resident service, which answers ``solve``, while the ``door`` (chat, MCP) starts (one log line where it cannot)."""
    import logging
    import threading

    from flows.interfaces.service.client import start_service

    def start() -> None:
        why = start_service(settings.workspace, settings.workspace.resolve() / "logs" / "service.log", settings.service_start_timeout_s)
        if why is not None:
            logging.getLogger("flows.service").info("solve runs in the %s's own process: the workspace service did not start: %s", door, why)

    threading.Thread(target=start, name="service-start", daemon=True).start()


def _warm_up_first(settings) -> None:  # noqa: ANN001 - Settings, imported lazily
    """Start the warm executor (its own process) before this process imports the rest, so that it is ready by the first call."""
    from deployments.sandbox.execute import warm_up_meanwhile
    from deployments.sandbox.limits import SandboxLimits

    warm_up_meanwhile(SandboxLimits.from_settings(settings))


def run_mcp(args: argparse.Namespace) -> int:
    import anyio

    from deployments.settings import get_settings
    from flows.interfaces.service.client import service_solves

    first = get_settings()
    if service_solves(first):  # the service imports and gets ready while this process imports the MCP server
        _start_service_meanwhile(first, "MCP server")
    _warm_up_first(first)
    from flows.interfaces.mcp.server import build_server
    from tasks.debug_strategies import check_strategies

    settings = check_strategies(get_settings())
    in_service = service_solves(settings)
    server = build_server(settings, service=in_service)
    _get_ready_meanwhile(settings, solves=not in_service)
    if args.transport == "http":
        import uvicorn

        from flows.interfaces.mcp.http import ExposureError, http_app

        try:
            app = http_app(server, settings, args.host)
        except ExposureError as exc:
            print(f"evoskill mcp: {exc}", file=sys.stderr)
            return 2
        token = "bearer token required" if settings.mcp_token else "no token: loopback only"
        print(f"evoskill MCP (streamable HTTP) on http://{args.host}:{args.port}/mcp  ({token})", file=sys.stderr)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
        return 0
    from mcp.server.stdio import stdio_server

    async def serve_stdio() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve_stdio)
    return 0
