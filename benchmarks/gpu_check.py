"""The GPU check: CHGNet relaxations on a Dask worker that advertises a GPU, against a CPU worker, in one run.

    python -m benchmarks.gpu_check [--structures 16] [--supercell 2] [--out gpu_check.json]

It starts a Dask ``LocalCluster`` with no workers of its own and adds two: one that sees the GPU and advertises
``GPU=1`` (the resource a GPU-annotated skill's job asks for), one with ``CUDA_VISIBLE_DEVICES`` empty. The same
batch of rock-salt structures (NaCl at lattice constants from 5.55 to 5.75 Å, as ``--supercell`` N×N×N conventional
cells) is relaxed on each, every job submitted with the resources that pin it there, through the calculator atomate2's
``ForceFieldRelaxMaker`` builds for ``MLFF.CHGNet`` (``chgnet.model.CHGNetCalculator``, FIRE on positions and cell
through ASE's ``FrechetCellFilter``, to fmax 0.05 eV/Å). It reports the device each worker's model ran on, the wall
time and structures per second of each batch (the first structure, which loads the model, timed apart), their ratio,
and the largest difference between the two workers' energies per atom. It needs chgnet, ASE, pymatgen and Dask only
(not the rest of evoskill), so it also runs on a GPU machine that has nothing else installed; where there is no GPU,
it says so and runs both batches on the CPU.

    python -m benchmarks.gpu_check --skill skill.json [--structures 8] [--out gpu_check_skill.json]

runs a stored CHGNet skill instead (``evoskill skills export ID -o skill.json``) the way a skill job runs on a worker:
``skills.maker.run_skill_job``, its domain check, then the skill's code in evoskill's sandbox, cold, given the GPU's device
files where the skill prefers a GPU (``sandbox_gpu_devices``). Before the batch, a probe run through the same sandbox on
each worker reports what torch sees inside it. This needs evoskill installed; the first form does not.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["relax", "run_check", "run_skill_check", "main"]

_CALCULATORS: dict[str, Any] = {}


def _calculator() -> Any:
    """One CHGNet calculator per worker process (the model loads once), on the GPU when this process sees one."""
    if "chgnet" not in _CALCULATORS:
        from chgnet.model import CHGNetCalculator

        _CALCULATORS["chgnet"] = CHGNetCalculator(use_device=None)  # None: CUDA where available, else CPU
    return _CALCULATORS["chgnet"]


def relax(a: float, supercell: int, fmax: float = 0.05, steps: int = 200) -> dict[str, Any]:
    """Relax rock-salt NaCl built at lattice constant ``a`` (as ``supercell``³ conventional cells); energy per atom and device."""
    from ase.filters import FrechetCellFilter
    from ase.optimize import FIRE
    from pymatgen.core import Lattice, Structure
    from pymatgen.io.ase import AseAtomsAdaptor

    started = time.perf_counter()
    structure = Structure.from_spacegroup("Fm-3m", Lattice.cubic(a), ["Na", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]])
    structure.make_supercell([supercell] * 3)
    atoms = AseAtomsAdaptor.get_atoms(structure)
    calculator = _calculator()
    atoms.calc = calculator
    optimizer = FIRE(FrechetCellFilter(atoms), logfile=None)
    optimizer.run(fmax=fmax, steps=steps)
    return {
        "a_start": a, "atoms": len(atoms), "energy_per_atom": float(atoms.get_potential_energy()) / len(atoms),
        "a_relaxed": float(atoms.cell.lengths()[0]) / supercell, "steps": int(optimizer.nsteps),
        "device": str(calculator.model.parameters().__next__().device), "wall_s": time.perf_counter() - started,
    }  # fmt: skip


def _device_name() -> str:
    try:
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none (torch sees no CUDA device)"
    except Exception as exc:  # noqa: BLE001 - the report says what went wrong
        return f"unknown ({type(exc).__name__}: {exc})"


def _batch(client: Any, worker: str, resources: dict[str, float] | None, lattice: list[float], supercell: int, steps: int) -> dict[str, Any]:
    """The first structure alone (model load), then the rest at once, all pinned to ``worker``; a line per structure on stderr."""
    from distributed import as_completed

    first = client.submit(relax, lattice[0], supercell, steps=steps, workers=[worker], resources=resources, pure=False).result()
    print(f"  {worker}: first structure {first['wall_s']:.1f} s on {first['device']}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    futures = [client.submit(relax, a, supercell, steps=steps, workers=[worker], resources=resources, pure=False) for a in lattice[1:]]
    results = []
    for future in as_completed(futures):
        results.append(future.result())
        print(f"  {worker}: {len(results)}/{len(futures)} ({results[-1]['steps']} steps, {results[-1]['wall_s']:.1f} s)", file=sys.stderr, flush=True)
    results.sort(key=lambda r: r["a_start"])
    wall = time.perf_counter() - started
    return {
        "first_wall_s": first["wall_s"], "wall_s": wall, "structures": len(results),
        "structures_per_s": len(results) / wall if wall else None, "device": first["device"], "results": [first, *results],
    }  # fmt: skip


def run_check(structures: int = 16, supercell: int = 2, steps: int = 200) -> dict[str, Any]:
    """Relax the same batch on a GPU worker and a CPU worker of one Dask cluster; the report as a dict."""
    gpu_name = _device_name()
    has_gpu = not gpu_name.startswith(("none", "unknown"))
    lattice = [round(5.55 + 0.2 * i / max(structures - 1, 1), 4) for i in range(structures)]
    report: dict[str, Any] = {"gpu": gpu_name, "structures": structures, "supercell": supercell, "atoms": 8 * supercell**3, "steps": steps}
    report.update(_on_both_workers(lambda client, worker, resources: _batch(client, worker, resources, lattice, supercell, steps), has_gpu))
    pairs = zip(report["gpu_worker"]["results"], report["cpu_worker"]["results"], strict=True)
    report["max_energy_difference_ev_per_atom"] = max(abs(g["energy_per_atom"] - c["energy_per_atom"]) for g, c in pairs)
    return report


_PROBE = """
def run():
    import os

    found = {"dev": sorted(os.listdir("/dev"))}
    try:
        import torch
    except ImportError:
        return {**found, "cuda": False, "device": "cpu (torch is not installed)"}
    cuda = torch.cuda.is_available()
    found.update(cuda=cuda, device=torch.cuda.get_device_name(0) if cuda else "cpu")
    if cuda:
        x = torch.ones(1024, 1024, device="cuda")
        found["matmul_sum"] = float((x @ x).sum())
    return found
