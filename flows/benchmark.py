"""The benchmark flow: task suites × systems × repetitions × levels → checked records → report.

Each (system, repetition) gets a fresh workspace and store; systems other than ``skills`` run with
memory off, and ``skills`` learns from the earlier tasks of its repetition. The task files and the
main store are hidden from generated code (mount namespace; see ``deployments.sandbox.execute``). Every
checked run is stored at once in the ``benchmark_records`` collection, so a benchmark that crashed
is resumed by running the same command again: finished runs are kept, the rest run. Cases run on
``workers`` threads, or as task runs on the Dask cluster when one is configured
(``EVOSKILL_TASK_RUNNER``, see ``deployments.task_runners``). The report lists the aggregates and
then every case (answer, expected answer, why it failed); ``plan_benchmark`` checks a request
before any flow starts (the CLI calls it first).

>>> from flows.benchmark import benchmark
>>> summary = benchmark(["benchmarks/suites/starter"], systems=["reference"], reps=1, levels=[1])  # doctest: +SKIP
>>> summary.systems["reference"].success_rate                                                       # doctest: +SKIP
1.0
"""

from __future__ import annotations

import base64
import contextvars
import os
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)
from prefect.cache_policies import NONE
from prefect.futures import PrefectFuture, as_completed
from pydantic import BaseModel, Field

from benchmarks.metrics import CaseRow, SystemSummary, case_rows, summarise
from benchmarks.report import write_report
from benchmarks.systems import DEFAULT_SYSTEMS, BenchmarkSystem, resolve_systems
from benchmarks.task import BenchmarkTask, Suite, load_suite, suite_path_problems
from deployments.files import LockHeld, file_lock
from deployments.progress import report
from deployments.sandbox.execute import SandboxLimits, isolation_report, run_code
from deployments.settings import Settings, get_settings
from deployments.task_runners import task_runner
from flows.solve import run_solve
from skills.answer_check import check_answer
from skills.documents import BenchmarkRecord, BenchmarkRun, content_hash
from skills.store import SkillStore, open_store
from tasks.debug_strategies import check_strategies

__all__ = ["BenchmarkCase", "BenchmarkSummary", "benchmark", "plan_benchmark", "run_case", "case_settings"]


class BenchmarkCase(BaseModel):
    """One run to make: a task at a level, by a system, in a repetition."""

    system: str
    rep: int
    level: int
    task_id: str


class BenchmarkSummary(BaseModel):
    """What ``evoskill bench --json`` prints."""

    run_id: str
    resumed: bool = False
    tasks: int
    runs: int = Field(description="Checked runs in this benchmark (all systems, repetitions and levels).")
    systems: dict[str, SystemSummary]
    cases: list[CaseRow] = Field(default_factory=list, description="Every checked run: by task, level, repetition, system.")
    problems: list[str] = Field(default_factory=list, description="Task files that did not load (file: field: why).")
    answers_hidden: bool
    report_dir: str
    wall_s: float


# Task files shipped with evoskill hold answers too: hidden in every benchmark, whatever the suite.
SHIPPED_ANSWERS = [Path(__file__).resolve().parents[1] / "benchmarks" / "suites", Path(__file__).resolve().parents[1] / "skills" / "library"]


def case_settings(base: Settings, system: BenchmarkSystem, run_id: str, rep: int, hidden: list[Path]) -> Settings:
    """Settings of one (system, repetition): its own workspace and store, the system's switches, answers hidden."""
    lane = f"{system.name}-rep{rep}"
    workspace = base.workspace.resolve() / "bench" / run_id / lane
    update = {
        "deep_path": "always",  # a benchmark measures the systems' code paths, whatever the model
        **system.overrides,
        "workspace": workspace,
        "store_path": workspace / "store",
        "store_database": f"bench-{content_hash(run_id, lane)[:12]}",
        "cache_path": base.cache_root(),  # parsed packages: derived from what is installed, not learned from tasks
        "sandbox_hidden_paths": [*base.sandbox_hidden_paths, base.store_root(), *SHIPPED_ANSWERS, *hidden],
    }
    return base.model_copy(update=update)


