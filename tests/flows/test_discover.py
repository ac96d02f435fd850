"""The discovery campaign flow and ``evoskill discover``: real Prefect flow, real EMT, stored and resumed."""

import json

import pytest

from benchmarks.discovery.campaign import CampaignSpec
from benchmarks.discovery.system import ChemicalSystem
from deployments.settings import get_settings
from flows.discover import discover
from flows.interfaces.cli.main import main
from skills.documents import DiscoveryCampaign, DiscoveryEpisode
from skills.store import open_store


def test_campaign_runs_stores_reports_and_resumes(workspace):
    out = workspace / "report"
    # without a ground truth (truth_atoms=0): H0 is the elements, as in the test below it is the ground truth's share
    summary = discover("Cu-Ni-Pt", oracle="emt", policies=["diversity", "substitution"], budget=4, episodes=2, max_atoms=3, truth_atoms=0, out=str(out))
    assert summary.truth is None and not (out / "hull.png").exists() and all(m.recall is None for m in summary.metrics)
    assert [m.policy for m in summary.metrics] == ["made-random", "diversity", "substitution"]  # MADE's baseline first
    assert summary.baseline == "made" and [m.baseline for m in summary.metrics] == [True, False, False]
    assert summary.resumed == 0 and summary.oracle_evaluations > 0
    assert all(m.episodes == 2 and len(m.mean_curve) == 5 for m in summary.metrics)
    store = open_store(get_settings())
    baseline_curves = [e.result["curve"] for e in sorted(store.all(DiscoveryEpisode, {"campaign_id": summary.campaign_id, "policy": "made-random"}), key=lambda e: e.episode)]
    # the baseline against itself, episode by episode: 1 where it found something, undefined where it did not
    assert summary.metrics[0].af.values == [1.0 if curve[-1] >= 1 else None for curve in baseline_curves]
    for name in ("acquisition.png", "phase_diagram.png", "metrics.md", "campaign.json"):
        assert (out / name).stat().st_size > 0
    report = (out / "metrics.md").read_text()
    assert "| diversity |" in report and "| made-random (baseline) |" in report
    assert "## Conventions" in report and "planner random → generator made-random → no filters" in report
    assert summary.conventions in report and summary.diagnosis in report
    assert "## Why the factors read as they do" in summary.diagnosis and "Base rate" not in summary.diagnosis  # no ground truth
    assert store.count("discovery_episodes", {"campaign_id": summary.campaign_id}) == 6
    assert store.get(DiscoveryCampaign, summary.campaign_id).status == "done"
    assert 0 < store.count("oracle_results") <= summary.oracle_evaluations  # parallel episodes may both relax a shared reference

    again = discover("Cu-Ni-Pt", oracle="emt", policies=["diversity", "substitution"], budget=4, episodes=2, max_atoms=3, truth_atoms=0, out=str(out))
    assert again.resumed == 6 and again.oracle_evaluations == 0
    assert [m.model_dump() for m in again.metrics] == [m.model_dump() for m in summary.metrics]
    assert len(store.all(DiscoveryEpisode, {"campaign_id": summary.campaign_id})) == 6


def test_cli_refuses_bad_input_and_explains(capsys, workspace):
    assert main(["discover", "--system", "Cu-Fe-Ni", "--oracle", "emt"]) == 2
    assert "does not know Fe" in capsys.readouterr().err
    assert main(["discover", "--system", "Cu-Ni", "--max-atoms", "1"]) == 2
    assert "max_atoms" in capsys.readouterr().err
    assert main(["discover", "--system", "Cu-Ni", "--policy", "greedy"]) == 2
    assert "unknown policy 'greedy'" in capsys.readouterr().err
    assert main(["discover", "--system", "Cu-Ni", "--budget", "0"]) == 2


def test_cli_reports_the_ground_truth_and_its_reuse(capsys, workspace):
    args = ["discover", "--system", "Cu-Pt", "--policy", "diversity", "--budget", "3", "--episodes", "2", "--max-atoms", "2",
            "--known-fraction", "1", "--out", str(workspace / "r")]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    # Cu-Pt cells of at most 2 atoms: 6 candidates; EMT orders CuPt (L1_1), the one stable phase, here all in H0
    assert "ground truth for Cu-Pt (emt): 6 candidates relaxed in" in out and "; 1 stable phases" in out
    assert "| diversity | 0.0 | — |" in out  # nothing held out: no recall, no precision
    for name in ("acquisition.png", "hull.png", "phase_diagram.png"):
        assert (workspace / "r" / name).stat().st_size > 0
    assert "## Against the ground truth" in (workspace / "r" / "metrics.md").read_text()
    assert "## Why the factors read as they do" in out and "Base rate: ε = 0.1 eV/atom admits" in out
    assert main([*args, "--known-fraction", "0"]) == 0  # another campaign, the same ground truth
    out = capsys.readouterr().out
    assert "ground truth for Cu-Pt (emt): 6 candidates reused" in out and "| diversity | 1.0 |" in out


