"""Campaign figures: the acquisition curves, the ground-truth hull with H0 and the discoveries, and the phase diagram before and after."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from pymatgen.analysis.phase_diagram import PDPlotter  # noqa: E402

from benchmarks.discovery.campaign import PolicyMetrics  # noqa: E402
from benchmarks.discovery.episode import EpisodeResult  # noqa: E402
from benchmarks.discovery.groundtruth import GroundTruth  # noqa: E402
from benchmarks.discovery.hull import HullEntry, formation_energy_per_atom, phase_diagram  # noqa: E402
from benchmarks.discovery.system import Counts, normalised  # noqa: E402

__all__ = ["plot_acquisition", "plot_phase_diagrams", "plot_hull"]


def _curves(ax: plt.Axes, rows: list[tuple[bool, str, list[float], list[float]]]) -> None:
    """One line per ``(is the baseline, label, mean, s.e.m.)``; the random baseline dashed grey with the darker band."""
    for baseline, label, mean_values, sem_values in rows:
        mean, sem = np.array(mean_values), np.array(sem_values)
        t = np.arange(len(mean))
        line = ax.plot(t, mean, "--" if baseline else "-", color="0.3" if baseline else None, label=label)[0]
        ax.fill_between(t, mean - sem, mean + sem, color=line.get_color(), alpha=0.3 if baseline else 0.12, linewidth=0)
    ax.set_xlabel("oracle queries t")
    ax.legend(fontsize=8)


def plot_acquisition(metrics: list[PolicyMetrics], title: str, path: Path) -> Path:
    """D(t), mean ± s.e.m. over episodes, one line per policy (the random baseline's band is what a policy must rise
    above); beside it, with a ground truth, the held-out ground-truth stable phases found after t queries."""
    truth = [m for m in metrics if m.truth_curve]
    fig, axes = plt.subplots(1, 2 if truth else 1, figsize=(11 if truth else 6, 4), squeeze=False)
    _curves(axes[0, 0], [(m.baseline, f"{m.policy} (AUDC {m.audc:.2f})", m.mean_curve, m.sem_curve) for m in metrics])
    axes[0, 0].set_ylabel("stable, unique, novel found D(t)")
    axes[0, 0].set_title(title, fontsize=10)
    if truth:
        _curves(axes[0, 1], [(m.baseline, f"{m.policy} (recall {m.recall or 0:.2f})", m.truth_curve, m.truth_sem_curve) for m in truth])
        axes[0, 1].set_ylabel("held-out ground-truth stable phases found")
        axes[0, 1].set_title(f"against the ground truth ({truth[0].held_out:.1f} held out per episode)", fontsize=10)
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


_MARKERS = "os^Dv<>PX*"


def _xy(counts: Mapping[str, float], elements: list[str]) -> tuple[float, float]:
    """Ternary: barycentric position in the triangle (first element bottom left, second bottom right, third on top)."""
    total = sum(counts.values())
    b, c = counts.get(elements[1], 0) / total, counts.get(elements[2], 0) / total
    return b + c / 2, c * np.sqrt(3) / 2


def _scatter(ax: plt.Axes, points: list[tuple[float, float]], **style: Any) -> None:
    ax.scatter([x for x, _ in points], [y for _, y in points], **style)


def plot_hull(truth: GroundTruth, results: list[EpisodeResult], path: Path) -> Path | None:
    """The ground-truth hull with its stable phases, H0 (of the first episode) and each policy's discoveries (all episodes).

    Binary systems: formation energy against composition; ternary: the composition triangle with the hull's tie lines.
    None (nothing written) for four or more elements.
    """
    elements = truth.system.split("-")
    if len(elements) > 3:
        return None
    references = truth.references
    stable = [(p.counts, p.formation_energy) for p in truth.stable]
    known = [(e.counts, formation_energy_per_atom(e.counts, e.energy_per_atom, references))
             for e in (HullEntry.model_validate(k) for k in (results[0].known_entries if results else [])) if len(e.counts) > 1]  # fmt: skip
    found: dict[str, list[tuple[Counts, float]]] = {}
    for result in results:
        found.setdefault(result.spec.policy, []).extend((r.counts, r.formation_energy) for r in result.records if r.sun and r.formation_energy is not None)
    fig, ax = plt.subplots(figsize=(6.5, 5.5 if len(elements) == 3 else 4.5))
    if len(elements) == 2:
        x = [normalised(p.counts, elements)[1] for p in truth.entries]
        ax.scatter(x, [p.formation_energy for p in truth.entries], s=8, color="0.75", label=f"ground-truth candidates ({truth.candidates})")
        hull = sorted([(0.0, 0.0), (1.0, 0.0), *((normalised(c, elements)[1], e) for c, e in stable)])
        ax.plot(*zip(*hull, strict=True), color="k", lw=1)
        point = lambda c, e: (normalised(c, elements)[1], e)  # noqa: E731
        ax.set_xlabel(f"x in {elements[0]}$_{{1-x}}${elements[1]}$_x$")
        ax.set_ylabel("formation energy (eV/atom)")
    else:
        corners = np.array([[0, 0], [1, 0], [0.5, np.sqrt(3) / 2], [0, 0]])
        ax.plot(corners[:, 0], corners[:, 1], color="k", lw=1)
        for (cx, cy), el in zip(corners[:3], elements, strict=True):
            ax.annotate(el, (cx, cy), textcoords="offset points", xytext=(0, 8 if cy else -14), ha="center", fontsize=11)
        diagram = phase_diagram(truth.hull())
        for facet in diagram.facets:
            xy = [_xy({el.symbol: float(n) for el, n in diagram.qhull_entries[i].composition.items()}, elements) for i in facet]
            xy.append(xy[0])
            ax.plot(*zip(*xy, strict=True), color="0.6", lw=0.7, zorder=0)
        xy_all = np.array([_xy(p.counts, elements) for p in truth.entries]).reshape(-1, 2)
        ax.scatter(xy_all[:, 0], xy_all[:, 1], s=6, color="0.8", label=f"ground-truth candidates ({truth.candidates})")
        point = lambda c, e: _xy(c, elements)  # noqa: E731
        ax.set_aspect("equal")
        ax.axis("off")
    if stable:
        _scatter(ax, [point(c, e) for c, e in stable], s=140, facecolors="none", edgecolors="k", lw=1.5,
                   label=f"ground-truth stable ({len(stable)})", zorder=3)  # fmt: skip
    if known:
        _scatter(ax, [point(c, e) for c, e in known], s=50, marker="s", color="k", label="H0 (episode 0)", zorder=4)
    for index, (policy, points) in enumerate(found.items()):
        if points:
            _scatter(ax, [point(c, e) for c, e in points], s=22, marker=_MARKERS[index % len(_MARKERS)], alpha=0.6,
                       label=f"{policy} discoveries ({len(points)})", zorder=5)  # fmt: skip
    ax.set_title(f"{truth.system} ({truth.oracle}): ground-truth hull, H0 and discoveries", fontsize=10)
    ax.legend(fontsize=7, loc="upper right" if len(elements) == 3 else "best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
