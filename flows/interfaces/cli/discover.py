"""``evoskill discover``: a closed-loop discovery campaign from the command line, with a progress bar.

    evoskill discover --system Cu-Ni-Pt --oracle emt --policy diversity,ucb --budget 50 --episodes 5 --seed 0

The ground truth's line (candidates relaxed and how long it took, or "reused") comes before the tables.
``--baseline made`` (default) compares with MADE's random generator, unfiltered; ``--baseline filtered``
with the filtered random preset. The report's "Conventions" section says which, and how AF and EF
treat curves that never get there.

``--json`` prints the ``CampaignSummary`` (metrics per policy, report folder) on stdout. Exit code:
0 when the campaign ran, 1 when it could not, 2 for bad input (unknown elements for the oracle,
impossible cell bounds, unknown policy).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser", "run_discover"]


def add_parser(sub: Any) -> None:
    from benchmarks.discovery.presets import BASELINES, PRESETS

    discover = sub.add_parser(
        "discover",
        help="run a closed-loop materials discovery campaign",
        description="Policies propose structures in a chemical system, an oracle relaxes them, the convex hull is rebuilt; "
        "each policy is compared with a random baseline over several episodes (AF, EF, AUDC, mSUN, diversity). "
        "First the system's ground truth is computed once with the oracle (derivative supercells and prototypes, all relaxed) "
        "and stored for later campaigns; H0 holds a share of its stable phases (--known-fraction), and each policy's recall, "
        "precision on the held-out rest, hit rate against the ground-truth hull and AF(1) on the held-out phases are reported, "
        "with a section that says, from the numbers, why the factors read as they do (the baseline's discovery share, the base rate of ε). "
        "Episodes are stored as they finish: the same command again resumes the campaign.",
        epilog="policies: " + ", ".join([*PRESETS, "orchestrator"]) + ", or planner:generator:selector\n"
        "  planners random|diversity|ucb|llm, generators random|made-random|prototype, selectors random|surrogate|llm\n"
        "oracles: emt (Al Cu Ag Au Ni Pd Pt), lj (any elements), chgnet (pip install 'evoskill[mlip]')\n"
        "systems: Cu-Ni-Pt, or made:ternary|quaternary|quinary:0-9 (MADE's lists)\n"
        "baselines (--baseline):\n" + "".join(f"  {name} (policy {b.policy}): {b.summary}\n" for name, b in BASELINES.items())
        + "AF(1): per paired episode (same seed, same H0), mean ± s.e.m. (episodes where defined/episodes); an episode shows\n"
        "  B/t_policy(1), a lower bound (≥), when the baseline finds nothing in B queries; EF(B) is capped at 100 (MADE's cap)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    discover.add_argument("--system", required=True, help="elements joined by '-', e.g. Cu-Ni-Pt")
    discover.add_argument("--oracle", default="emt", help="emt, lj or chgnet (default: emt)")
    discover.add_argument("--policy", default="diversity", help="comma-separated policies (default: diversity)")
    discover.add_argument("--budget", type=int, default=50, help="oracle queries per episode (default: 50)")
    discover.add_argument("--episodes", type=int, default=5, help="episodes per policy (default: 5)")
    discover.add_argument("--seed", type=int, default=0, help="episode i uses seed+i (default: 0)")
    discover.add_argument("--epsilon", type=float, default=0.1, help="stability threshold, eV/atom above hull (default: 0.1, MADE's; the report shows the share of all candidates it admits)")
    discover.add_argument("--max-atoms", type=int, default=8, help="most atoms per proposed cell (default: 8)")
    discover.add_argument("--batch-size", type=int, default=1, help="proposals per step, relaxed in parallel (local processes, or the Dask cluster when episodes run there; default: 1)")
    discover.add_argument("--known-fraction", type=float, default=0.5,
                          help="share of the ground truth's stable phases given in H0, chosen per episode from its seed; "
                          "the rest are to be discovered (default: 0.5)")
    discover.add_argument("--truth-atoms", type=int, default=4,
                          help="most atoms in the ground truth's fcc/bcc/hcp derivative supercells, at most --max-atoms; "
                          "0 runs without a ground truth (H0: the elements only) (default: 4)")
    discover.add_argument("--out", metavar="DIR", help="report folder (default: <workspace>/discovery/<campaign id>)")
    discover.add_argument("--fresh", action="store_true", help="rerun episodes already stored for this campaign")
    discover.add_argument(
        "--baseline", choices=list(BASELINES), default="made",
        help="what AF and EF compare with: made = MADE's random generator, no filters; filtered = the filtered random preset (default: made)",
    )  # fmt: skip
    discover.add_argument("--json", action="store_true", help="print one JSON summary on stdout")


def run_discover(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from benchmarks.discovery.oracles import (
        OracleError,
        UnsupportedElements,
        make_oracle,
    )
    from benchmarks.discovery.policy_factory import BASELINES, policy_stages
    from benchmarks.discovery.system import ChemicalSystem

    policies = [p.strip() for p in args.policy.split(",") if p.strip()]
    try:
        if min(args.budget, args.episodes, args.batch_size) < 1:
            raise ValueError("--budget, --episodes and --batch-size must be at least 1")
        if not 0.0 <= args.known_fraction <= 1.0 or not 0 <= args.truth_atoms <= 8:
            raise ValueError("--known-fraction must be within 0-1 and --truth-atoms within 0-8")
        system = ChemicalSystem.parse(args.system, max_atoms=args.max_atoms)
        make_oracle(args.oracle).check(system.elements)
        for policy in policies:
            policy_stages(policy)  # names checked here; an LLM client is made per episode that needs one
    except (ValidationError, ValueError, OracleError, UnsupportedElements) as exc:
        print(f"evoskill discover: {_first_line(exc)}", file=sys.stderr)
        return 2
    from deployments.prefect_server import prefect_runtime
    from deployments.progress import add_listener, remove_listener
    from deployments.settings import get_settings
    from flows.discover import discover
    from flows.interfaces.cli.bench import ProgressBar

    settings = get_settings()
    bar = ProgressBar("discover", total=(len(set(policies) | {BASELINES[args.baseline].policy})) * args.episodes * args.budget)
    add_listener(bar)
    try:
        with prefect_runtime(settings) as where, bar.progress:
            bar.progress.console.print(f"Prefect API: {where}", markup=False)
            summary = discover(
                args.system, oracle=args.oracle, policies=policies, budget=args.budget, episodes=args.episodes, seed=args.seed,
                epsilon=args.epsilon, max_atoms=args.max_atoms, batch_size=args.batch_size, known_fraction=args.known_fraction,
                truth_atoms=args.truth_atoms, out=args.out, fresh=args.fresh, baseline=args.baseline,
            )  # fmt: skip
    except KeyboardInterrupt:
        print("\nevoskill discover: interrupted; finished episodes are stored — run the same command again to resume", file=sys.stderr)
        return 130
    finally:
        remove_listener(bar)
    if args.json:
        print(summary.model_dump_json())
        return 0
    from benchmarks.discovery.campaign import markdown_table, truth_table
    from flows.discover import truth_line

    if summary.truth is not None:
        print(truth_line(summary.system, summary.oracle, summary.truth))
    print(f"Campaign {summary.campaign_id}: {summary.system}, {summary.oracle}, budget {summary.budget}, {summary.episodes} episodes"
          + (f" ({summary.resumed} episodes from the store)" if summary.resumed else ""))  # fmt: skip
    print(markdown_table(summary.metrics))
    if summary.truth is not None:
        print(f"Against the held-out ground-truth stable phases (H0 holds {args.known_fraction:.0%} of them):")
        print(truth_table(summary.metrics))
    if summary.diagnosis:
        print(f"\n{summary.diagnosis}")
    print(f"\n{summary.conventions}\n")
    print(f"{summary.oracle_evaluations} oracle evaluations ({summary.cache_hits} cache hits) in {summary.wall_s:.0f} s")
    print(f"Report: {summary.report_dir}/metrics.md, acquisition.png, phase_diagram.png" + (", hull.png" if summary.truth else ""))
    return 0


def _first_line(exc: Exception) -> str:
    if hasattr(exc, "errors"):
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error.get("loc", ()))
        return (f"{where}: " if where else "") + str(error.get("msg", exc)).removeprefix("Value error, ")
    return str(exc).splitlines()[0]