@task(name="bench-case", task_run_name="{case.system}-rep{case.rep}-L{case.level}-{case.task_id}", cache_policy=NONE)
def run_case(case: BenchmarkCase, bench_task: BenchmarkTask, system: BenchmarkSystem, settings: Settings, run_id: str) -> BenchmarkRecord:
    """Run one case and check its answer; an error in the run is a failed record, not a failed benchmark."""
    started = time.perf_counter()
    record = BenchmarkRecord(
        run_id=run_id, system=case.system, rep=case.rep, level=case.level, task_id=case.task_id,  # type: ignore[arg-type]  # level 0 or 1: pydantic checks it
        category=bench_task.category, passed=False, expected=bench_task.answer,
    )  # fmt: skip
    error: str | None = None
    try:
        if system.reference:
            limits = SandboxLimits.from_settings(settings)
            execution = run_code(bench_task.solution_code_or_process, settings.run_root(), limits, f"reference-{case.task_id}")
            record.answer, record.path, error = (execution.answer if execution.ok else None), "reference", execution.error
        else:
            result = run_solve(bench_task.query(case.level), settings)
            record.answer = result.answer if result.success else None
            record.path, record.skill_id, record.learned = result.path, result.skill_id, result.learned
            record.llm_calls, record.tokens, record.trajectory_path = result.llm_calls, result.tokens, result.trajectory_path
            error = result.error or (f"asked back: {result.question}" if result.question else None)
    except Exception as exc:  # noqa: BLE001 - recorded against this case; the benchmark goes on
        error = f"the run raised {type(exc).__name__}: {exc}"
    check = check_answer(record.answer, bench_task.answer, bench_task.absolute_tolerance, bench_task.unit)
    record.passed = check.passed
    record.reason = None if check.passed else (error if record.answer is None and error else check.reason)
    record.wall_s = round(time.perf_counter() - started, 3)
    return record


def _in_order(cases: list[BenchmarkCase]) -> list[BenchmarkCase]:
    """Task by task, every system in turn: a benchmark stopped early has compared the systems on the same tasks."""
    return sorted(cases, key=lambda c: (c.rep, c.task_id, c.level))


def _open_run(store: SkillStore, config: dict, total: int, fresh: bool) -> tuple[BenchmarkRun, bool]:
    """The unfinished run with this configuration (resumed), or a new one."""
    config_hash = content_hash(config)
    if not fresh:
        open_runs = store.all(BenchmarkRun, {"config_hash": config_hash, "status": "running"})
        if open_runs:
            return max(open_runs, key=lambda r: r.created), True
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    run = BenchmarkRun(id=f"bench-{stamp}-{uuid.uuid4().hex[:6]}", config_hash=config_hash, config=config, total=total)
    return run, False


def _artifacts(markdown: str, summaries: dict[str, SystemSummary], plots: list[Path]) -> None:
    """The report as Prefect artifacts: the markdown with its plots inlined, and the systems as a table."""
    for plot in plots:
        markdown = markdown.replace(f"]({plot.name})", f"](data:image/png;base64,{base64.b64encode(plot.read_bytes()).decode()})")
    create_markdown_artifact(markdown=markdown, key="benchmark-report", description="evoskill benchmark")
    fields = {"passed", "total", "success_rate", "mean_wall_s", "mean_llm_calls"}
    rows = [{"system": name, **s.model_dump(include=fields)} for name, s in summaries.items()]
    create_table_artifact(table=rows, key="benchmark-systems", description="success per system")


def _report_folder_problem(out: str | None) -> str | None:
    """Why the report folder ``out`` cannot be written (its nearest existing part is a file, or read-only), or None."""
    if out is None:
        return None
    path = Path(out).resolve()
    existing = next(p for p in [path, *path.parents] if p.exists())
    if not existing.is_dir():
        return f"report folder {out}: {existing} is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"report folder {out}: {existing} is not writable"
    return None


def _load(suite: list[str]) -> Suite:
    """The suite's tasks, or a ``ValueError`` for a path that is missing or holds no task files, or when no task loads."""
    paths = [Path(p) for p in suite]
    bad_paths = suite_path_problems(paths)
    if not paths or bad_paths:
        raise ValueError("; ".join(bad_paths) or "name at least one task file or folder")
    loaded = load_suite(paths)
    if not loaded.tasks:
        raise ValueError(f"no task loaded from {', '.join(suite)}\n" + "; ".join(loaded.problems))
    return loaded


