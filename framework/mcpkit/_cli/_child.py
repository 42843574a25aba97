"""One server process under ``--reload``: import TARGET and serve it on the socket the supervisor bound.

Started as ``python -m mcpkit._cli._child ORDER`` (ORDER: JSON with the target, host, socket descriptor and the
``Server.run`` options), with the same one-line errors and exit codes as ``mcpkit run``.
"""

from __future__ import annotations

import json
import sys

from ._main import handled
from ._target import load_server

__all__ = ["serve_child"]


def serve_child(order: str) -> int:
    """Serve what ORDER names until SIGTERM or SIGINT."""
    given = json.loads(order)

    def serve() -> int:
        load_server(given["target"]).run("http", host=given["host"], fd=given["fd"], **given["options"])
        return 0

    return handled(serve)


if __name__ == "__main__":
    sys.exit(serve_child(sys.argv[1]))
