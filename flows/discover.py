"""Closed-loop discovery campaigns as a Prefect flow: policies × episodes against a random baseline.

Each episode is a Prefect task (on the Dask cluster when one is configured, so episodes run in
parallel processes) and is stored as soon as it ends: running the same campaign again resumes it
and reruns nothing that finished. Before the episodes, the system's ground truth (every enumerated
candidate relaxed once with the oracle, ``benchmarks.discovery.groundtruth``) is computed, or taken
from the store; each episode's H0 is the elements plus a seeded ``known_fraction`` of its stable
phases, and the rest are what recall and precision count. The report folder gets ``acquisition.png``
(D(t) and held-out phases found, mean ± s.e.m.), ``hull.png`` (the ground-truth hull with H0 and each
policy's discoveries), ``phase_diagram.png`` (before/after, first episode of the first non-baseline
policy), ``metrics.md`` (with "Why the factors read as they do": the measured facts that bound AF and the
threshold's base rate; and "Conventions": the baseline's pipeline, AF and EF edge cases),
and ``campaign.json``. The baseline is MADE's unfiltered random generator (``baseline="made"``) or the
filtered random preset (``baseline="filtered"``); the campaign id tells them apart.

>>> summary = discover("Cu-Ni-Pt", oracle="emt", policies=["diversity"], budget=10, episodes=2)  # doctest: +SKIP
>>> str(summary.metrics[1].af)                                                                    # doctest: +SKIP
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from pydantic import BaseModel, Field

from benchmarks.discovery.campaign import (
    CampaignSpec,
    PolicyMetrics,
    conventions,
    diagnosis,
    markdown_table,
    summarise,
    truth_table,
)
from benchmarks.discovery.episode import EpisodeResult, EpisodeSpec, run_episode
from benchmarks.discovery.evaluation import OracleCache, episode_evaluator
from benchmarks.discovery.groundtruth import GroundTruth, ground_truth
from benchmarks.discovery.oracles import make_oracle
from benchmarks.discovery.policy_factory import BaselineName, needs_llm
from benchmarks.discovery.system import ChemicalSystem
from deployments.progress import report
from deployments.settings import Settings, get_settings
from deployments.task_runners import task_runner
from skills.documents import DiscoveryCampaign, DiscoveryEpisode
from skills.store import open_store

__all__ = ["CampaignSummary", "TruthSummary", "discover", "run_discovery_episode", "compute_ground_truth", "truth_line"]


class TruthSummary(BaseModel):
    """What the ground truth cost and holds."""

    candidates: int
    stable: int
    wall_s: float = Field(description="Time it took when it was computed.")
    reused: bool = Field(description="Taken from the store (computed by an earlier campaign).")

    @classmethod
    def of(cls, truth: GroundTruth) -> TruthSummary:
        return cls(candidates=truth.candidates, stable=len(truth.stable), wall_s=truth.wall_s, reused=truth.reused)


def truth_line(system: str, oracle: str, truth: TruthSummary) -> str:
    """``ground truth for Cu-Ni-Pt (emt): 334 candidates relaxed in 95 s; 6 stable phases`` (``… candidates reused (computed in 95 s) …``
    when it came from the store)."""
    when = f"reused (computed in {truth.wall_s:.0f} s)" if truth.reused else f"relaxed in {truth.wall_s:.0f} s"
    return f"ground truth for {system} ({oracle}): {truth.candidates} candidates {when}; {truth.stable} stable phases"


class CampaignSummary(BaseModel):
    campaign_id: str
    system: str
    oracle: str
    budget: int
    episodes: int
    baseline: str = Field(description="made (MADE's unfiltered random generator) or filtered: what AF and EF compare with.")
    conventions: str = Field(description="The report's Conventions section (markdown): baseline pipeline, AF and EF edge cases.")
    diagnosis: str = Field(default="", description="The report's 'Why the factors read as they do' section (markdown).")
    resumed: int = Field(description="Episodes taken from the store instead of being run again.")
    metrics: list[PolicyMetrics]
    oracle_evaluations: int
    cache_hits: int
    oracle_wall_s: float = Field(description="Sum of the episodes' wall times (compare with wall_s for parallelism).")
    report_dir: str
    wall_s: float
    truth: TruthSummary | None = Field(default=None, description="The ground truth, when the campaign has one.")


@task(task_run_name="ground truth {spec.system.name} ({spec.oracle})")
def compute_ground_truth(spec: CampaignSpec, settings: Settings) -> GroundTruth | None:
    """The system's ground truth for this oracle: from the store, or relaxed now on ``discovery_truth_workers`` local processes."""
    if spec.truth_settings is None:
        return None
    store = open_store(settings)
    report("discover", "start", f"ground truth for {spec.system.name} ({spec.oracle}): from the store, else enumerated and relaxed now")
    with episode_evaluator(OracleCache(store), settings.discovery_truth_workers, on_dask=False) as evaluator:
        return ground_truth(spec.system, make_oracle(spec.oracle), spec.truth_settings, evaluator, store)


