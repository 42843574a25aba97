"""One server process under ``--reload``: import TARGET and serve it on the socket the supervisor bound.

Started as ``python -P -m mcpkit._cli._child ORDER`` (ORDER: JSON with the target, its ``--app-dir``, host, socket
descriptor, the read end of a pipe only the supervisor writes to, and the ``Server.run`` options), with the same
one-line errors and exit codes as ``mcpkit run``. The pipe ends when the supervisor does, however it ends (SIGKILL
included): the child then stops as the supervisor would have stopped it, rather than live on as an orphan holding
the port.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time

from ._main import handled
from ._reload import GRACE_SECONDS, STOP_SECONDS
from ._target import load_server

__all__ = ["serve_child"]


def serve_child(order: str) -> int:
    """Serve what ORDER names until SIGTERM or SIGINT."""
    given = json.loads(order)
    threading.Thread(target=_end_with_supervisor, args=(given["supervisor"],), daemon=True).start()

    def serve() -> int:
        load_server(given["target"], given["app_dir"]).run(
            "http", host=given["host"], fd=given["fd"], **given["options"]
        )
        return 0

    return handled(serve)


def _end_with_supervisor(pipe: int) -> None:
    """Read the supervisor's pipe to its end, then stop: SIGTERM, SIGINT after the grace, and exit at last."""
    while os.read(pipe, 1):
        pass
    for sig, wait in ((signal.SIGTERM, GRACE_SECONDS), (signal.SIGINT, STOP_SECONDS)):
        os.kill(os.getpid(), sig)
        time.sleep(wait)
    os._exit(1)


if __name__ == "__main__":
    sys.exit(serve_child(sys.argv[1]))
