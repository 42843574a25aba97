"""The connection cap's fair share, over real sockets to a real ``mcpkit run``: one client cannot take every slot.

At ``max_connections`` a new connection closes the longest-waiting connection of the client holding the
most; when none is waiting, the longest-busy connection of the holder with the most busy ones. The clients
here connect from different loopback addresses (127.0.0.2, 127.0.0.3: any 127.x reaches the server on
Linux), or through a "proxy" on 127.0.0.1, which uvicorn trusts by default, naming the client in
``X-Forwarded-For``.
"""

from __future__ import annotations

import json
import os
import select
import socket
import time
from pathlib import Path

from core._served import ANSWER_SECONDS, connect, exchange, mcpkit_run, read_response

CAP = 16  # the smallest max_connections a server accepts
#: Connections kept long enough for the test: no timer of the server's may close one meanwhile.
ARGS = ("--max-connections", str(CAP), "--keep-alive-timeout", "60", "--read-timeout", "60")
#: New connections made once the server is at its cap: each closes one connection.
NEWCOMERS = 5


def served_404(sock: socket.socket, *headers: str) -> bool:
    return exchange(sock, *headers).startswith(b"HTTP/1.1 404 ")


def closed_by_the_server(sockets: list[socket.socket], count: int) -> list[socket.socket]:
    """Wait (on the sockets, a real process has no clock) until ``count`` of ``sockets`` have been closed."""
    closed: list[socket.socket] = []
    deadline = time.monotonic() + ANSWER_SECONDS
    while len(closed) < count and time.monotonic() < deadline:
        readable, _, _ = select.select([s for s in sockets if s not in closed], [], [], 0.2)
        for sock in readable:
            try:
                if sock.recv(1) == b"":
                    closed.append(sock)
            except ConnectionResetError:
                closed.append(sock)
    return closed


def environment_without_trusted_proxies() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name != "FORWARDED_ALLOW_IPS"}


def test_a_client_holding_the_most_connections_gives_up_its_own_when_new_ones_come(tmp_path: Path) -> None:
    with mcpkit_run(tmp_path, *ARGS) as port:
        mine = connect(port, "127.0.0.3")
        assert served_404(mine)  # now kept alive, idle: the longest-waiting connection of all
        flood = [connect(port, "127.0.0.2") for _ in range(CAP - 1)]  # the server is at its cap
        flood += [connect(port, "127.0.0.2") for _ in range(NEWCOMERS)]
        closed = closed_by_the_server([mine, *flood], NEWCOMERS)

        assert mine not in closed
        assert set(closed) == set(flood[:NEWCOMERS])  # the flood's own longest-waiting ones
        assert served_404(mine)
        for sock in [mine, *flood]:
            sock.close()


def test_behind_a_trusted_proxy_connections_count_for_the_client_each_request_names(tmp_path: Path) -> None:
    with mcpkit_run(tmp_path, *ARGS, env=environment_without_trusted_proxies()) as port:  # trusted: loopback
        mine = connect(port)
        assert served_404(mine, "X-Forwarded-For: 203.0.113.9")
        flood = [connect(port) for _ in range(CAP - 1)]
        assert all(served_404(sock, "X-Forwarded-For: 198.51.100.7") for sock in flood)
        newcomers = [connect(port) for _ in range(NEWCOMERS)]  # from the proxy, no request yet
        closed = closed_by_the_server([mine, *flood, *newcomers], NEWCOMERS)

        assert mine not in closed
        assert set(closed) == set(flood[:NEWCOMERS])
        assert served_404(mine, "X-Forwarded-For: 203.0.113.9")
        for sock in [mine, *flood, *newcomers]:
            sock.close()


def test_the_x_forwarded_for_of_a_client_that_is_not_a_trusted_proxy_is_ignored(tmp_path: Path) -> None:
    with mcpkit_run(tmp_path, *ARGS, env=environment_without_trusted_proxies()) as port:
        mine = connect(port, "127.0.0.3")
        assert served_404(mine)
        flood = [connect(port, "127.0.0.2") for _ in range(CAP - 1)]
        assert all(served_404(sock, f"X-Forwarded-For: 203.0.113.{n}") for n, sock in enumerate(flood))  # lies
        flood += [connect(port, "127.0.0.2") for _ in range(NEWCOMERS)]
        closed = closed_by_the_server([mine, *flood], NEWCOMERS)

        assert mine not in closed
        assert set(closed) == set(flood[:NEWCOMERS])
        for sock in [mine, *flood]:
            sock.close()


HEAD_AWAITING_BODY = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n"


def busy(sock: socket.socket) -> socket.socket:
    """Make ``sock`` a request in progress: its head read, its body awaited (the server sent 100 Continue)."""
    sock.sendall(HEAD_AWAITING_BODY)
    assert sock.recv(65536).startswith(b"HTTP/1.1 100 ")
    return sock


