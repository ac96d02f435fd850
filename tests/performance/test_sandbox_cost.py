"""Cost of one sandboxed run of a pymatgen snippet, contained (the allow-list view) against limits only, side by side.

Run with ``pytest tests/performance/test_sandbox_cost.py --benchmark-enable -s``. Each round runs the
snippet once under each isolation this machine has, in turn, so the ratios hold when the machine's speed
drifts; the medians and the ratios to ``none`` are printed and kept in ``extra_info``. A warm executor
starts from these figures.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from deployments.sandbox.execute import SandboxLimits, isolation_report, run_code

SNIPPET = (
    "import json\nfrom pymatgen.core import Lattice, Structure\n"
    "s = Structure.from_spacegroup('Fm-3m', Lattice.cubic(3.61), ['Cu'], [[0, 0, 0]])\n"
    "print(json.dumps(round(s.volume / len(s), 4)))\n"
)
TRIVIAL = "import json\nprint(json.dumps(1))\n"


def _kinds() -> list[str]:
    return [kind for kind in ("bwrap", "unshare") if isolation_report(wanted=kind)["namespaces"]] + ["none"]


def test_cost_of_a_contained_run(benchmark, tmp_path: Path):
    kinds, rounds = _kinds(), (7 if not benchmark.disabled else 1)
    seconds: dict[str, dict[str, list[float]]] = {code: {kind: [] for kind in kinds} for code in ("pymatgen", "trivial")}
    for kind in kinds:  # warm-up: the probe, the page cache
        assert run_code(SNIPPET, tmp_path, SandboxLimits(isolation=kind)).ok

    def one_round() -> None:
        for name, code in (("pymatgen", SNIPPET), ("trivial", TRIVIAL)):
            for kind in kinds:
                result = run_code(code, tmp_path, SandboxLimits(isolation=kind))
                assert result.ok, result.error
                seconds[name][kind].append(result.wall_s)

    benchmark.pedantic(one_round, rounds=rounds, iterations=1)
    for name, by_kind in seconds.items():
        medians = {kind: statistics.median(times) for kind, times in by_kind.items()}
        benchmark.extra_info[name] = {kind: round(m, 4) for kind, m in medians.items()}
        benchmark.extra_info[f"{name}_ratio_to_none"] = {kind: round(m / medians["none"], 3) for kind, m in medians.items()}
        print(f"\n{name}: median s per run " + ", ".join(f"{k} {m:.3f} ({m / medians['none']:.2f}x none)" for k, m in medians.items()))