@task(task_run_name="episode {spec.policy} #{episode}", retries=1, retry_delay_seconds=1)
def run_discovery_episode(spec: EpisodeSpec, episode: int, campaign_id: str, settings: Settings) -> EpisodeResult:
    """One episode, with the oracle cache shared through the store (the LLM is made here for LLM policies)."""
    store = open_store(settings)
    llm = None
    if needs_llm(spec.policy):
        from deployments.llm.client import make_client

        llm = make_client(settings)

    def progress(record) -> None:  # noqa: ANN001 - QueryRecord
        mark = "★" if record.sun else ("✗" if not record.ok else "·")
        report("discover", "progress", f"{spec.policy} #{episode} query {record.t}/{spec.budget} {mark} {record.formula}")

    with episode_evaluator(OracleCache(store), spec.batch_size, settings.uses_dask_runner()) as evaluator:
        result = run_episode(spec, evaluator, llm, progress)
    store.put(DiscoveryEpisode(campaign_id=campaign_id, policy=spec.policy, episode=episode, result=result.model_dump(mode="json")))
    return result


@flow(name="discover", log_prints=True)
def discover(
    system: str,
    oracle: str = "emt",
    policies: list[str] | None = None,
    budget: int = 50,
    episodes: int = 5,
    seed: int = 0,
    epsilon: float = 0.1,
    max_atoms: int = 8,
    batch_size: int = 1,
    known_fraction: float = 0.5,
    truth_atoms: int = 4,
    out: str | None = None,
    fresh: bool = False,
    baseline: BaselineName = "made",
) -> CampaignSummary:
    """Run a campaign; ``policies`` are compared with the random baseline, which always runs.

    Args:
        system: The chemical system, elements joined by '-', e.g. Cu-Ni-Pt.
        oracle: What relaxes a proposal and gives its energy: emt, lj or chgnet.
        policies: The proposal policies to compare with random, e.g. ["diversity", "ucb", "substitution"].
        budget: Oracle queries per episode.
        episodes: Episodes per policy; episode i uses seed + i.
        seed: The first episode's random seed.
        epsilon: Stability threshold in eV/atom above the convex hull.
        max_atoms: Most atoms per proposed cell.
        batch_size: Proposals per step, relaxed in parallel.
        known_fraction: Share of the ground truth's stable phases given in H0 (seeded per episode); the rest are to be discovered.
        truth_atoms: Most atoms in the ground truth's derivative supercells (at most max_atoms); 0 runs without a ground truth.
        out: Report folder; <workspace>/discovery/<campaign id> when empty.
        fresh: Rerun episodes already stored for this campaign (otherwise they are reused).
        baseline: What AF and EF compare with: made (MADE's random generator, no filters) or filtered (the filtered random preset).
    """
    started = time.perf_counter()
    settings = get_settings()
    spec = CampaignSpec(
        system=ChemicalSystem.parse(system, max_atoms=max_atoms), oracle=oracle, policies=policies or ["diversity"],
        budget=budget, episodes=episodes, seed=seed, epsilon=epsilon, batch_size=batch_size, known_fraction=known_fraction,
        truth_atoms=truth_atoms, baseline=baseline,
    )  # fmt: skip
    make_oracle(oracle).check(spec.system.elements)
    campaign_id = spec.campaign_id()
    store = open_store(settings)
    if fresh:
        store.delete(DiscoveryEpisode, {"campaign_id": campaign_id})
    store.put(DiscoveryCampaign(id=campaign_id, config=spec.model_dump(mode="json")))
    done = {(e.policy, e.episode): EpisodeResult.model_validate(e.result) for e in store.all(DiscoveryEpisode, {"campaign_id": campaign_id})}
    truth = compute_ground_truth(spec, settings)
    truth_summary = None
    if truth is not None:
        truth_summary = TruthSummary.of(truth)
        report("discover", "start", truth_line(spec.system.name, oracle, truth_summary))
    todo = [(s, i) for i, s in spec.episode_specs(truth) if (s.policy, i) not in done]
    report("discover", "start", f"{campaign_id}: {len(todo)} episodes to run, {len(done)} stored")
    with task_runner(settings) as runner:
        futures = [runner.submit(run_discovery_episode, {"spec": s, "episode": i, "campaign_id": campaign_id, "settings": settings}) for s, i in todo]
        fresh_results = [f.result() for f in futures]
    order = spec.all_policies
    results = sorted([*done.values(), *fresh_results], key=lambda r: (order.index(r.spec.policy), r.spec.seed))
    metrics = summarise(results, spec.baseline_policy, truth)
    report_dir = Path(out) if out else settings.workspace.resolve() / "discovery" / campaign_id
    why = diagnosis(spec, metrics, truth)
    _write_report(report_dir, spec, metrics, results, truth, why)
    summary = CampaignSummary(
        campaign_id=campaign_id, system=spec.system.name, oracle=oracle, budget=budget, episodes=episodes, baseline=spec.baseline,
        conventions=conventions(spec), diagnosis=why, resumed=len(done),
        metrics=metrics, oracle_evaluations=sum(r.oracle_evaluations for r in fresh_results),
        cache_hits=sum(r.cache_hits for r in fresh_results), oracle_wall_s=sum(r.wall_s for r in fresh_results),
        report_dir=str(report_dir), wall_s=time.perf_counter() - started, truth=truth_summary,
    )  # fmt: skip
    (report_dir / "campaign.json").write_text(summary.model_dump_json(indent=1))
    store.put(DiscoveryCampaign(
        id=campaign_id, config=spec.model_dump(mode="json"), status="done", metrics=[m.model_dump(mode="json") for m in metrics],
        report_dir=str(report_dir), finished=datetime.now(timezone.utc),
    ))  # fmt: skip
    create_markdown_artifact(
        markdown=f"# Discovery {campaign_id}\n\n{markdown_table(metrics)}\n\n{truth_table(metrics)}\n\n{why}\n\n{summary.conventions}",
        key="discovery-campaign",
    )
    report("discover", "done", f"{campaign_id}: report in {report_dir}")
    return summary