"""


def probe_sandbox() -> dict[str, Any]:
    """What torch sees inside a sandboxed run given this machine's GPU device files (as a skill that prefers a GPU is)."""
    from deployments.sandbox.execute import isolation_report
    from deployments.settings import get_settings
    from skills.runner import run_skill_code

    settings = get_settings()
    execution = run_skill_code(_PROBE, [], {}, settings, "gpu-probe", gpu=True)
    found = execution.answer if execution.ok and isinstance(execution.answer, dict) else {"error": execution.error, "stderr": execution.stderr[-1500:]}
    contained = isolation_report(wanted=settings.sandbox_isolation)
    return {**found, "isolation": contained["isolation"], "memory_cgroup": contained["memory_cgroup"], "wall_s": execution.wall_s}


def run_skill_job_timed(skill: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """One skill job's own code (``run_skill_job``: domain check, then the sandbox), timed; its answer or its error."""
    from skills.maker import run_skill_job

    started = time.perf_counter()
    try:
        answer, error = run_skill_job.original(skill, params), None  # type: ignore[attr-defined]  # jobflow keeps the function
    except Exception as exc:  # noqa: BLE001 - one failed item is part of the report
        answer, error = None, f"{type(exc).__name__}: {exc}"[:400]
    return {"params": params, "answer": answer, "error": error, "wall_s": time.perf_counter() - started}


def _skill_batch(client: Any, worker: str, resources: dict[str, float] | None, skill: dict[str, Any], sets: list[dict[str, Any]]) -> dict[str, Any]:
    """The probe, then every parameter set at once, all pinned to ``worker``; a line per item on stderr."""
    from distributed import as_completed

    probe = client.submit(probe_sandbox, workers=[worker], resources=resources, pure=False).result()
    print(f"  {worker}: inside the sandbox torch sees {probe.get('device', probe.get('error'))}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    futures = [client.submit(run_skill_job_timed, skill, params, workers=[worker], resources=resources, pure=False) for params in sets]
    results = []
    for future in as_completed(futures):
        results.append(future.result())
        print(f"  {worker}: {len(results)}/{len(futures)} ({results[-1]['wall_s']:.1f} s)", file=sys.stderr, flush=True)
    results.sort(key=lambda r: json.dumps(r["params"], sort_keys=True))
    wall = time.perf_counter() - started
    return {"probe": probe, "wall_s": wall, "structures": len(results), "structures_per_s": len(results) / wall if wall else None,
            "failed": sum(r["error"] is not None for r in results), "results": results}  # fmt: skip


def run_skill_check(skill: dict[str, Any], structures: int = 8) -> dict[str, Any]:
    """Run one stored skill over ``structures`` starting lattice constants (5.55 to 5.75 Å) on a GPU worker and a CPU worker of
    one Dask cluster, through the skill job's own code; the report as a dict."""
    gpu_name = _device_name()
    has_gpu = not gpu_name.startswith(("none", "unknown"))
    sets = [{"a": round(5.55 + 0.2 * i / max(structures - 1, 1), 4)} for i in range(structures)]
    wanted = skill.get("resources", {})
    report: dict[str, Any] = {"gpu": gpu_name, "skill": f"{skill.get('name')}-v{skill.get('version')}", "structures": structures,
                              "skill_prefers_gpu": bool(wanted.get("gpu") or wanted.get("gpu_preferred"))}  # fmt: skip
    report.update(_on_both_workers(lambda client, worker, resources: _skill_batch(client, worker, resources, skill, sets), has_gpu))
    pairs = zip(report["gpu_worker"]["results"], report["cpu_worker"]["results"], strict=True)
    differences = [abs(g["answer"] - c["answer"]) for g, c in pairs if isinstance(g["answer"], float) and isinstance(c["answer"], float)]
    report["max_answer_difference"] = max(differences) if differences else None
    return report


def _on_both_workers(batch: Callable[[Any, str, dict[str, float] | None], dict[str, Any]], has_gpu: bool) -> dict[str, Any]:
    """``batch(client, worker, resources)`` on a worker that advertises the GPU (where there is one), then on a CPU worker of
    the same cluster; both reports and their speed-up."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=0, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        cpu = client.sync(_start_worker, cluster.scheduler_address, {}, {"CUDA_VISIBLE_DEVICES": ""}, "cpu-worker")
        gpu = client.sync(_start_worker, cluster.scheduler_address, {"GPU": 1} if has_gpu else {}, {}, "gpu-worker")
        client.wait_for_workers(2)
        found = {"gpu_worker": batch(client, gpu.worker_address, {"GPU": 1} if has_gpu else None), "cpu_worker": batch(client, cpu.worker_address, None)}
        for nanny in (gpu, cpu):
            client.sync(nanny.close)
    fast, slow = found["gpu_worker"]["structures_per_s"], found["cpu_worker"]["structures_per_s"]
    return {**found, "speedup": fast / slow if fast and slow else None}


async def _start_worker(address: str, resources: dict[str, float], env: dict[str, str], name: str) -> Any:
    """A worker in a process of its own (under a nanny), with ``env`` set there (an empty ``CUDA_VISIBLE_DEVICES``: no GPU)."""
    from distributed import Nanny

    return await Nanny(address, nthreads=1, resources=resources or None, name=name, env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("--structures", type=int, default=16, help="structures per batch (default 16)")
    parser.add_argument("--supercell", type=int, default=2, help="N: each structure is N×N×N conventional cells, 8·N³ atoms (default 2)")
    parser.add_argument("--steps", type=int, default=200, help="FIRE steps at most per relaxation (default 200)")
    parser.add_argument("--skill", help="a stored skill's JSON (evoskill skills export ID -o FILE): run it through the skill job and sandbox")
    parser.add_argument("--out", help="also write the report as JSON here")
    args = parser.parse_args(argv)
    logging.getLogger("distributed").setLevel(logging.WARNING)  # workers joining and leaving are not the report
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")  # nor in the workers' processes
    if args.structures < 2 or args.supercell < 1:
        parser.error("--structures must be at least 2 and --supercell at least 1")
    from benchmarks import gpu_check  # run as __main__, its functions would travel by value, each with a new model cache

    if args.skill:
        with open(args.skill) as handle:
            report = gpu_check.run_skill_check(json.load(handle), args.structures)
        for side in ("gpu_worker", "cpu_worker"):
            r = report[side]
            print(f"{side}: inside the sandbox {r['probe'].get('device', r['probe'].get('error'))}; {r['structures']} skill runs "
                  f"({r['failed']} failed) in {r['wall_s']:.2f} s = {r['structures_per_s']:.3f} structures/s")  # fmt: skip
        print(f"GPU: {report['gpu']}; skill {report['skill']} (prefers a GPU: {report['skill_prefers_gpu']}); speed-up "
              f"{report['speedup'] or 0:.2f}x; largest answer difference {report['max_answer_difference']}")  # fmt: skip
    else:
        report = gpu_check.run_check(args.structures, args.supercell, args.steps)
        for side in ("gpu_worker", "cpu_worker"):
            r = report[side]
            print(f"{side}: device {r['device']}, first structure {r['first_wall_s']:.2f} s (model load), "
                  f"{r['structures']} more in {r['wall_s']:.2f} s = {r['structures_per_s']:.2f} structures/s")  # fmt: skip
        print(f"GPU: {report['gpu']}; {report['atoms']} atoms per structure; speed-up {report['speedup']:.2f}x; "
              f"largest energy difference {report['max_energy_difference_ev_per_atom']:.2e} eV/atom")  # fmt: skip
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
