"""``evoskill skills|learn|memory``: the skill library and memories from the command line."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from skills import STARTER_LIBRARY

__all__ = ["add_parsers", "run_skills", "run_learn", "run_memory", "EMPTY_STORE_HINT"]

EMPTY_STORE_HINT = (
    "The skill store ({store}) holds no skill yet. Learn the starter library with\n"
    "  evoskill learn {library}/*.json\n"
    "(a new workspace learns it by itself before its first question), or solve questions: every accepted answer becomes a skill."
)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    skills = sub.add_parser("skills", help="list, show, run, export, import or delete skills", description="The skill library.")
    act = skills.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = act.add_parser("list", help="every skill (latest versions)")
    listing.add_argument("--json", action="store_true", help="print JSON")
    act.add_parser("show", help="one skill: description, parameters, code").add_argument("id", help="skill id (name-vN) or name")
    run = act.add_parser("run", help="run a skill with parameters (no LLM), through jobflow, here or on Dask", description=(
        "Run a skill once (--param), over many parameter sets (--batch FILE), or rerun the unfinished items of a batch (--retry ID)."))
    run.add_argument("id", nargs="?", help="skill id (name-vN) or name")
    run.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE", help="a parameter; repeat for more")
    run.add_argument("--batch", type=Path, metavar="FILE", help="parameter sets: a JSON list of objects or JSON Lines")
    run.add_argument("--retry", metavar="BATCH_ID", help="rerun only the failed and unfinished items of a batch")
    run.add_argument("--executor", choices=["local", "dask"], help="in this process, or on the Dask cluster (default: EVOSKILL_SKILL_EXECUTOR)")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    batch = act.add_parser("batch", help="a batch's items: status, answer or error")
    batch.add_argument("batch_id")
    batch.add_argument("--json", action="store_true", help="print JSON")
    export = act.add_parser("export", help="write a skill as JSON, or as a jobflow workflow (--workflow)")
    export.add_argument("id")
    export.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    export.add_argument("--workflow", action="store_true", help="a jobflow Flow that runs with plain jobflow (run_locally), no LLM or store")
    export.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE", help="workflow parameters (with --workflow)")
    export.add_argument("--batch", type=Path, metavar="FILE", help="one workflow job per parameter set (with --workflow)")
    act.add_parser("import", help="import skills from a JSON file (each re-verified first)").add_argument("file", type=Path)
    act.add_parser("delete", help="delete a version (name-vN) or every version (name)").add_argument("id")

    learn = sub.add_parser("learn", help="learn skills from tasks with known-good solutions", description=(
        "Compile each task's solution_code_or_process (benchmark JSON format) into a verified skill."))
    learn.add_argument("tasks", nargs="+", type=Path, help="task JSON files")
    learn.add_argument("--backend", choices=["embedded", "openai", "scripted"], help="LLM for generalising plain scripts")
    learn.add_argument("--json", action="store_true", help="print JSON")

    memory = sub.add_parser("memory", help="search the memories", description="Search planning and execution memories.")
    mem = memory.add_subparsers(dest="action", required=True, metavar="ACTION")
    search = mem.add_parser("search", help="memories similar to a text")
    search.add_argument("text")
    search.add_argument("--kind", choices=["planning", "execution"])
    search.add_argument("-k", type=int, default=5, help="how many (default 5)")
    search.add_argument("--json", action="store_true", help="print JSON")


def parameter_lines(skill) -> list[str]:  # noqa: ANN001 - Skill, imported lazily
    """Each parameter with its kind and unit, default, bounds, and the words of the verified question it is read from (else its
    description)."""
    properties = skill.parameters.properties
    if not properties:
        return ["parameters: none (answers only the question it was verified on)"]
    lines = ["parameters:"]
    signs = {"exclusiveMinimum": ">", "minimum": ">=", "exclusiveMaximum": "<", "maximum": "<="}
    for name, prop in properties.items():
        bounds = [f"{signs[key]} {value}" for key, value in prop.bounds().items()]
        if prop.derives:
            bounds.append("same make-up as the default (its elements are used by position)")
        if prop.kind in ("element", "formula", "smiles"):
            bounds.append(f"a valid {prop.kind}")
        unit = f" in {prop.unit}" if prop.unit else ""
        lines.append(f"  --param {name}=<{prop.kind or prop.type}{unit}>  default {prop.default!r}"
                     f"{'  bounds: ' + '; '.join(bounds) if bounds else ''}")  # fmt: skip
        if prop.source:
            lines.append(f"      read from: {prop.source!r}" + (f"  (cue words: {' '.join(prop.cue)})" if prop.cue else ""))
        elif prop.description:
            lines.append(f"      {prop.description}")
    return lines


def _store():
    from deployments.settings import get_settings
    from skills.store import open_store

    settings = get_settings()
    return open_store(settings), settings


def _shown(skill, settings):  # noqa: ANN001, ANN202 - Skill and Settings, imported lazily
    """The skill as the CLI's user may see it: its teacher's words only when they taught it (``skills/disclosure.py``)."""
    from skills.disclosure import shared_view

    return shared_view(skill, settings.user)


def _report_problems(store) -> None:  # noqa: ANN001
    for problem in store.problems:
        print(f"warning: {problem}", file=sys.stderr)


def run_skills(args: argparse.Namespace) -> int:
    store, settings = _store()
    if args.action == "list":
        skills = [_shown(s, settings) for s in store.latest_skills()]
        _report_problems(store)
        if args.json:
            print(json.dumps([{"id": s.id, "description": s.description, "parameters": s.parameters.names(),
                               "uses": s.stats.uses} for s in skills]))
        else:
            for s in skills:
                params = ", ".join(s.parameters.properties)
                print(f"{s.id:<36} ({params})  {s.description.splitlines()[0][:90] if s.description else ''}")
            print(f"{len(skills)} skills", file=sys.stderr)
        if not skills:
            where = settings.store_root() if settings.store == "monty" else re.sub(r"//[^/@]*@", "//", settings.store)  # no password
            print(EMPTY_STORE_HINT.format(store=where, library=STARTER_LIBRARY), file=sys.stderr)
        return 0
    if args.action == "show":
        s = _shown(store.get_skill(args.id), settings)
        print(f"{s.id}: {s.description}\npackages: {', '.join(s.packages) or '-'}   output: {s.output_type}"
              f"{' ' + s.unit if s.unit else ''}   uses: {s.stats.uses} ({s.stats.successes} ok)")
        print(f"provenance: {s.provenance.source} {s.provenance.task_id or s.provenance.flow_run_id or ''} {s.provenance.created:%Y-%m-%d}")
        print(f"verified with {s.test_case.params} -> {s.test_case.expected!r} (tolerance {s.test_case.tolerance})")
        print(f"made by: {s.method or 'unknown'}" + (f"   verified question: {s.provenance.query}" if s.provenance.query else ""))
        for line in parameter_lines(s):
            print(line)
        if s.hidden_inputs:
            print(f"answers only for its own material: it also uses {', '.join(s.hidden_inputs)}, which the question does not state")
        if s.independent_of:
            print(f"shown not to depend on the {' or '.join(s.independent_of)} the question names")
        print("\n" + s.code)
        return 0
    if args.action == "run":
        return _run(args, store, settings)
    if args.action == "batch":
        return _show_batch(args, store)
    if args.action == "export":
        from skills.params import ParameterError, load_param_sets, parse_assignments
        from skills.transfer import export_skill, export_workflow

        skill = _shown(store.get_skill(args.id), settings)
        if args.workflow:
            text = export_workflow(skill, load_param_sets(args.batch) if args.batch else [parse_assignments(args.param)])
        elif args.param or args.batch:
            raise ParameterError("--param and --batch go with --workflow")
        else:
            text = export_skill(skill)
        if args.output:
            from deployments.workspace import write_for_user

            write_for_user(args.output, text + "\n")  # a file the user asked for: their umask, not the workspace's
            print(f"wrote {args.output}", file=sys.stderr)
        else:
            print(text)
        return 0
    if args.action == "import":
        from skills.transfer import import_skills

        rows = import_skills(args.file, store, settings)
        for name, status in rows:
            print(f"{name}: {status}")
        return 0 if all(not status.startswith("rejected") for _, status in rows) else 1
    n = store.delete_skill(args.id)
    if not n:
        print(f"evoskill skills: no skill {args.id!r} to delete (see: evoskill skills list)", file=sys.stderr)
        return 1
    print(f"deleted {n} skill version(s)")
    return 0


def _run(args: argparse.Namespace, store, settings) -> int:  # noqa: ANN001 - SkillStore, Settings
    """``skills run``: one run, a batch, or the rerun of a batch's unfinished items."""
    from deployments.prefect_server import prefect_runtime
    from skills.domain import checked_params
    from skills.params import ParameterError, load_param_sets, parse_assignments

    if bool(args.id) == bool(args.retry):
        raise ParameterError("give a skill to run, or --retry BATCH_ID")
    if args.retry or args.batch:
        from flows.run_skill_batch import run_skill_batch

        if args.param:
            raise ParameterError("--param does not go with --batch or --retry; put the parameters in the batch file")
        param_sets = load_param_sets(args.batch) if args.batch else None
        with prefect_runtime(settings):
            summary = run_skill_batch(args.id or "", param_sets, args.retry or "", args.executor)
        if args.json:
            print(summary.model_dump_json())
        else:
            print(f"{summary.batch_id}: {summary.done}/{summary.size} done, {summary.failed} failed ({summary.ran} run now, {summary.wall_s} s)")
            for failure in summary.failures:
                print(f"  item {failure.index}: {failure.error[:200]}")
            if summary.failed:
                print(f"rerun the failed ones: evoskill skills run --retry {summary.batch_id}")
            print(f"answers: evoskill skills batch {summary.batch_id}")
        return 0 if not summary.failed else 1
    from flows.run_skill import run_skill

    params = parse_assignments(args.param)
    checked_params(store.get_skill(args.id), params)  # bad input, or input outside the skill's domain, is reported before Prefect starts
    with prefect_runtime(settings):
        output = run_skill(args.id, params, args.executor)
    print(output.model_dump_json() if args.json else (json.dumps(output.answer) if output.success else f"failed: {output.error}"))
    return 0 if output.success else 1


