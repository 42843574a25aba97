"""Write the figures of the last reliability run into docs/reliability.md.

    pytest tests/reliability            # writes build/reliability.json
    python tests/reliability/page.py    # fills the page's generated part from it

Only the part between the two ``<!-- figures -->`` markers is replaced; the
prose around it is edited by hand.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reliability.md"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"
HEADERS = (
    ("callers", "Callers"),
    ("calls", "Calls"),
    ("faults", "Faults injected"),
    ("inputs", "Inputs tried"),
    ("lost", "Values lost"),
    ("leaks", "Leaks"),
    ("internal_errors", "Internal errors"),
)


def recording_tests() -> dict[str, list[str]]:
    """Test file (as pytest names it) -> the test functions in it that take the ``figures`` fixture."""
    found: dict[str, list[str]] = {}
    for path in sorted(Path(__file__).resolve().parent.glob("test_*.py")):
        for node in ast.parse(path.read_text()).body:
            is_test = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_")
            if is_test and any(arg.arg == "figures" for arg in node.args.args):
                found.setdefault(path.relative_to(ROOT).as_posix(), []).append(node.name)
    return found


def missing_rows(document: dict[str, Any]) -> list[str]:
    """``file::test`` of each recording test that has no row in ``document`` (a partial run, say)."""
    present = {(row["test"].split("::", 1)[0], _name(row["test"]).split("[", 1)[0]) for row in document["tests"]}
    return [
        f"{path}::{name}" for path, names in recording_tests().items() for name in names if (path, name) not in present
    ]


def _cell(value: Any) -> str:
    return "" if value is None else f"{value:,}" if isinstance(value, int) else str(value)


def _name(nodeid: str) -> str:
    return nodeid.split("::", 1)[1] if "::" in nodeid else nodeid


def _figures_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = []
    by_file: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_file.setdefault(row["test"].split("::", 1)[0], []).append(row)
    for path, group in by_file.items():
        lines += [f"### `{path}`", ""]
        lines.append("| Test | Result | " + " | ".join(title for _, title in HEADERS) + " | Seconds | What it did |")
        lines.append("|---" * (len(HEADERS) + 4) + "|")
        for row in group:
            numbers = row["figures"]
            cells = [f"`{_name(row['test'])}`", row["outcome"]]
            cells += [_cell(numbers.get(key)) for key, _ in HEADERS]
            cells += [f"{row['seconds']:.1f}", row["detail"].replace("|", "\\|")]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def _conformance(rows: list[dict[str, Any]]) -> list[str]:
    results = [row["extra"]["conformance"] for row in rows if "conformance" in row["extra"]]
    if not results:
        return []
    lines = ["### Conformance suite", ""]
    lines.append("| Spec version | Scenarios | Passed | Expected failures | Unexpected failures |")
    lines.append("|---|---|---|---|---|")
    for result in results:
        expected = result.get("expected_failures", {})
        lines.append(
            f"| {result['spec_version']} | {result['total']} | {result['passed']} | {len(expected)} "
            f"| {len(result.get('unexpected', []))} |"
        )
    lines.append("")
    for result in results:
        expected = result.get("expected_failures", {})
        if expected:
            lines += [f"Expected failures for {result['spec_version']}:", ""]
            lines += [f"- `{scenario}`: {reason}" for scenario, reason in sorted(expected.items())]
            lines.append("")
    return lines


def render(document: dict[str, Any]) -> str:
    """The generated part of the page for one run's JSON document."""
    rows = document["tests"]
    lines = [
        START,
        "",
        f"Last run: {document['when']}, commit `{document['commit']}`, Python {document['python']}, "
        f"{document['machine']}{', CI=true' if document['ci'] else ''}.",
        "",
    ]
    lines += _conformance(rows)
    lines += _figures_table(rows)
    lines.append(END)
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    source = Path(argv[0]) if argv else ROOT / "build" / "reliability.json"
    document = json.loads(source.read_text())
    missing = missing_rows(document)
    if missing:
        print(
            f"{source} lacks {len(missing)} test(s) that record figures, e.g. {missing[:3]}: it comes from a partial"
            " run. Run `pytest tests/reliability` (the whole folder) first.",
            file=sys.stderr,
        )
        return 2
    page = PAGE.read_text()
    if START not in page or END not in page:
        print(f"{PAGE} has no {START} ... {END} markers; add them where the figures belong", file=sys.stderr)
        return 2
    head, rest = page.split(START, 1)
    _, tail = rest.split(END, 1)
    PAGE.write_text(head + render(document) + tail)
    print(f"wrote {PAGE} from {source} ({len(document['tests'])} tests)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
