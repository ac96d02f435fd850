"""``evoskill tool``: call any agent tool from the command line (what the agents see, a scientist can use).

    evoskill tool --list
    evoskill tool search query="equation of state fit"
    evoskill tool parse_local_package package=pymatgen
    evoskill tool query_knowledge_graph package=pymatgen query="classes with method get_space_group_number"
    evoskill tool quick_introspect target=pymatgen.core.Strucutre

Arguments are ``name=value``; a value that parses as JSON (numbers, lists, true/false) is taken as
such, anything else as a string. ``--json`` prints ``{name, ok, output, error}``. Exit code 0 when
the tool succeeded, 1 when it reported an error, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_parser", "run_tool"]


def add_parser(sub: Any) -> None:
    tool = sub.add_parser(
        "tool",
        help="call one of the agents' tools",
        description="Call one of the agents' tools (search, introspection, package knowledge graph, code extraction, ...).",
        epilog="examples:\n  evoskill tool --list\n  evoskill tool search query='equation of state fit'\n"
        "  evoskill tool query_knowledge_graph package=pymatgen query='signature of SpacegroupAnalyzer'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tool.add_argument("name", nargs="?", help="the tool to call (see --list)")
    tool.add_argument("arguments", nargs="*", metavar="KEY=VALUE", help="the tool's arguments")
    tool.add_argument("--list", action="store_true", help="list the tools with their arguments and what they do")
    tool.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def run_tool(args: argparse.Namespace) -> int:
    from deployments.settings import get_settings
    from tasks.tools.registry import ToolBox

    box = ToolBox(get_settings())
    if args.list or not args.name:
        print(box.describe())
        return 0 if args.list else 2
    arguments: dict[str, Any] = {}
    for item in args.arguments:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            print(f"evoskill tool: {item!r} is not KEY=VALUE", file=sys.stderr)
            return 2
        arguments[key] = _value(value)
    result = box.call(args.name, **arguments)
    if args.json:
        print(result.model_dump_json())
    elif result.ok:
        print(result.output)
    else:
        print(f"evoskill tool {args.name}: {result.error}", file=sys.stderr)
    return 0 if result.ok else 1
