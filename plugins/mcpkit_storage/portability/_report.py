"""``ImportReport``: what an import did, counted, and the lines of the values it could not write."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..stores import Quota

__all__ = ["ImportReport"]

#: Lines named in a report, at most (the count says how many more).
_NAMED = 10


@dataclass
class ImportReport:
    """What ``import_memory`` did: values written, left as they were (already there, or newer there), and not written
    because their bucket's quota was full, with those values' change histories (by line number: an import report never
    shows a key or a value)."""

    imported: int = 0
    #: Of ``imported``, the keys' change histories (each beside its value, not a value of its own).
    histories: int = 0
    unchanged: int = 0
    kept: int = 0
    over_quota: list[int] = field(default_factory=list)
    #: How many change histories of values ``over_quota`` names were left out with them (not written, or written
    #: before the refusal and deleted again: not counted in ``imported``).
    histories_left_out: int = 0
    #: The quotas held, by namespace (``""``: remember's own buckets; ``"*"``: one given for every bucket), given or
    #: those the store's servers recorded.
    quotas: dict[str, Quota] = field(default_factory=dict)

    def count(self, outcome: str) -> None:
        """Count one record's outcome: "imported", "unchanged", "kept", or "left out" (a refused value's history)."""
        self.imported += outcome == "imported"
        self.unchanged += outcome == "unchanged"
        self.kept += outcome == "kept"
        self.histories_left_out += outcome == "left out"

    def __str__(self) -> str:
        text = f"imported {self.imported - self.histories} values"
        if self.histories:
            text += f" and {self.histories} change histories"
        text += f", {self.unchanged} already there as in the file"
        if self.kept:
            text += f", {self.kept} kept as the store has them (--on-conflict)"
        if self.over_quota:
            text += f"; {len(self.over_quota)} did not fit their bucket's quota and were not written"
            text += f" (lines {_lines(self.over_quota)})"
        if self.histories_left_out:
            text += f"; {self.histories_left_out} change histories of those values were left out with them"
        if self.quotas:
            held = ", ".join(
                f"{_NAMESPACE_NAMES.get(name, name + '*')} {_limits(quota)}" for name, quota in self.quotas.items()
            )
            text += f"; quotas held per owner and bucket: {held}"
        return text


_NAMESPACE_NAMES = {"*": "every bucket", "": "remember's buckets"}


def _limits(quota: Quota) -> str:
    limits = [
        f"{limit:,} {unit}" for limit, unit in ((quota.values, "values"), (quota.bytes, "bytes")) if limit is not None
    ]
    return " and ".join(limits) or "no limit"


def _lines(lines: list[int]) -> str:
    named = ", ".join(str(line) for line in lines[:_NAMED])
    return named + (f" and {len(lines) - _NAMED} more" if len(lines) > _NAMED else "")
