"""The benchmark page's generated regions: what ``python -m bench`` rewrites, between markers, leaving the rest of
``docs/benchmarks.md`` (the sections written by hand from the benches they name) as it is."""

from __future__ import annotations

import re

__all__ = ["Region", "merged", "wrapped"]

#: A region of the page: its name and its lines, as the renderer makes them.
Region = tuple[str, list[str]]

_START, _END = "<!-- generated: {} -->", "<!-- /generated: {} -->"
_MARKED = re.compile(r"<!-- generated: ([\w-]+) -->\n.*?<!-- /generated: \1 -->(?:\n|\Z)", re.DOTALL)


def wrapped(region: Region) -> str:
    """A region's text between its markers."""
    name, lines = region
    return "\n".join([_START.format(name), *lines, _END.format(name)]) + "\n"


def merged(page: str | None, regions: list[Region]) -> str:
    """``page`` with each of its generated regions replaced by the one of that name in ``regions`` (an empty region
    stays, as its two markers, to be filled by a later run); a region the page lacks goes before the next region in
    ``regions`` that the page has, else at its end. Text outside the markers is kept as written; a region of the
    page that ``regions`` no longer makes goes with its markers. No page yet: the regions alone."""
    if page is None:
        return "\n".join(wrapped(region) for region in regions)
    made = {name: wrapped((name, lines)) for name, lines in regions}
    text = _MARKED.sub(lambda match: made.get(match[1], ""), page)
    present = {match[1] for match in _MARKED.finditer(text)}
    for index, (name, _) in enumerate(regions):
        if name in present:
            continue
        later = next((other for other, _ in regions[index + 1 :] if other in present), None)
        if later is None:
            text = text.rstrip("\n") + "\n\n" + made[name]
        else:
            at = text.index(_START.format(later))
            text = text[:at] + made[name] + "\n" + text[at:]
        present.add(name)
    return text
