"""``evoskill bench``: run a benchmark from the command line with a progress bar.

    evoskill bench benchmarks/suites/starter --systems reference
    evoskill bench SUITE... [--systems native,deep,skills] [--reps 3] [--level 0|1|both] [--workers N]
                            [--fresh] [--out DIR] [--backend NAME] [--model NAME] [--json]

``--json`` prints one object on stdout: ``run_id, resumed, tasks, runs, systems{NAME: {passed, total,
success_rate, pass_at_k, mean_wall_s, mean_llm_calls, mean_tokens, by_level, by_category,
by_difficulty}}, cases[{task_id, level, rep, system, passed, answer, expected, reason, wall_s,
llm_calls}], problems, answers_hidden, report_dir, wall_s``. Exit code: 0 when the benchmark
ran (whatever it scored), 1 when it could not, 2 for bad usage: unknown systems, numbers below 1,
a suite path that is missing or holds no task files, no task that loads, or a report folder that
cannot be written; these are checked before any flow starts and reported in a line or two.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

__all__ = ["add_parser", "run_bench", "ProgressBar", "HELP"]

HELP = "run a benchmark suite"


def add_parser(sub: Any) -> None:
    from benchmarks.systems import DEFAULT_SYSTEMS, SYSTEMS

    bench = sub.add_parser(
        "bench",
        help=HELP,
        description="Run task suites (SciSkillBench JSON) with one or more systems and report success, pass@k and costs. "
        "Running the same command again resumes an unfinished benchmark.",
        epilog="systems:\n" + "\n".join(f"  {s.name:<13}{s.description}" for s in SYSTEMS.values()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument("suite", nargs="+", help="task files or folders of *.json task files")
    bench.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS), help=f"comma-separated (default: {','.join(DEFAULT_SYSTEMS)})")
    bench.add_argument("--reps", type=int, default=3, help="independent repetitions per task (default: 3)")
    bench.add_argument("--level", choices=["0", "1", "both"], default="both", help="query level: 0 names the functions, 1 only the goal")
    bench.add_argument("--workers", type=int, default=1, help="runs in parallel (default: 1)")
    bench.add_argument("--fresh", action="store_true", help="start a new benchmark even if the same one is unfinished")
    bench.add_argument("--out", metavar="DIR", help="report folder (default: <workspace>/bench/<run id>/report)")
    bench.add_argument("--backend", choices=["embedded", "openai", "scripted"], help="LLM backend (default: embedded)")
    bench.add_argument("--model", help="model name for the backend")
    bench.add_argument("--json", action="store_true", help="print one JSON summary on stdout")


class ProgressBar:
    """A progress bar on stderr fed by one stage's progress events: "done/total text", or one step per event."""

    def __init__(self, stage: str = "benchmark", total: int | None = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.stage = stage
        self.progress = Progress(
            TextColumn(stage), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("{task.description}", markup=False),
            # Lines as they are: no hard wrap inside a long path (the terminal wraps), no brackets read as markup.
            console=Console(stderr=True, soft_wrap=True), transient=False,
        )  # fmt: skip
        self.bar = self.progress.add_task("", total=total)

    def __call__(self, stage: str, status: str, detail: str) -> None:
        if stage != self.stage:
            return
        found = re.match(r"(\d+)/(\d+) (.*)", detail)
        if found is not None:
            done, total, text = int(found.group(1)), int(found.group(2)), found.group(3)
            self.progress.update(self.bar, completed=done, total=total, description=text[:70])
        elif status == "progress":
            self.progress.update(self.bar, advance=1, description=detail[:70])
        else:
            self.progress.console.print(f"✗ {detail}" if status == "failed" else detail, markup=False)


def _systems(text: str) -> list[str]:
    return [name for name in re.split(r"[,\s]+", text) if name]


def _levels(choice: str) -> list[int]:
    return [0, 1] if choice == "both" else [int(choice)]


def _checked_systems(args: argparse.Namespace) -> list[str]:
    """The systems to run, once the whole request checks out (a ``ValueError`` that says what is wrong otherwise)."""
    from flows.benchmark import plan_benchmark

    _, chosen = plan_benchmark(args.suite, _systems(args.systems), args.reps, _levels(args.level), args.workers, args.out)
    return [s.name for s in chosen]


def run_bench(args: argparse.Namespace) -> int:
    try:
        systems = _checked_systems(args)
    except ValueError as exc:
        print(f"evoskill bench: {exc}", file=sys.stderr)
        return 2
    from deployments.prefect_server import prefect_runtime
    from deployments.progress import add_listener, remove_listener
    from deployments.settings import get_settings
    from flows.benchmark import benchmark
    from tasks.debug_strategies import check_strategies

    settings = check_strategies(get_settings(llm_backend=args.backend, llm_model=args.model))
    bar = ProgressBar()
    add_listener(bar)
    try:
        with prefect_runtime(settings) as where, bar.progress:
            bar.progress.console.print(f"Prefect API: {where}", markup=False)
            summary = benchmark(
                args.suite, systems=systems, reps=args.reps, levels=_levels(args.level),
                backend=args.backend, model=args.model, fresh=args.fresh, workers=args.workers, out=args.out,
            )  # fmt: skip
    except ValueError as exc:
        print(f"evoskill bench: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nevoskill bench: interrupted; the finished runs are stored — run the same command again to resume", file=sys.stderr)
        return 130
    except (OSError, RuntimeError) as exc:
        print(f"evoskill bench failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        remove_listener(bar)
    if args.json:
        print(summary.model_dump_json())
        return 0
    from benchmarks.report import markdown_table

    print(("Resumed " if summary.resumed else "") + f"benchmark {summary.run_id}: {summary.tasks} tasks, {summary.runs} runs, {summary.wall_s:.0f} s")
    print(markdown_table(summary.systems))
    for problem in summary.problems:
        print(f"not loaded: {problem}")
    if not summary.answers_hidden:
        print("warning: task files were readable by generated code (no mount namespace on this machine)")
    print(f"Report: {summary.report_dir}/report.md")
    return 0
