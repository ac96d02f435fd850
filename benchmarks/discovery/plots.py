"""Campaign figures: the acquisition curves and the phase diagram before and after."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from pymatgen.analysis.phase_diagram import PDPlotter  # noqa: E402

from benchmarks.discovery.campaign import PolicyMetrics  # noqa: E402
from benchmarks.discovery.episode import EpisodeResult  # noqa: E402
from benchmarks.discovery.hull import HullEntry, phase_diagram  # noqa: E402

__all__ = ["plot_acquisition", "plot_phase_diagrams"]


def plot_acquisition(metrics: list[PolicyMetrics], title: str, path: Path) -> Path:
    """D(t), mean ± s.e.m. over episodes, one line per policy (the random baseline dashed)."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for m in metrics:
        t = np.arange(len(m.mean_curve))
        mean, sem = np.array(m.mean_curve), np.array(m.sem_curve)
        ax.plot(t, mean, "--" if m.baseline else "-", label=f"{m.policy} (AUDC {m.audc:.2f})")
        ax.fill_between(t, mean - sem, mean + sem, alpha=0.2)
    ax.set_xlabel("oracle queries t")
    ax.set_ylabel("stable, unique, novel found D(t)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_phase_diagrams(result: EpisodeResult, path: Path) -> Path:
    """H0's phase diagram beside the one with every successful query of ``result`` added."""
    known = [HullEntry.model_validate(e) for e in result.known_entries]
    found = [HullEntry(counts=r.counts, energy_per_atom=r.energy_per_atom) for r in result.records if r.ok]  # type: ignore[arg-type]  # ok records have an energy
    ternary = len(result.spec.system.elements) <= 3
    fig = plt.figure(figsize=(11, 5))
    for index, (entries, label) in enumerate([(known, "before (H0)"), (known + found, f"after {len(result.records)} queries")]):
        plotter = PDPlotter(phase_diagram(entries), show_unstable=0.1, backend="matplotlib")
        ax = plotter.get_plot(label_unstable=False, ax=fig.add_subplot(1, 2, index + 1, projection=None if ternary else "3d"))
        ax.set_title(f"{result.spec.system.name} {label}", pad=20)  # type: ignore[union-attr]  # the matplotlib backend returns its Axes
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
