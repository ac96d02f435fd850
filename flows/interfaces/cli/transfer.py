"""``evoskill transfer``: the transfer protocol — learn each family's base, then ask its variants and distractors via skills.

    evoskill transfer benchmarks/suites/transfer [--no-learn] [--backend NAME] [--out DIR] [--json]

It runs in a fresh workspace (``--out``, default ``<workspace>/transfer/<time>``) with its own
store, so only what was learned from the bases can answer. The table gives per family: variants
answered correctly through a skill, declined, wrong (a variant answered wrongly or a distractor
answered), and distractors declined. ``--json`` prints the whole report. Exit code 0 when the
protocol ran (whatever it scored), 1 when it could not, 2 for a suite that is missing or malformed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run_transfer"]


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "transfer",
        help="measure skill transfer: learn bases, ask variants and distractors",
        description="Learn each family's base task in a fresh workspace, then ask every variant and distractor (level 1) "
        "through the skill path only, and report correct / declined / wrong per family.",
    )
    parser.add_argument("suite", nargs="+", help="family files or folders (benchmarks/suites/transfer)")
    parser.add_argument("--no-learn", action="store_true", help="learn nothing first (no skill may then answer)")
    parser.add_argument("--backend", choices=["embedded", "openai", "scripted"], help="LLM backend (default: embedded)")
    parser.add_argument("--out", metavar="DIR", help="the fresh workspace and report folder")
    parser.add_argument("--json", action="store_true", help="print the report as JSON on stdout")


def run_transfer(args: argparse.Namespace) -> int:
    from benchmarks.task import TaskFormatError
    from benchmarks.transfer import load_transfer_suite
    from deployments.prefect_server import prefect_runtime
    from deployments.progress import add_listener, remove_listener
    from deployments.settings import get_settings
    from flows.interfaces.cli.bench import ProgressBar
    from flows.transfer import transfer

    missing = [p for p in args.suite if not Path(p).exists()]
    if missing:
        print(f"evoskill transfer: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        if not load_transfer_suite([Path(p) for p in args.suite]):
            print("evoskill transfer: no family files (*.json) found", file=sys.stderr)
            return 2
    except TaskFormatError as exc:
        print(f"evoskill transfer: {exc}", file=sys.stderr)
        return 2
    settings = get_settings(llm_backend=args.backend)
    bar = ProgressBar("transfer")
    add_listener(bar)
    try:
        with prefect_runtime(settings), bar.progress:
            report = transfer(args.suite, learn=not args.no_learn, backend=args.backend, out=args.out)
    finally:
        remove_listener(bar)
    if args.json:
        print(report.model_dump_json(indent=1))
    else:
        print(report.markdown())
        for row in report.rows:
            if row.verdict == "wrong":
                print(f"wrong: {row.id} ({row.skill_id}): {row.reason}", file=sys.stderr)
    return 0
