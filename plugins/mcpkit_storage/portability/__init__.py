"""Portability: a store's remembered values out to a versioned JSON Lines file (sealed unless asked otherwise) and
back into any store, streaming both ways (docs/portability.md)."""

from ._export import ExportReport, export_memory
from ._format import FORMAT, FORMAT_VERSION, ExportFileError, schema
from ._heap import frozen_heap
from ._import import CONFLICTS, Conflicts, ImportReport, import_memory
from ._sealing import FileSeal, SealingKey

__all__ = [
    "CONFLICTS",
    "FORMAT",
    "FORMAT_VERSION",
    "Conflicts",
    "ExportFileError",
    "ExportReport",
    "FileSeal",
    "ImportReport",
    "SealingKey",
    "export_memory",
    "frozen_heap",
    "import_memory",
    "schema",
]
