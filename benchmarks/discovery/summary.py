"""Short text views of a campaign for the LLM policies (lean context: a line per item)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pymatgen.core import Structure

if TYPE_CHECKING:
    from benchmarks.discovery.environment import DiscoveryEnvironment

__all__ = ["history_lines", "candidate_line"]


def history_lines(env: DiscoveryEnvironment, last: int = 15) -> str:
    """The latest queries, one line each; ``(none yet)`` at the start."""
    lines = []
    for r in env.records[-last:]:
        if r.ok:
            lines.append(f"{r.t}. {r.formula}: E_f {r.formation_energy:+.3f}, above hull {r.e_above_hull:.3f}" + (" (new stable)" if r.sun else ""))
        else:
            lines.append(f"{r.t}. {r.formula}: failed ({r.error})")
    return "\n".join(lines) or "(none yet)"


def candidate_line(index: int, structure: Structure, score: float | None = None) -> str:
    """``3: Cu3Pt, 4 atoms, 12.1 Å³/atom, L1_2 (Cu3Au) Pt/Cu[, surrogate E_f -0.120]``."""
    text = f"{index}: {structure.composition.reduced_formula}, {len(structure)} atoms, {structure.volume / len(structure):.1f} Å³/atom"
    if structure.properties.get("origin"):
        text += f", {structure.properties['origin']}"
    return text + (f", surrogate E_f {score:+.3f}" if score is not None else "")