def plan_benchmark(
    suite: list[str], systems: list[str], reps: int, levels: list[int], workers: int, out: str | None = None
) -> tuple[Suite, list[BenchmarkSystem]]:
    """The tasks and systems to run, or a ``ValueError`` (one or two lines) that says what is wrong with the request.

    Task files that do not load are listed in ``Suite.problems`` and the others run.
    """
    chosen = resolve_systems(list(systems))
    if reps < 1 or workers < 1:
        raise ValueError(f"reps and workers must be at least 1 (got reps={reps}, workers={workers})")
    if not levels or set(levels) - {0, 1}:
        raise ValueError(f"levels are 0 (names the functions) and/or 1 (goal only); got {levels}")
    folder_problem = _report_folder_problem(out)
    if folder_problem:
        raise ValueError(folder_problem)
    return _load(suite), chosen


def _report(
    run: BenchmarkRun, loaded: Suite, summaries: dict[str, SystemSummary], cases: list[CaseRow], settings: Settings, folder: Path
) -> None:
    """Write the report to ``folder`` and attach it to the flow run."""
    config = run.config
    header = (
        f"# evoskill benchmark {run.id}\n\n{len(loaded.tasks)} tasks × levels {config['levels']} × {config['reps']} repetitions; "
        f"backend {settings.llm_backend}{' ' + settings.llm_model if settings.llm_model else ''}; "
        f"answer files hidden from generated code: {'yes' if run.answers_hidden else 'NO (no mount namespace here)'}"
        + (" (each run sees only its own folder: no task file, store, record or other system's or repetition's run)" if run.answers_hidden else "")
        + ("\n\nTask files not loaded:\n" + "\n".join(f"- {p}" for p in loaded.problems) if loaded.problems else "")
    )
    markdown, plots = write_report(summaries, header, folder, cases)
    _artifacts(markdown, summaries, plots)


def _execute(cases: list[BenchmarkCase], one: Callable[[BenchmarkCase], None], learning: set[str], workers: int) -> None:
    """Run ``one`` over ``cases`` on ``workers`` threads; a learning system's cases of a repetition in order.

    The pool is first in, first out, so a case's predecessor has always started before it waits on it.
    After an interrupt or a crash nothing new starts (the cases already running finish and are kept).
    """
    stop = threading.Event()

    def guarded(case: BenchmarkCase, after: Future[None] | None) -> None:
        if after is not None:
            after.result()
        if stop.is_set():
            raise CancelledError
        try:
            one(case)
        except BaseException:
            stop.set()
            raise

    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        last: dict[tuple[str, int], Future[None]] = {}
        futures = []
        for case in cases:
            after = last.get((case.system, case.rep)) if case.system in learning else None
            last[(case.system, case.rep)] = future = pool.submit(contextvars.copy_context().run, guarded, case, after)
            futures.append(future)
        for future in futures:
            future.result()
    except BaseException:
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _execute_on_dask(
    cases: list[BenchmarkCase],
    arguments: Callable[[BenchmarkCase], dict[str, Any]],
    keep: Callable[[BenchmarkRecord], None],
    learning: set[str],
    settings: Settings,
) -> None:
    """Run the cases as ``run_case`` task runs on the Dask cluster (prefect-dask), keeping each record as it arrives.

    A learning system's cases of a repetition wait on the one before (its store must be one the
    workers share: the file-backed store on a shared disk, or MongoDB).
    """
    with task_runner(settings) as runner:
        last: dict[tuple[str, int], PrefectFuture[BenchmarkRecord]] = {}
        futures = []
        for case in cases:
            lane = (case.system, case.rep)
            after = [last[lane]] if case.system in learning and lane in last else None
            last[lane] = future = runner.submit(run_case, parameters=arguments(case), wait_for=after)
            futures.append(future)
        for future in as_completed(futures):
            keep(future.result())