def test_cli_runs_a_small_campaign_as_json(capsys, workspace):
    code = main(["discover", "--system", "Ag-Au", "--policy", "ucb", "--budget", "3", "--episodes", "1", "--max-atoms", "2", "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    # The campaign the arguments describe, run and stored: one episode per policy, each of 3 queries.
    spec = CampaignSpec(system=ChemicalSystem.parse("Ag-Au", max_atoms=2), oracle="emt", policies=["ucb"], budget=3, episodes=1)
    assert summary["campaign_id"] == spec.campaign_id() and summary["resumed"] == 0
    # The ground truth was computed first (cells of at most --max-atoms 2) and stored
    truth = summary["truth"]
    assert truth["candidates"] > 0 and not truth["reused"] and truth["wall_s"] > 0
    assert open_store(get_settings()).count("discovery_ground_truths") == 1
    assert all(m["held_out"] is not None and m["hit_rate"] is not None for m in summary["metrics"])
    stored = open_store(get_settings()).all(DiscoveryEpisode, {"campaign_id": spec.campaign_id()})
    curves = {e.policy: e.result["curve"] for e in stored}
    assert sorted((e.policy, e.episode, len(e.result["records"])) for e in stored) == [("made-random", 0, 3), ("ucb", 0, 3)]
    # With one episode a policy's mean curve is that episode's D(t), t = 0..3.
    assert [(m["policy"], m["mean_curve"]) for m in summary["metrics"]] == [("made-random", curves["made-random"]), ("ucb", curves["ucb"])]
    assert all(len(curve) == 4 for curve in curves.values())
    # The same campaign through the flow resumes both episodes and reports the same metrics.
    again = discover("Ag-Au", oracle="emt", policies=["ucb"], budget=3, episodes=1, max_atoms=2)
    assert again.campaign_id == spec.campaign_id() and again.resumed == 2 and again.oracle_evaluations == 0
    assert again.truth is not None and again.truth.reused and again.truth.candidates == truth["candidates"]
    assert [m.model_dump(mode="json") for m in again.metrics] == summary["metrics"]


def test_campaign_with_batches_spends_exactly_its_budget(workspace):
    summary = discover("Cu-Ni", oracle="emt", policies=["diversity"], budget=5, episodes=1, max_atoms=3, batch_size=2, truth_atoms=0, out=str(workspace / "r"))
    assert [len(m.mean_curve) for m in summary.metrics] == [6, 6]  # batches of 2, 2, 1
    episodes = open_store(get_settings()).all(DiscoveryEpisode, {"campaign_id": summary.campaign_id})
    assert sorted(len(e.result["records"]) for e in episodes) == [5, 5]


def test_cli_filtered_baseline_is_its_own_campaign(capsys, workspace):
    args = ["discover", "--system", "Ag-Au", "--policy", "ucb", "--budget", "2", "--episodes", "1", "--max-atoms", "2"]
    assert main([*args, "--baseline", "filtered"]) == 0
    out = capsys.readouterr().out
    assert "| random (baseline) |" in out and "**Baseline** `filtered` (policy `random`)" in out and "## Conventions" in out
    filtered = CampaignSpec(system=ChemicalSystem.parse("Ag-Au", max_atoms=2), oracle="emt", policies=["ucb"], budget=2, episodes=1, baseline="filtered")
    made = filtered.model_copy(update={"baseline": "made"})
    store = open_store(get_settings())
    assert sorted(e.policy for e in store.all(DiscoveryEpisode, {"campaign_id": filtered.campaign_id()})) == ["random", "ucb"]
    assert main([*args, "--json"]) == 0  # the default, MADE's baseline: nothing reused from the filtered campaign
    summary = json.loads(capsys.readouterr().out)
    assert summary["campaign_id"] == made.campaign_id() != filtered.campaign_id() and summary["resumed"] == 0
    assert summary["baseline"] == "made" and summary["metrics"][0]["policy"] == "made-random"
    with pytest.raises(SystemExit) as refused:
        main([*args, "--baseline", "unfiltered"])
    assert refused.value.code == 2 and "invalid choice: 'unfiltered'" in capsys.readouterr().err
