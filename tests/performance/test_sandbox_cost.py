"""Cost of one sandboxed run, side by side: a bare ``python -c``, cold runs under each isolation, warm runs.

Run with ``pytest tests/performance/test_sandbox_cost.py --benchmark-enable -s``. Each round runs each
snippet once in every way, in turn, so the ratios hold when the machine's speed drifts; the medians and
the ratios to a bare ``python -c`` are printed and kept in ``extra_info``. Each figure is the caller's wall time around
``run_code``. Besides a trivial and a pymatgen snippet, the code of four starter-library skills (the XRD peak, the
energy above the hull, the EOS bulk modulus, Lipinski's rule) and a structure built from its space group. Target: the
pymatgen snippet, warm, >= 10x faster than the bare ``python -c`` (which imports pymatgen every time, as a cold run does).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from deployments.sandbox.execute import SandboxLimits, isolation_report, run_code, warm_up

# Rock-salt NaCl from its conventional cell, and its density.
SNIPPET = (
    "import json\nfrom pymatgen.core import Lattice, Structure\n"
    "s = Structure(Lattice.cubic(5.64), ['Na'] * 4 + ['Cl'] * 4, [[0, 0, 0], [0, .5, .5], [.5, 0, .5], [.5, .5, 0],"
    " [.5, .5, .5], [.5, 0, 0], [0, .5, 0], [0, 0, .5]])\n"
    "print(json.dumps(round(s.density, 4)))\n"
)
TRIVIAL = "import json\nprint(json.dumps(1))\n"
FROM_SPACEGROUP = (
    "import json\nfrom pymatgen.core import Lattice, Structure\n"
    "s = Structure.from_spacegroup('Fm-3m', Lattice.cubic(5.64), ['Na', 'Cl'], [[0, 0, 0], [0.5, 0.5, 0.5]])\n"
    "print(json.dumps(round(s.density, 4)))\n"
)
_LIBRARY = Path(__file__).parents[2] / "skills" / "library"
SNIPPETS = {
    "pymatgen": SNIPPET,
    "trivial": TRIVIAL,
    "from_spacegroup": FROM_SPACEGROUP,
    **{
        label: json.loads((_LIBRARY / f"{task}.json").read_text())["solution_code_or_process"]
        for label, task in (("xrd", "pymatgen_xrd_cu_strongest_peak"), ("e_above_hull", "pymatgen_phase_diagram_ehull_li2o2"),
                            ("eos", "ase_emt_cu_bulk_modulus"), ("lipinski", "rdkit_lipinski_aspirin"))  # fmt: skip
    },
}


def _ways() -> dict[str, SandboxLimits | None]:
    """Each way to run a snippet here: None is a bare ``python -c``."""
    ways: dict[str, SandboxLimits | None] = {"bare": None}
    if isolation_report(wanted="none")["works"]:  # as root, only where every user may read the Python environment
        ways["none"] = SandboxLimits(isolation="none", warm=False)
    for kind in ("bwrap", "unshare"):
        if isolation_report(wanted=kind)["namespaces"]:
            ways[f"{kind} cold"] = SandboxLimits(isolation=kind, warm=False)
            ways[f"{kind} warm"] = SandboxLimits(isolation=kind, warm=True)
    return ways


def _bare(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - started


def test_cost_of_a_sandboxed_run(benchmark, tmp_path: Path):
    ways, rounds = _ways(), (7 if not benchmark.disabled else 1)
    for name, limits in ways.items():  # warm-up: the probes, the page cache, the warm executors
        if limits is not None:
            assert not limits.warm or warm_up(limits), f"{name}: the warm executor did not start"
            for code in SNIPPETS.values():
                result = run_code(code, tmp_path, limits)
                assert result.ok and result.executor == ("warm" if limits.warm else "cold"), result.error
    seconds: dict[str, dict[str, list[float]]] = {snippet: {name: [] for name in ways} for snippet in SNIPPETS}

    def one_round() -> None:
        for snippet, code in SNIPPETS.items():
            for name, limits in ways.items():
                if limits is None:
                    seconds[snippet][name].append(_bare(code))
                    continue
                started = time.perf_counter()
                result = run_code(code, tmp_path, limits)
                seconds[snippet][name].append(time.perf_counter() - started)
                assert result.ok and result.executor == ("warm" if limits.warm else "cold"), result.error

    benchmark.pedantic(one_round, rounds=rounds, iterations=1)
    for snippet, by_way in seconds.items():
        medians = {name: statistics.median(times) for name, times in by_way.items()}
        benchmark.extra_info[snippet] = {name: round(m, 4) for name, m in medians.items()}
        benchmark.extra_info[f"{snippet}_speedup_over_bare"] = {name: round(medians["bare"] / m, 2) for name, m in medians.items()}
        print(f"\n{snippet}: median s per run " + ", ".join(f"{k} {m:.3f} ({medians['bare'] / m:.1f}x bare)" for k, m in medians.items()))
