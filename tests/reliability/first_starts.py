"""Many first starts of the SQLite store at once: which secret each process ended with.

``python first_starts.py DIRECTORY BATCHES PROCESSES`` makes ``BATCHES`` fresh directories under DIRECTORY;
in each, ``PROCESSES`` forked processes run what ``RememberPlugin``'s start runs without ``REMEMBER_SECRET``
(the secret file beside ``remember.db``), released at the same moment once all are waiting. Where the kernel
allows it (root), each process is pid 1 of a pid namespace of its own, as servers in containers sharing one
volume are. Prints one JSON object: per batch, each process's pid and its secret or error.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from mcpkit_storage.stores.sqlite._private_files import secret_beside

CLONE_NEWPID = 0x20000000


def main() -> None:
    directory, batches, processes = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    report = []
    for number in range(batches):
        batch = directory / f"batch-{number}"
        batch.mkdir()
        started = time.monotonic()
        results = first_starts(batch / "remember.db", processes)
        report.append({"directory": str(batch), "seconds": time.monotonic() - started, "results": results})
    print(json.dumps({"batches": report}))


def first_starts(database: Path, processes: int) -> list[dict[str, Any]]:
    gate_r, gate_w = os.pipe()  # every process waits on it; closing it releases them all at once
    ready_r, ready_w = os.pipe()
    results_r, results_w = os.pipe()
    children = []
    for _ in range(processes):
        pid = os.fork()
        if pid == 0:
            os.close(gate_w)
            os.close(ready_r)
            os.close(results_r)
            in_container(lambda: instance(database, gate_r, ready_w, results_w))
        children.append(pid)
    for fd in (gate_r, ready_w, results_w):
        os.close(fd)
    waiting = 0
    while waiting < processes:
        got = os.read(ready_r, processes)
        if not got:
            break  # a process died before it got to the gate: its missing line says so
        waiting += len(got)
    os.close(gate_w)
    output = b""
    while chunk := os.read(results_r, 65536):
        output += chunk
    for pid in children:
        os.waitpid(pid, 0)
    os.close(ready_r)
    os.close(results_r)
    return [json.loads(line) for line in output.decode().splitlines()]


def in_container(run: Any) -> None:
    """Run ``run`` as pid 1 of a new pid namespace when the kernel allows it, else as this process; never returns."""
    code = 0
    try:
        if ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWPID) == 0:
            inner = os.fork()  # the first child in the new namespace is its pid 1
            if inner == 0:
                run()
                os._exit(0)
            _, status = os.waitpid(inner, 0)
            code = os.waitstatus_to_exitcode(status)
        else:
            run()
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def instance(database: Path, gate: int, ready: int, results: int) -> None:
    os.write(ready, b".")
    os.read(gate, 1)  # b"" once the driver closes the gate
    line: dict[str, Any] = {"pid": os.getpid()}
    try:
        line["secret"] = secret_beside(database)
    except Exception as exc:
        line["error"] = f"{type(exc).__name__}: {exc}"[:300]
    os.write(results, (json.dumps(line) + "\n").encode())  # one write under PIPE_BUF: lines never interleave


if __name__ == "__main__":
    main()
