"""A small OAuth token introspection endpoint (RFC 7662) on 127.0.0.1 for the IntrospectionAuth tests."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

CLIENT = ("mcp-server", "mcp-server-secret")


class IntrospectionServer:
    """Answers for the tokens in ``answers`` (any other token: inactive), to the client ``CLIENT`` only."""

    def __init__(self) -> None:
        self.answers: dict[str, dict[str, Any]] = {}
        self.requests: list[dict[str, list[str]]] = []
        self.status = 200
        self.delay = 0.0  # seconds before each answer
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/oauth/introspect"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                form = parse_qs(self.rfile.read(length).decode())
                expected = "Basic " + base64.b64encode(":".join(CLIENT).encode()).decode()
                with server._lock:
                    server.requests.append(form)
                    status = server.status
                    answer = server.answers.get(form.get("token", [""])[0], {"active": False})
                if self.headers.get("authorization") != expected:
                    status, answer = 401, {"error": "invalid_client"}
                time.sleep(server.delay)
                body = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
