"""``mcpkit inspect TARGET``: what a client is shown (tools, resources, templates, prompts) as JSON, schemas checked."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio

from ..server import LISTED_PROTOCOLS, Server, listing
from ..tools import Finding, lint_tool
from ._target import add_target, load_server

__all__ = ["EXIT_LINT_ERRORS", "add_inspect", "inspected"]

#: Exit code when a tool's schema has an error a strict client refuses (or, with --strict, any finding).
EXIT_LINT_ERRORS = 3

_EXAMPLES = """\
The JSON holds what a 2026-07-28 client is shown: serverInfo, capabilities, instructions, tools, resources,
resourceTemplates and prompts (every page), then "protocolVersions", the eras shown the same, and "lint", the
schema findings. An era shown something else gets its own object under its version ("2025-11-25": {...}).
Tools declared task="required" are listed as to a client that declares the tasks extension, and named in
"taskOnly" (other clients are not shown them). Everything is listed as to a host that renders MCP Apps views:
each tool's _meta.ui (its view and visibility), the ui:// resources, and "views", each view with the tools shown
in it; "viewOnly" names the tools only views call (a host without views is not shown them, nor the views).
Nothing is served and no plugin starts: no store is opened.

The lint is the MCP Inspector's --strict one: a bare true/false where a schema object belongs is an error;
`type` as a list, a $ref outside the document and a schema that accepts anything are warnings. It walks schemas
as the Server checks them when it is built: more than 64 levels deep is an error, and a $ref to a URI that a $id
of the document names is inside it.

exit codes: 0 listed (warnings on stderr), 2 TARGET cannot be loaded, 3 a schema error (with --strict: any finding)

examples:
  mcpkit inspect app.py                          everything, both eras
  mcpkit inspect app.py | jq '.tools[].name'     the tool names
  mcpkit inspect app.py --protocol 2025-11-25    what a 2025-11-25 client is shown
  mcpkit inspect app.py --strict > /dev/null     in CI: fail on any schema finding
"""


def add_inspect(commands: Any) -> None:
    inspect = commands.add_parser(
        "inspect",
        help="print what clients are shown (tools, resources, prompts) as JSON, with the schema lint",
        description="Print TARGET's tools, resources, resource templates and prompts exactly as a client lists "
        "them, as JSON on stdout; schema findings also go to stderr, one line each.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_target(inspect)
    inspect.add_argument(
        "--protocol", choices=LISTED_PROTOCOLS, help="only what a client of this protocol era is shown (default: both)"
    )
    inspect.add_argument("--strict", action="store_true", help="exit with 3 on warnings too, not only on errors")
    inspect.set_defaults(handler=_inspect)


def _inspect(args: argparse.Namespace) -> int:
    server = load_server(args.target, args.app_dir)
    eras = [args.protocol] if args.protocol else list(LISTED_PROTOCOLS)
    shown = {era: _shown(server, era) for era in eras}
    document, findings = inspected(shown)
    print(json.dumps(document, indent=2, ensure_ascii=False))
    for tool, finding in findings:
        print(f"mcpkit inspect: {finding.severity}: tool {tool!r} {finding.path} {finding.advice}", file=sys.stderr)
    failing = [finding for _, finding in findings if args.strict or finding.severity == "error"]
    return EXIT_LINT_ERRORS if failing else 0


def _shown(server: Server, era: str) -> dict[str, Any]:
    """What ``era`` lists to a client that declares tasks and renders views, ``taskOnly`` and ``viewOnly`` naming the
    tools only such a client sees, and ``views`` each view with the tools shown in it."""
    declaring = anyio.run(lambda: listing(server, era, tasks=True, ui=True))
    plain = _names(anyio.run(listing, server, era))
    with_views = _names(anyio.run(lambda: listing(server, era, ui=True)))
    task_only = [tool["name"] for tool in declaring["tools"] if tool["name"] not in with_views]
    view_only = [tool["name"] for tool in declaring["tools"] if tool["name"] in with_views - plain]
    views = _views(declaring)
    return (
        declaring
        | ({"taskOnly": task_only} if task_only else {})
        | ({"viewOnly": view_only} if view_only else {})
        | ({"views": views} if views else {})
    )


def _names(shown: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in shown["tools"]}


def _views(shown: dict[str, Any]) -> list[dict[str, Any]]:
    """Each ``ui://`` resource listed: its URI, name and sandbox (``_meta.ui``), and the tools naming it, with who
    may call them (``visibility``)."""
    views = []
    for resource in shown.get("resources", []):
        if not resource["uri"].startswith("ui://"):
            continue
        tools = {}
        for tool in shown["tools"]:
            ui = tool.get("_meta", {}).get("ui", {})
            if ui.get("resourceUri") == resource["uri"]:
                tools[tool["name"]] = ui.get("visibility", ["model", "app"])
        sandbox = resource.get("_meta", {}).get("ui", {})
        views.append({"uri": resource["uri"], "name": resource["name"], "ui": sandbox, "tools": tools})
    return views


def inspected(shown: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], list[tuple[str, Finding]]]:
    """The document ``inspect`` prints for each era's listing (the first era's at the top), and the lint's findings."""
    first, *others = shown
    document = dict(shown[first])
    document["protocolVersions"] = [era for era in shown if shown[era] == shown[first]]
    for era in others:
        if shown[era] != shown[first]:
            document[era] = shown[era]
    findings: list[tuple[str, Finding]] = []
    for era in shown:
        for tool in shown[era]["tools"]:
            for finding in lint_tool(tool.get("inputSchema"), tool.get("outputSchema")):
                if (tool["name"], finding) not in findings:
                    findings.append((tool["name"], finding))
    document["lint"] = [
        {"tool": tool, "rule": f.rule, "severity": f.severity, "path": f.path, "advice": f.advice}
        for tool, f in findings
    ]
    return document, findings