def _write_report(
    folder: Path, spec: CampaignSpec, metrics: list[PolicyMetrics], results: list[EpisodeResult], truth: GroundTruth | None, why: str,
) -> None:  # fmt: skip
    from benchmarks.discovery.plots import plot_acquisition, plot_hull, plot_phase_diagrams

    folder.mkdir(parents=True, exist_ok=True)
    title = f"{spec.system.name}, {spec.oracle}, B={spec.budget}, {spec.episodes} episodes, baseline {spec.baseline}"
    plot_acquisition(metrics, title, folder / "acquisition.png")
    shown = next((r for r in results if r.spec.policy != spec.baseline_policy), results[0])
    plot_phase_diagrams(shown, folder / "phase_diagram.png")
    truth_text = ""
    if truth is not None:
        plot_hull(truth, results, folder / "hull.png")
        truth_text = (f"\n## Against the ground truth\n\n{truth_line(spec.system.name, spec.oracle, TruthSummary.of(truth))}; "
                      f"H0 holds {spec.known_fraction:.0%} of the stable phases (seeded per episode).\n\n{truth_table(metrics)}\n")  # fmt: skip
    notes = [f"- {r.spec.policy} (seed {r.spec.seed}): {n}" for r in results for n in [*r.notes[:3], *([r.stopped] if r.stopped else [])]]
    text = f"# {title}\n\n{markdown_table(metrics)}\n{truth_text}\n{why}\n\n{conventions(spec)}\n"
    (folder / "metrics.md").write_text(text + ("\n## Notes\n" + "\n".join(notes) + "\n" if notes else ""))