def test_a_newcomer_whose_own_client_holds_the_most_connections_gets_429(tmp_path: Path) -> None:
    with mcpkit_run(tmp_path, *ARGS) as port:
        mine = connect(port, "127.0.0.3")
        assert served_404(mine)
        flood = [busy(connect(port, "127.0.0.2")) for _ in range(CAP - 1)]
        refused = connect(port, "127.0.0.2")
        answer = refused.recv(65536)

        assert answer.startswith(b"HTTP/1.1 429 Too Many Requests\r\n"), answer
        assert b"retry-after: 1\r\n" in answer
        assert b"this client already holds 15 connections, more than any other" in answer
        assert served_404(mine)
        for sock in [mine, *flood, refused]:
            sock.close()


def test_a_refused_client_that_sent_its_request_at_once_reads_the_refusal_not_a_reset(tmp_path: Path) -> None:
    with mcpkit_run(tmp_path, *ARGS) as port:
        flood = [busy(connect(port, "127.0.0.2")) for _ in range(CAP)]
        refused = [connect(port, "127.0.0.2") for _ in range(3)]
        for sock in refused:  # as HTTP clients do: the request goes out before anything is read
            sock.sendall(b"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + b"x" * 4096)
        answers = [read_response(sock) for sock in refused]

    assert all(answer.startswith(b"HTTP/1.1 429 Too Many Requests\r\n") for answer in answers), answers
    for sock in [*flood, *refused]:
        sock.close()


def test_when_every_connection_is_busy_the_client_holding_the_most_gives_up_its_longest_busy_one(
    tmp_path: Path,
) -> None:
    with mcpkit_run(tmp_path, *ARGS) as port:
        flood = [busy(connect(port, "127.0.0.2")) for _ in range(CAP)]  # every connection a request in progress
        newcomer = connect(port, "127.0.0.3")
        closed = closed_by_the_server(flood, 1)

        assert closed == [flood[0]]  # the longest-busy one
        assert served_404(newcomer)
        for sock in [*flood, newcomer]:
            sock.close()


def test_newcomers_arriving_one_after_another_at_a_full_server_never_cut_each_other_off(tmp_path: Path) -> None:
    with mcpkit_run(tmp_path, *ARGS) as port:
        flood = [busy(connect(port, "127.0.0.2")) for _ in range(CAP)]
        newcomers = []
        for number in range(8):  # each connects, and has not sent its request yet when the next one comes
            newcomers.append(connect(port, f"127.0.0.{3 + number}"))
            time.sleep(0.02)
        served = [served_404(sock) for sock in newcomers]
        cut = closed_by_the_server(flood, 8)

    assert served == [True] * 8
    assert set(cut) == set(flood[:8])  # the holder of the most gave up its eight longest-busy connections, nobody else
    for sock in [*flood, *newcomers]:
        sock.close()


def test_when_every_connection_is_busy_and_nobody_holds_more_than_one_a_newcomer_gets_503(tmp_path: Path) -> None:
    with mcpkit_run(tmp_path, *ARGS) as port:
        fair = [busy(connect(port, f"127.0.0.{2 + n}")) for n in range(CAP)]  # one each: a full server, not a hog
        refused = connect(port, f"127.0.0.{2 + CAP}")
        answer = refused.recv(65536)

        assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n"), answer
        assert b"with a request in progress on each" in answer
        assert not closed_by_the_server(fair, 1)
        for sock in [*fair, refused]:
            sock.close()


def blob_request(port: int, size: int) -> bytes:
    """A 2026-07-28 ``tools/call`` of ``blob``: its answer is about twice ``size`` bytes (text and structured)."""
    params = {
        "name": "blob",
        "arguments": {"size": size},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
        f"Mcp-Method: tools/call\r\nMcp-Name: blob\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def test_a_client_that_stops_reading_its_response_is_cut_off_after_the_write_timeout(tmp_path: Path) -> None:
    size = 4_000_000
    with mcpkit_run(tmp_path, "--write-timeout", "1") as port:
        stalled = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # so the server's buffer fills at once
        stalled.bind(("127.0.0.2", 0))
        stalled.connect(("127.0.0.1", port))
        stalled.sendall(blob_request(port, size))
        time.sleep(3)  # reads nothing for three times the write timeout (a real process has no clock to move)
        got = read_all(stalled)
        reader = connect(port, "127.0.0.3")
        reader.sendall(blob_request(port, size))
        whole = read_response(reader)

    assert got.startswith(b"HTTP/1.1 200 ")
    assert len(got) < size  # the answer was cut off: the server gave up on the stalled reader
    assert whole.startswith(b"HTTP/1.1 200 ")
    assert len(whole) > 2 * size  # one that reads gets it all
    for sock in (stalled, reader):
        sock.close()


def read_all(sock: socket.socket) -> bytes:
    """Whatever the server sent before it closed (or reset) the connection."""
    received = b""
    sock.settimeout(ANSWER_SECONDS)
    while True:
        try:
            chunk = sock.recv(1 << 20)
        except (ConnectionResetError, TimeoutError):
            return received
        if not chunk:
            return received
        received += chunk
