"""The ``evoskill`` command line.

    evoskill solve "QUESTION" [--input PATH]... [--backend embedded|openai|scripted] [--model NAME] [--session ID] [--accept-suggestion] [--deep] [--json]
    evoskill skills list|show ID|run ID --param k=v [--executor dask]|run ID --batch FILE|run --retry BATCH|batch BATCH|export ID [--workflow]|import FILE|delete ID
    evoskill worker --scheduler tcp://HOST:PORT [--resources GPU=1]
    evoskill slurm start|stop|status
    evoskill learn TASK.json...
    evoskill memory search "TEXT"
    evoskill bench SUITE... [--systems native,deep,skills] [--reps 3] [--level 0|1|both] [--json]
    evoskill transfer SUITE... [--no-learn] [--json]
    evoskill discover --system Cu-Ni-Pt [--oracle emt|lj|chgnet] [--policy diversity,ucb] [--budget 50] [--episodes 5]
    evoskill serve [--host 127.0.0.1] [--port 8501] [--add-user NAME]
    evoskill mcp [--transport stdio|http] [--host 127.0.0.1] [--port 8502]
    evoskill llm serve|status|stop

``solve --json`` prints exactly one JSON object on stdout (progress goes to stderr) with the
keys ``success, answer, formatted, unit, path, llm_calls, tokens, wall_s, stages[{name,
wall_s, ok, detail}], flow_run_id, code, error, trajectory_path, skill_id, learned, question,
session, params, declined, suggestion, grown``; ``path`` is ``skill`` (with ``skill_id``, and ``params``: every parameter it ran with, each
with the words of the question it came from or 'verified default') when a learned skill answered; ``declined`` says why recalled skills did not. Exit code: 0 when
the question was answered, 1 when it was not (or a clarifying question came back), 2 for bad usage.

A recalled skill that every value of the question binds, declined only for words it was not verified on, is offered:
"This looks like <skill> with formula=CO (it was verified on "…"). Run it?" — asked y/N when stdin is a terminal, taken
with ``--accept-suggestion`` (it answers through the skill and learns the question's wording), and otherwise reported
beside the code path's answer (``suggestion``: ``{skill_id, params, bound, verified_on, reason, accepted}``). ``grown``
names the skills that took the question as a verified one because their answer agreed with the accepted answer.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from flows.interfaces.cli.bench import HELP as BENCH_HELP
from flows.interfaces.cli.bench import add_parser as add_bench_parser
from flows.interfaces.cli.bench import run_bench
from flows.interfaces.cli.discover import add_parser as add_discover_parser
from flows.interfaces.cli.discover import run_discover
from flows.interfaces.cli.serve import add_parsers as add_serve_parsers
from flows.interfaces.cli.serve import run_mcp, run_serve
from flows.interfaces.cli.skills import add_parsers as add_skill_parsers
from flows.interfaces.cli.skills import run_learn, run_memory, run_skills
from flows.interfaces.cli.slurm import add_parser as add_slurm_parser
from flows.interfaces.cli.slurm import run_slurm
from flows.interfaces.cli.terminal import Progress, log_unexpected, quiet_terminal
from flows.interfaces.cli.tools import add_parser as add_tool_parser
from flows.interfaces.cli.tools import run_tool
from flows.interfaces.cli.transfer import add_parser as add_transfer_parser
from flows.interfaces.cli.transfer import run_transfer
from flows.interfaces.cli.worker import add_parser as add_worker_parser
from flows.interfaces.cli.worker import run_worker

__all__ = ["main", "build_parser", "run_command", "goes_to_service"]

EXAMPLE = "Calculate the atomization energy of N2 using ASE's EMT calculator; return a float in eV"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; given the ``command`` about to run, the others' options that take imports are left out."""
    parser = argparse.ArgumentParser(
        prog="evoskill",
        description="A self-evolving scientific agent: answers questions by writing, running and debugging code.",
        epilog="Settings come from EVOSKILL_* environment variables or evoskill.toml (see README).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    solve = sub.add_parser("solve", help="answer a question", description="Answer a scientific question with code.")
    solve.add_argument("query", help=f'the question, with its answer format, e.g. "{EXAMPLE}"')
    solve.add_argument("--backend", choices=["embedded", "openai", "scripted"], help="LLM backend (default: embedded)")
    solve.add_argument("--model", help="model name for the backend")
    solve.add_argument("--session", metavar="ID", help="continue (or start) a conversation; 'satisfied' saves its last answer")
    solve.add_argument("--plan", action="store_true", help="multi-step question: plan sub-tasks, solve each, replan on failure")
    solve.add_argument(
        "--deep", action="store_true",
        help="where no skill answers, let the model write code even if it is the embedded default, which rarely writes working code",
    )  # fmt: skip
    solve.add_argument(
        "--input", action="append", default=[], metavar="PATH",
        help="a file or folder the question needs (e.g. a structure file); generated code may read it, read-only. Repeatable",
    )  # fmt: skip
    solve.add_argument(
        "--accept-suggestion", action="store_true",
        help="when a recalled skill declines only for words it was not verified on, answer through it (and teach it the wording)",
    )  # fmt: skip
    solve.add_argument("--json", action="store_true", help="print one JSON summary on stdout")
    # The chat's questions, sent to the workspace's service: its signed-in user, and learning only on 'satisfied'.
    solve.add_argument("--as-user", metavar="NAME", help=argparse.SUPPRESS)
    solve.add_argument("--defer-learning", action="store_true", help=argparse.SUPPRESS)
    add_skill_parsers(sub)
    if command in (None, "bench"):
        add_bench_parser(sub)
    else:  # its options name the benchmark systems, which take pydantic to import
        sub.add_parser("bench", help=BENCH_HELP)
    add_transfer_parser(sub)
    add_discover_parser(sub)
    add_tool_parser(sub)
    add_worker_parser(sub)
    add_slurm_parser(sub)
    add_serve_parsers(sub)
    llm = sub.add_parser("llm", help="manage the embedded LLM server", description="Manage the embedded LLM server.")
    llm.add_argument(
        "action", choices=["serve", "status", "stop"],
        help="start it in the background / show this workspace's (running, crashed, stopped) and every running one / stop it",
    )  # fmt: skip
    sub.add_parser(
        "status", help="list the servers evoskill runs on this machine, and for which workspace",
        description="List the local Prefect servers, resident services and embedded LLM servers evoskill started on this machine, each with its workspace.",
    )  # fmt: skip
    _add_verbose(parser)
    return parser


def _add_verbose(parser: argparse.ArgumentParser) -> None:
    """``--verbose`` on every command (and sub-command): Prefect's own log lines and tracebacks on the terminal too."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                child.add_argument(
                    "--verbose", action="store_true", default=argparse.SUPPRESS,
                    help="also show Prefect's log lines, HTTP noise and tracebacks (default: only in <workspace>/logs/evoskill.log)",
                )  # fmt: skip
                _add_verbose(child)


def _print_suggestion(offer, asked: bool) -> None:  # noqa: ANN001 - Suggestion, imported lazily
    if offer is None:
        return
    if offer.accepted:
        print(f"Answered through the suggested skill {offer.skill_id}, which learned this question's wording")
    elif not asked:
        print(f"{offer.offer()} Ask again with --accept-suggestion to answer through it.")


def _confirm(offer) -> bool:  # noqa: ANN001 - Suggestion, imported lazily
    """Ask on the terminal (stderr: stdout stays the answer's) whether to run the suggested skill; no is the default."""
    print(f"{offer.offer()} [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _print_human(result, asked: bool = False, api: str = "") -> None:  # noqa: ANN001 - SolveResult, imported lazily
    print()
    if result.question:
        print(f"Question back to you: {result.question}")
    elif result.success:
        print(f"Answer: {result.formatted}" + (f"  (skill {result.skill_id})" if result.path == "skill" else ""))
        if result.params:
            print("Ran with: " + ", ".join(bound.describe() for bound in result.params))
    else:
        print(f"No answer: {result.error}")
        if result.code:
            print("\nLast code tried:\n" + result.code)
    for reason in result.declined:
        print("Skill declined: " + reason.replace("\n", "\n  "))
    _print_suggestion(result.suggestion, asked)
    for skill_id in result.grown:
        print(f"Skill {skill_id} gave the accepted answer too: this question is now one of its verified questions")
    print(f"\n{'stage':<24}{'wall s':>8}  ok")
    for stage in result.stages:
        print(f"{stage.name:<24}{stage.wall_s:>8.2f}  {'yes' if stage.ok else 'no'}")
    summed = sum(stage.wall_s for stage in result.stages)
    overlap = f" (the stage times add up to {summed:.1f} s: some ran in parallel)" if summed > result.wall_s + 0.05 else ""
    print(f"\npath {result.path}, LLM calls {result.llm_calls}, tokens {result.tokens}, wall {result.wall_s:.1f} s{overlap}")
    if result.learned:
        print(f"Learned skill {result.skill_id}")
    if api.startswith("http") and result.flow_run_id:  # an ephemeral API keeps no UI to open
        print(f"Flow run: {api.removesuffix('/api')}/runs/flow-run/{result.flow_run_id}")
    print(f"Trajectory: {result.trajectory_path}")


def _settings_errors() -> tuple[type[Exception], ...]:
    """The errors an invalid setting raises, imported only when a command fails (``--help`` never loads pydantic)."""
    from pydantic import ValidationError
    from pydantic_settings import SettingsError

    return ValidationError, SettingsError


def _expected_errors() -> tuple[type[Exception], ...]:
    """The errors a skills/learn/memory command reports in one line, imported only when one fails."""
    from deployments.cluster import ClusterUnavailable
    from skills.store import StoreError
    from skills.transfer import SkillFileError

    return StoreError, SkillFileError, ClusterUnavailable


def _explain(error: Exception) -> str:
    """One line per invalid setting (a ``ValidationError`` or ``SettingsError``), named as the user sets it."""
    from pydantic import ValidationError

    if not isinstance(error, ValidationError):  # SettingsError: a value that is not even JSON where JSON is needed, e.g. a list
        named = re.search(r'field "(\w+)"', str(error))
        return f"  EVOSKILL_{named.group(1).upper() if named else '?'}: {error}"
    lines = []
    for item in error.errors():
        field = ".".join(str(p) for p in item["loc"])
        lines.append(f"  EVOSKILL_{field.split('.')[0].upper()}: {item['msg']} (got {item.get('input')!r})")
    return "\n".join(lines)


def _solve(args: argparse.Namespace) -> int:
    if not args.query.strip():
        print("evoskill solve: the question is empty", file=sys.stderr)
        return 2
    if args.session is not None and not re.fullmatch(r"[\w.-]+", args.session):
        print(f"evoskill solve: --session {args.session!r}: use letters, digits, '.', '_' or '-'", file=sys.stderr)
        return 2
    if args.plan and args.session:
        print("evoskill solve: --plan does not take --session", file=sys.stderr)
        return 2
    missing = [path for path in args.input if not Path(path).exists()]
    if missing:
        print(f"evoskill solve: --input {missing[0]}: no such file or folder", file=sys.stderr)
        return 2
    from deployments.llm.transport import LLMError
    from deployments.prefect_server import prefect_runtime
    from deployments.progress import listening
    from deployments.settings import get_settings
    from flows.learn import ensure_starter_library
    from flows.solve import solve, suggest
    from tasks.debug_strategies import check_strategies

    try:
        settings = check_strategies(get_settings(llm_backend=args.backend, llm_model=args.model))
        with listening(Progress()), prefect_runtime(settings) as where:
            print(f"Prefect API: {where}", file=sys.stderr)
            if args.plan:
                granted = {"sandbox_inputs": [*settings.sandbox_inputs, *(Path(p).resolve() for p in args.input)]}
                return _print_plan(_planned(args.query, settings.model_copy(update=granted)), args.json)
            ensure_starter_library(settings)
            accept, asked = args.accept_suggestion, False
            if not accept and sys.stdin.isatty() and (offer := suggest(args.query, settings)) is not None:
                accept, asked = _confirm(offer), True
            result = solve(
                args.query, backend=args.backend, model=args.model, session=args.session, inputs=args.input, accept_suggestion=accept,
                deep=args.deep, user=args.as_user, defer_learning=args.defer_learning,
            )
    except _settings_errors() as exc:
        print(f"evoskill: invalid settings:\n{_explain(exc)}", file=sys.stderr)
        return 1
    except LLMError as exc:
        print(f"evoskill solve failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nevoskill solve: cancelled", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the user gets a message, not a traceback
        print(log_unexpected("solve", exc), file=sys.stderr)
        return 1
    if args.json:
        print(result.model_dump_json())
    else:
        _print_human(result, asked, where)
    return 0 if result.success else 1


def _planned(query: str, settings):  # noqa: ANN001, ANN202 - Settings/PlanOutcome, imported lazily
    from flows.plan_solve import plan_solve

    return plan_solve(query, settings)


def _print_plan(outcome, as_json: bool) -> int:  # noqa: ANN001 - PlanOutcome, imported lazily
    if as_json:
        print(outcome.model_dump_json())
    else:
        for number, step in enumerate(outcome.steps, 1):
            print(f"step {number}: {step.summary.render()}")
        print(f"answer: {outcome.answer!r}" if outcome.success else f"no answer ({outcome.stopped})")
        print(f"{len(outcome.steps)} steps, {outcome.replans} replans, {outcome.llm_calls} LLM calls, {outcome.wall_s:.1f} s")
    return 0 if outcome.success else 1


def _llm(args: argparse.Namespace) -> int:
    from deployments.llm.server import (
        describe,
        ensure_server,
        machine_servers,
        server_status,
        server_table,
        stop_server,
    )
    from deployments.llm.transport import LLMError
    from deployments.settings import get_settings

    try:
        settings = get_settings()
    except _settings_errors() as exc:
        print(f"evoskill: invalid settings:\n{_explain(exc)}", file=sys.stderr)
        return 1
    if args.action == "serve":
        try:
            served = ensure_server(settings)
        except LLMError as exc:
            print(f"evoskill llm serve failed: {exc}", file=sys.stderr)
            return 1
        print(f"embedded LLM {served.model} serving at {served.base_url} (pid {served.pid}, log {served.log_path})")
        return 0
    if args.action == "status":
        state = server_status(settings)
        print(f"this workspace ({settings.workspace.resolve()}): {describe(state)}")
        servers = machine_servers()
        if servers:
            print("embedded LLM servers running on this machine:\n" + "\n".join(f"  {line}" for line in server_table(servers)))
        else:
            print("no embedded LLM server running on this machine")
        return 0 if state is not None and state.status == "running" else 1
    print("stopped" if stop_server(settings) else "not running")
    return 0


def _table(rows: list[list[str]]) -> str:
    """Rows as aligned columns, each line indented."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def _status(args: argparse.Namespace) -> int:
    """``evoskill status``: what runs on this machine for which workspace (this one marked), and whether each Prefect
    server stops when idle (and what keeps it up)."""
    import time

    from deployments.llm.server import machine_servers, server_table
    from deployments.prefect_server import idle_stop_note, last_record, workspace_servers
    from deployments.settings import get_settings
    from deployments.slurm import LocalSlurm
    from flows.interfaces.service.place import read_records

    settings = get_settings()
    here = str(settings.workspace.resolve())
    prefect = workspace_servers()
    if prefect:
        rows = [["workspace", "pid", "port", "stops when idle"]]
        rows += [[("* " if ws == here else "  ") + ws, str(pid), str(port), idle_stop_note(pid)] for pid, port, ws in prefect]
        print("Prefect servers:\n" + _table(rows))
    else:
        print("no Prefect server of evoskill's running on this machine")
    record = last_record(settings)
    if record is not None and record.status != "running" and not any(ws == here for _, _, ws in prefect):
        ended = f"at {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(record.ended_at))}" if record.ended_at else "at an unknown time"
        why = f" ({record.reason})" if record.reason else ""
        print(f"this workspace's Prefect server: {record.status}{why} {ended}; the next command starts it again")
    services = read_records()
    if services:
        rows = [["workspace", "pid", "up", "stops when idle"]]
        rows += [[("* " if r.workspace == here else "  ") + r.workspace, str(r.pid), f"{(time.time() - r.started_at) / 60:.0f} min",
                  f"after {r.idle_stop_s:.0f} s" if r.idle_stop_s else "never"] for r in services]  # fmt: skip
        print("resident services:\n" + _table(rows))
    else:
        print("no resident evoskill service running on this machine")
    llm = machine_servers()
    if llm:
        print("embedded LLM servers:\n" + "\n".join(f"  {line}" for line in server_table(llm)))
    else:
        print("no embedded LLM server running on this machine")
    slurm = LocalSlurm.for_workspace(settings.workspace)
    if slurm.running():
        print(f"this workspace's Slurm cluster: node {slurm.node} {slurm.node_state() or 'not answering'} (it runs until `evoskill slurm stop`)")
    return 0


def _guarded(args: argparse.Namespace) -> int:
    """Run a skills/learn/memory command; expected failures become one message and an exit code."""
    from skills.params import ParameterError

    handler = {"skills": run_skills, "learn": run_learn, "memory": run_memory, "bench": run_bench, "transfer": run_transfer, "discover": run_discover, "tool": run_tool, "worker": run_worker,
               "serve": run_serve, "mcp": run_mcp, "llm": _llm, "status": _status, "slurm": run_slurm}[args.command]  # fmt: skip
    try:
        return handler(args)
    except _settings_errors() as exc:
        print(f"evoskill: invalid settings:\n{_explain(exc)}", file=sys.stderr)
    except ParameterError as exc:
        print(f"evoskill {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:
        print(f"evoskill {args.command}: {exc.args[0]}", file=sys.stderr)
    except _expected_errors() as exc:
        print(f"evoskill {args.command}: {exc}", file=sys.stderr)
    except BrokenPipeError:  # the reader stopped reading (| head): main ends quietly
        raise
    except Exception as exc:  # noqa: BLE001 - the user gets a message, not a traceback
        print(log_unexpected(args.command, exc), file=sys.stderr)
    return 1


def run_command(args: argparse.Namespace) -> int:
    """Run a parsed command line here, in this process (the resident service runs its clients' commands through this)."""
    return _solve(args) if args.command == "solve" else _guarded(args)


# The commands the workspace's resident service runs (``flows/interfaces/service``): those that answer and read.
_IN_SERVICE = {"solve": None, "skills": {"list", "show", "run"}}


def goes_to_service(args: argparse.Namespace) -> bool:
    """Whether the resident service runs this command (it refuses any other)."""
    if args.command not in _IN_SERVICE:
        return False
    actions = _IN_SERVICE[args.command]
    if actions is not None and getattr(args, "action", None) not in actions:
        return False
    if args.command == "skills" and getattr(args, "action", None) == "run" and getattr(args, "batch", None):
        return False  # a batch file: read here, where its path is meant
    return not getattr(args, "verbose", False)  # Prefect's own lines on this terminal: the command runs here


def _in_service(args: argparse.Namespace, argv: list[str]) -> int | None:
    """Run the command in the workspace's resident service where it goes there and the settings allow; None: run it here."""
    if not goes_to_service(args):
        return None
    from deployments.settings import get_settings
    from flows.interfaces.cli.terminal import log_file
    from flows.interfaces.service.client import run_in_service

    try:
        settings = get_settings()
    except _settings_errors():
        return None  # the command itself says what is wrong with them
    if not settings.service:
        return None
    inputs = [str(Path(path).resolve()) for path in getattr(args, "input", [])]  # the service's folder may be another
    return run_in_service(argv, inputs, settings.workspace, log_file().with_name("service.log"), settings.service_start_timeout_s)


_CANCEL_GRACE_S = 10.0  # after Ctrl-C: for the flow runs to report Crashed and the exit handlers to run
_said_cancelled = threading.Event()


def _say_cancelled(command: str) -> None:
    """The one line a Ctrl-C prints (once, whichever of the main thread and the grace timer comes first)."""
    if not _said_cancelled.is_set():
        _said_cancelled.set()
        print(f"\nevoskill {command}: cancelled", file=sys.stderr, flush=True)


def _end_after_grace(command: str) -> None:
    _say_cancelled(command)
    os._exit(130)  # the warm executors and their runs die with this process (their parent-death signal)


def _ends_after_grace(command: str) -> Callable[[int, object], None]:
    """A SIGINT handler: KeyboardInterrupt as the default one raises, and from the first, a timer that ends the process
    ``_CANCEL_GRACE_S`` later where unwinding blocks (Prefect's crash report or exit-time flush to an API that stalls)."""
    timer = threading.Timer(_CANCEL_GRACE_S, _end_after_grace, args=(command,))
    timer.daemon = True  # it outlives the interpreter's wait for other threads, and runs during the exit handlers

    def interrupted(signum: int, frame: object) -> None:
        if timer.ident is None:
            timer.start()
        raise KeyboardInterrupt

    return interrupted


def main(argv: Sequence[str] | None = None) -> int:
    program = argv is None  # the command line's own process (a caller's Ctrl-C stays its own)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(next((word for word in argv if not word.startswith("-")), "")).parse_args(argv)
    try:
        served = _in_service(args, argv)
        if served is not None:
            return served
        quiet_terminal(verbose=getattr(args, "verbose", False))
        if program:
            signal.signal(signal.SIGINT, _ends_after_grace(args.command))
        return run_command(args)
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback
        _say_cancelled(args.command)
        return 130
    except BrokenPipeError:  # what reads the output stopped (| head): nothing more to say, and nothing at exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