@flow(name="benchmark", flow_run_name="benchmark: {systems}", log_prints=False, validate_parameters=False)
def benchmark(
    suite: list[str],
    systems: list[str] = DEFAULT_SYSTEMS,
    reps: int = 3,
    levels: list[int] = [0, 1],  # noqa: B006 - Prefect shows defaults in the UI; never mutated
    backend: str | None = None,
    model: str | None = None,
    fresh: bool = False,
    workers: int = 1,
    out: str | None = None,
) -> BenchmarkSummary:
    """Run ``systems`` on every task in ``suite`` (folders or files) ``reps`` times at each level, then report.

    Args:
        suite: Task files, or folders of *.json task files, e.g. ["benchmarks/suites/starter"].
        systems: What answers each task: reference (the known-good script), native (the model alone), deep (the
            DeepSolver) and skills (the full agent with its skill library).
        reps: Independent repetitions of each task.
        levels: Query levels: 0 names the functions to use, 1 states only the goal.
        backend: The LLM backend (embedded, openai, scripted); the settings' when empty.
        model: The model name for that backend; the settings' when empty.
        fresh: Start a new benchmark even if the same one is unfinished (otherwise it resumes).
        workers: Runs in parallel.
        out: Report folder; <workspace>/bench/<run id>/report when empty.
    """
    started = time.perf_counter()
    loaded, chosen = plan_benchmark(suite, systems, reps, levels, workers, out)
    for problem in loaded.problems:
        report("benchmark", "failed", problem)
    settings = check_strategies(get_settings(llm_backend=backend, llm_model=model))
    store = open_store(settings)
    tasks = {t.id: t for t in loaded.tasks}
    by_name = {s.name: s for s in chosen}
    cases = [
        BenchmarkCase(system=s.name, rep=rep, level=level, task_id=t.id)  # type: ignore[arg-type]  # load_task sets every id
        for s in chosen for rep in range(1, reps + 1) for level in sorted(set(levels)) for t in loaded.tasks
    ]  # fmt: skip
    config = {
        "tasks": {t.id: t.file_hash for t in loaded.tasks}, "systems": [s.name for s in chosen], "reps": reps,
        "levels": sorted(set(levels)), "backend": settings.llm_backend, "model": settings.llm_model,
    }  # fmt: skip
    run, resumed = _open_run(store, config, len(cases), fresh)
    run.problems, run.answers_hidden = loaded.problems, bool(isolation_report(settings.sandbox_network, settings.sandbox_isolation)["allow_list"])
    store.put(run, reindex=False)
    done = {r.id: r for r in store.all(BenchmarkRecord, {"run_id": run.id})}
    pending = [c for c in cases if BenchmarkRecord.make_id(run.id, c.system, c.rep, c.level, c.task_id) not in done]
    report("benchmark", "start", f"{len(cases) - len(pending)}/{len(cases)} {run.id}: " + ("resumed" if resumed else "new"))
    progress = create_progress_artifact(100 * (len(cases) - len(pending)) / len(cases), key="benchmark-progress")
    # The task files (malformed ones too); other files next to them (a task's input data) stay readable.
    hidden = [f for p in map(Path, suite) for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]

    def arguments(case: BenchmarkCase) -> dict[str, Any]:
        system = by_name[case.system]
        return {"case": case, "bench_task": tasks[case.task_id], "system": system,
                "settings": case_settings(settings, system, run.id, case.rep, hidden), "run_id": run.id}  # fmt: skip

    def keep(record: BenchmarkRecord) -> None:
        store.put(record, reindex=False)
        done[record.id] = record
        update_progress_artifact(progress, 100 * len(done) / len(cases))  # type: ignore[arg-type]  # Prefect's async_dispatch types the sync call's result as UUID | Coroutine
        verdict = "passed" if record.passed else f"failed: {record.reason}"
        report("benchmark", "progress", f"{len(done)}/{len(cases)} {record.system} rep{record.rep} L{record.level} {record.task_id}: {verdict}")

    learning = {s.name for s in chosen if s.learns}
    try:
        with file_lock(settings.workspace.resolve() / "bench" / run.id / "running.lock", wait=False):
            if settings.uses_dask_runner():
                _execute_on_dask(_in_order(pending), arguments, keep, learning, settings)
            else:
                _execute(_in_order(pending), lambda case: keep(run_case(**arguments(case))), learning, workers)
    except LockHeld as exc:
        raise RuntimeError(f"benchmark {run.id} is running in another process; wait for it, or start anew with --fresh") from exc
    names = [s.name for s in chosen]
    summaries, rows = summarise(done.values(), names), case_rows(done.values(), names)
    folder = Path(out) if out else settings.workspace.resolve() / "bench" / run.id / "report"
    _report(run, loaded, summaries, rows, settings, folder)
    run.status, run.finished, run.report_dir = "done", datetime.now(timezone.utc), str(folder)
    store.put(run, reindex=False)
    report("benchmark", "done", f"{len(cases)}/{len(cases)} report in {folder}")
    return BenchmarkSummary(
        run_id=run.id, resumed=resumed, tasks=len(loaded.tasks), runs=len(done), systems=summaries, cases=rows,
        problems=loaded.problems, answers_hidden=run.answers_hidden, report_dir=str(folder),
        wall_s=round(time.perf_counter() - started, 2),
    )  # fmt: skip
