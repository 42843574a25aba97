"""A small JWKS endpoint on 127.0.0.1 for the JWTAuth tests: it counts requests and can hold them."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

#: How long a held JWKS request waits for the test to release it before answering anyway.
HOLD_TIMEOUT_SECONDS = 1.0


def _jwk(private_key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey, kid: str) -> dict[str, Any]:
    """The public JWK for a private key, with its kid, as an identity provider publishes it."""
    if isinstance(private_key, rsa.RSAPrivateKey):
        entry = RSAAlgorithm.to_jwk(private_key.public_key(), as_dict=True)
        alg = "RS256"
    else:
        entry = ECAlgorithm.to_jwk(private_key.public_key(), as_dict=True)
        alg = "ES256"
    return {**entry, "kid": kid, "alg": alg, "use": "sig"}


class JWKSServer:
    """Serves ``document`` as JSON at ``url`` and counts the requests; ``hold()`` makes it wait."""

    def __init__(self) -> None:
        self.document: dict[str, Any] = {"keys": []}
        self.status = 200
        self.body: bytes | None = None  # raw body to send instead of the document
        self.requests = 0
        self.released_in_time: list[bool] = []
        self._release: threading.Event | None = None
        self._arrived: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/.well-known/jwks.json"

    def publish(self, **keys: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> None:
        """Serve the public halves of ``keys`` (kid=private key) from now on."""
        self.document = {"keys": [_jwk(key, kid) for kid, key in keys.items()]}

    def hold(self) -> None:
        """Make requests wait until :meth:`release` (or HOLD_TIMEOUT_SECONDS) before answering."""
        self._release = threading.Event()
        self._arrived = asyncio.Event()
        self._loop = asyncio.get_running_loop()

    async def arrived(self) -> None:
        """Wait (on the event loop) until a held request has reached the server."""
        assert self._arrived is not None, "call hold() first"
        await self._arrived.wait()

    def release(self) -> None:
        assert self._release is not None
        self._release.set()

    def close(self) -> None:
        if self._release is not None:
            self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self.requests += 1
        if self._release is not None:
            assert self._loop is not None
            assert self._arrived is not None
            self._loop.call_soon_threadsafe(self._arrived.set)
            self.released_in_time.append(self._release.wait(HOLD_TIMEOUT_SECONDS))
        body = self.body if self.body is not None else json.dumps(self.document).encode()
        handler.send_response(self.status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server._answer(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
