"""One skill over many parameter sets (e.g. 1 000 structures), in this process or on Dask.

Every parameter set is a ``BatchItem`` in the store before anything runs, and each item's
outcome is written as it arrives, so an interrupted batch loses nothing: running it again by
its id runs only the items that failed or never finished. Answers go to the JobStore, once
per item; a worker that dies mid-batch has its items rerun elsewhere by Dask. An item outside what the skill was
verified on (``skills/domain.py``) fails with the reason and never runs; the others run.

>>> summary = run_skill_batch("atomization_energy", [{"formula": f} for f in ["O2", "N2"]])  # doctest: +SKIP
>>> summary.done, summary.failed                                                            # doctest: +SKIP
(2, 0)
>>> run_skill_batch(batch_id=summary.batch_id)          # reruns only the failed ones    # doctest: +SKIP
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any, Literal

from jobflow import Flow, Job
from prefect import flow, task
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    update_progress_artifact,
)
from prefect.cache_policies import NONE
from pydantic import BaseModel, Field
from tqdm import tqdm

from deployments.job_runners import JobOutcome, job_runner
from deployments.progress import report
from deployments.run_states import failed_state, kept, outcome_of
from deployments.settings import get_settings
from flows.run_skill import job_label, store_outcomes
from skills.documents import BatchItem, Skill, SkillBatch
from skills.domain import domain_refusal
from skills.maker import SkillMaker
from skills.params import ParameterError, validate_params
from skills.store import SkillStore, open_store

__all__ = ["BatchSummary", "ItemFailure", "run_skill_batch", "run_skill_batch_flow", "batch_answers"]

_FLUSH_S = 1.0  # outcomes are written at least this often (and at the end)
_SHOWN_FAILURES = 20


class ItemFailure(BaseModel):
    index: int
    error: str


class BatchSummary(BaseModel):
    batch_id: str
    skill_id: str
    size: int
    ran: int = Field(description="Items run by this call (all of a new batch; the unfinished ones of a rerun).")
    done: int
    failed: int
    failures: list[ItemFailure] = Field(default_factory=list, description=f"The first {_SHOWN_FAILURES} failures.")
    wall_s: float


def _new_batch(store: SkillStore, skill: Skill, params: list[dict[str, Any]], executor: str) -> tuple[SkillBatch, list[BatchItem]]:
    """Validate every parameter set (all problems at once); the batch and its items are stored once their jobs are made."""
    bound, problems = [], []
    for index, one in enumerate(params):
        if not isinstance(one, dict):
            problems.append(f"item {index}: expected an object of named parameters, got {type(one).__name__}")
            continue
        try:
            bound.append(validate_params(skill.parameters, one))
        except ParameterError as exc:
            problems.append(f"item {index}: {exc}")
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise ParameterError(f"{len(problems)} of {len(params)} parameter sets are invalid; nothing ran — " + "; ".join(problems[:5]) + more)
    batch = SkillBatch(id=f"batch-{skill.name}-{uuid.uuid4().hex[:8]}", skill_id=skill.id, size=len(bound), executor=executor)
    items = [BatchItem(batch_id=batch.id, index=i, params=p) for i, p in enumerate(bound)]
    return batch, items


class JobShown(BaseModel):
    """One finished job of a batch as its task run shows it: the parameters it ran with and its answer or error."""

    index: int
    params: dict[str, Any]
    ok: bool
    answer: Any = None
    error: str | None = None
    worker: str | None = None
    wall_s: float = 0.0


@task(name="skill-job", task_run_name="{label}", cache_policy=NONE)
def _finished_jobs(label: str, jobs: list[JobShown]) -> list[JobShown]:
    """Jobs of a batch as they finished on their workers (the jobs ran there: this task run shows them); Failed when one failed."""
    failed = [j for j in jobs if not j.ok]
    if not failed:
        return jobs
    return failed_state(jobs, "; ".join(f"item {j.index}: {j.error}" for j in failed[:5])[:2000])  # type: ignore[return-value]  # the run ends Failed; outcome_of gives the jobs


class _JobRuns:
    """Shows a batch's jobs as task runs when they finish: one each for up to ``limit`` items (~13 ms apiece on the
    Prefect API), in groups of consecutive finishes beyond, so that a batch never makes more than ``limit`` task runs."""

    def __init__(self, skill_id: str, total: int, limit: int):
        self.skill_id, self.group = skill_id, max(1, -(-total // max(1, limit)))
        self.pending: list[JobShown] = []

    def add(self, item: BatchItem, outcome: JobOutcome) -> None:
        answer = outcome.document["output"] if outcome.ok and outcome.document else None
        self.pending.append(JobShown(index=item.index, params=item.params, ok=outcome.ok, answer=answer, error=outcome.error,
                                     worker=outcome.worker, wall_s=round(outcome.wall_s, 4)))  # fmt: skip
        if len(self.pending) >= self.group:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        jobs, self.pending = self.pending, []
        if len(jobs) == 1:
            label = job_label(self.skill_id, jobs[0].params, jobs[0].index)
        else:
            label = f"{self.skill_id} items {', '.join(str(j.index) for j in jobs)}"[:300]
        outcome_of(_finished_jobs(label, jobs, return_state=True))


def _record(item: BatchItem, outcome: JobOutcome) -> BatchItem:
    return item.model_copy(update={
        "status": "done" if outcome.ok else "failed", "error": outcome.error, "worker": outcome.worker, "wall_s": round(outcome.wall_s, 4),
    })  # fmt: skip


@flow(name="run-skill-batch", flow_run_name="run-skill-batch: {skill_ref}{batch_id}", log_prints=False, validate_parameters=False)
def run_skill_batch_flow(
    skill_ref: str = "",
    params: list[dict[str, Any]] | None = None,
    batch_id: str = "",
    executor: Literal["local", "dask"] | None = None,
) -> BatchSummary:
    """Run a skill once per parameter set (e.g. 1 000 structures) on the Dask cluster or here; rerun a batch's failures.

    Each item is stored before anything runs and its outcome as it arrives; an item outside what the skill was verified
    on fails with the reason and is not run. The run ends Failed, naming the failed items, when any failed (run it
    again with ``batch_id`` alone to rerun only those).

    Args:
        skill_ref: The skill's id (e.g. ase_emt_atomization-v1) or its name for the latest version.
        params: One object of parameters per item, e.g. [{"formula": "O2"}, {"formula": "N2"}].
        batch_id: Instead of skill_ref and params: the id of an earlier batch whose failed or unfinished items to rerun.
        executor: Where the jobs run: "dask" (the configured cluster) or "local" (this process); the settings' when empty.
    """
    started = time.perf_counter()
    settings = get_settings()
    store = open_store(settings)
    chosen = executor or settings.skill_executor
    if batch_id:
        batch = store.get(SkillBatch, batch_id)
        if batch is None:
            raise KeyError(f"no batch {batch_id!r}")
        items = [i for i in store.all(BatchItem, {"batch_id": batch_id}) if i.status != "done"]
    elif skill_ref and params is not None:
        batch, items = _new_batch(store, store.get_skill(skill_ref), params, chosen)
    else:
        raise ParameterError("give a skill and a list of parameter sets, or the id of a batch to rerun")
    skill = store.get_skill(batch.skill_id)
    maker = SkillMaker.from_skill(skill)
    jobs: list[Flow | Job] = []
    by_uuid: dict[str, BatchItem] = {}
    refused: list[BatchItem] = []
    for item in sorted(items, key=lambda i: i.index):
        refusal = domain_refusal(skill, item.params)
        if refusal is not None:  # outside what the skill was verified on: failed with the reason, never run
            refused.append(item.model_copy(update={"job_uuid": None, "attempts": item.attempts + 1, "status": "failed", "error": str(refusal)}))
            continue
        job = maker.make(**item.params)
        job.name = f"{skill.id}[{item.index}]"
        jobs.append(job)
        by_uuid[job.uuid] = item.model_copy(update={"job_uuid": job.uuid, "attempts": item.attempts + 1, "status": "pending"})
    store.put_many([*refused, *by_uuid.values()])  # before anything runs: an interrupted batch keeps every item
    store.put(batch, reindex=False)  # after its items: a stored batch always has them
    report("run-skill", "start", f"{batch.id}: {len(jobs)} of {batch.size} items of {skill.id} on {chosen}"
           + (f" ({len(refused)} refused: outside what the skill was verified on)" if refused else ""))
    succeeded = 0
    if jobs:
        runner = job_runner(settings, chosen, lambda message: report("run-skill", "progress", message))
        shown = _JobRuns(skill.id, len(jobs), settings.batch_task_runs)
        succeeded = _collect(store, runner.run(Flow(jobs, name=batch.id)), by_uuid, shown)
    store.record_uses(skill, len(jobs), succeeded)
    summary = _finish(store, batch, skill, len(jobs), started)
    if not summary.failed:
        return kept(summary)
    shown_failures = ", ".join(str(f.index) for f in summary.failures)
    return failed_state(summary, f"{summary.failed} of {summary.size} items failed (items {shown_failures}); "  # type: ignore[return-value]  # the run ends Failed; run_skill_batch gives callers the summary
                        f"rerun them with batch_id={summary.batch_id}")  # fmt: skip


def run_skill_batch(
    skill_ref: str = "",
    params: list[dict[str, Any]] | None = None,
    batch_id: str = "",
    executor: Literal["local", "dask"] | None = None,
) -> BatchSummary:
    """Run the ``run-skill-batch`` flow and give its ``BatchSummary``, whether every item succeeded (Completed) or not (Failed)."""
    return outcome_of(run_skill_batch_flow(skill_ref, params, batch_id, executor, return_state=True))


def _collect(store: SkillStore, outcomes: Iterator[JobOutcome], by_uuid: dict[str, BatchItem], shown: _JobRuns) -> int:
    """Write answers to the JobStore and outcomes to the store as they arrive; show progress (bar, artifact, log).

    Returns how many items succeeded.
    """
    job_store, total = store.job_store(), len(by_uuid)
    progress = create_progress_artifact(0.0, key="skill-batch-progress", description="items finished")
    unsaved: list[BatchItem] = []
    answers: list[JobOutcome] = []
    finished = failed = 0
    last_flush = last_report = time.monotonic()
    with tqdm(total=total, desc="items", unit="run", disable=None, leave=False) as bar:
        for outcome in outcomes:
            answers.append(outcome)
            item = _record(by_uuid[outcome.uuid], outcome)
            unsaved.append(item)
            shown.add(item, outcome)
            finished, failed = finished + 1, failed + int(not outcome.ok)
            bar.update(1)
            bar.set_postfix(failed=failed, refresh=False)
            now = time.monotonic()
            if now - last_flush >= _FLUSH_S or finished == total:
                store_outcomes(job_store, answers)  # answers first: an item marked done always has its answer
                store.put_many(unsaved)
                answers, unsaved, last_flush = [], [], now
                update_progress_artifact(progress, 100.0 * finished / total)  # type: ignore[arg-type]  # Prefect's async_dispatch types the sync call's result as UUID | Coroutine
            if now - last_report >= 10.0 or finished % max(1, total // 10) == 0:
                report("run-skill", "progress", f"{finished}/{total} finished, {failed} failed")
                last_report = now
    store_outcomes(job_store, answers)
    store.put_many(unsaved)
    shown.flush()
    return finished - failed


def _finish(store: SkillStore, batch: SkillBatch, skill: Skill, ran: int, started: float) -> BatchSummary:
    """Count the batch's items, store its status, attach a summary artifact."""
    items = store.all(BatchItem, {"batch_id": batch.id})
    failures = sorted((i for i in items if i.status != "done"), key=lambda i: i.index)
    done = len(items) - len(failures)
    batch = batch.model_copy(update={
        "done": done, "failed": len(failures), "status": "done" if not failures else "partial", "updated": datetime.now(timezone.utc),
    })  # fmt: skip
    store.put(batch, reindex=False)
    summary = BatchSummary(
        batch_id=batch.id, skill_id=skill.id, size=batch.size, ran=ran, done=done, failed=len(failures),
        failures=[ItemFailure(index=i.index, error=i.error or "did not finish") for i in failures[:_SHOWN_FAILURES]],
        wall_s=round(time.perf_counter() - started, 2),
    )  # fmt: skip
    lines = [f"**{batch.id}** — skill `{skill.id}`: {done}/{batch.size} done, {len(failures)} failed (this run: {ran} items, {summary.wall_s} s)"]
    if failures:
        lines += ["", "| item | error |", "|---|---|", *(f"| {f.index} | {f.error[:200]} |" for f in summary.failures)]
        lines += ["", f"Rerun only these: `evoskill skills run --retry {batch.id}`"]
    create_markdown_artifact(markdown="\n".join(lines), key="skill-batch", description="skill batch")
    report("run-skill", "done" if not failures else "failed", lines[0].replace("**", "").replace("`", ""))
    return summary


def batch_answers(store: SkillStore, batch_id: str) -> list[tuple[BatchItem, Any]]:
    """Every item of a batch with its answer from the JobStore (``None`` where it has none)."""
    items = sorted(store.all(BatchItem, {"batch_id": batch_id}), key=lambda i: i.index)
    uuids = [i.job_uuid for i in items if i.status == "done" and i.job_uuid]
    job_store = store.job_store()
    outputs = {d["uuid"]: d["output"] for d in job_store.query({"uuid": {"$in": uuids}}, properties=["uuid", "output"], load=True)}
    return [(i, outputs.get(i.job_uuid) if i.status == "done" else None) for i in items]