def _show_batch(args: argparse.Namespace, store) -> int:  # noqa: ANN001 - SkillStore
    from flows.run_skill_batch import batch_answers
    from skills.documents import SkillBatch

    batch = store.get(SkillBatch, args.batch_id)
    if batch is None:
        raise KeyError(f"no batch {args.batch_id!r}")
    rows = batch_answers(store, batch.id)
    if args.json:
        print(json.dumps({"batch": batch.model_dump(mode="json"), "items": [
            {"index": i.index, "params": i.params, "status": i.status, "answer": answer, "error": i.error, "worker": i.worker, "attempts": i.attempts}
            for i, answer in rows]}))  # fmt: skip
        return 0
    for item, answer in rows:
        shown = json.dumps(answer) if item.status == "done" else (item.error or item.status)
        print(f"{item.index:>6}  {item.status:<8} {json.dumps(item.params)[:60]:<60}  {shown[:120]}")
    print(f"{batch.id} ({batch.skill_id}): {batch.done}/{batch.size} done, {batch.failed} failed", file=sys.stderr)
    return 0


def run_learn(args: argparse.Namespace) -> int:
    from deployments.prefect_server import prefect_runtime
    from deployments.settings import get_settings
    from flows.learn import learn

    with prefect_runtime(get_settings(llm_backend=args.backend)):
        outcomes = learn([str(p) for p in args.tasks], backend=args.backend)
    if args.json:
        print(json.dumps([o.model_dump() for o in outcomes]))
    else:
        for o in outcomes:
            detail = f"{o.skill_id} ({o.method})" if o.skill_id else o.reason
            print(f"{o.task}: {o.status} — {detail}")
    return 0 if all(o.status != "rejected" for o in outcomes) else 1


def run_memory(args: argparse.Namespace) -> int:
    from tasks.tools.memory import search_memory

    store, settings = _store()
    hits = search_memory(store, args.text, kind=args.kind, k=args.k, threshold=settings.memory_threshold, user=settings.user)
    _report_problems(store)
    if args.json:
        print(json.dumps([h.model_dump(mode="json") for h in hits]))
    else:
        for h in hits:
            print(f"[{h.similarity:.2f}] {h.memory.kind}: {h.memory.subtask[:100]}\n    {h.memory.solution[:200]!r}")
        if not hits:
            print(f"no memory above similarity {settings.memory_threshold}")
    return 0
