"""The ``mcpkit`` command: ``run``, ``dev``, ``inspect``, ``install``, ``--version``, and what installed plugins add."""

from ._main import CLI_GROUP, handled, main, parser
from ._run import HTTP_OPTIONS
from ._target import CommandError, load_server

__all__ = ["CLI_GROUP", "HTTP_OPTIONS", "CommandError", "handled", "load_server", "main", "parser"]
