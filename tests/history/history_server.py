"""The server the history restart tests run as a real process (``mcpkit run ... --port N``): the six history
tools on ``REMEMBER_STORE`` (SQLite or Redis), under a Redis key prefix of the test's own (``TEST_REDIS_PREFIX``)."""

from __future__ import annotations

import os

from mcpkit import Server, StaticKeys, app
from mcpkit_history import HistoryPlugin

KEYS = {"nour": "nour-key-0123456789abcdef", "sam": "sam-key-0123456789abcdef"}

history = HistoryPlugin.init(tools=True, redis_prefix=os.environ.get("TEST_REDIS_PREFIX", "mcpkit:remember:"))


@app(id="chat", plugins=[history])
class ChatApp: ...


server = Server([ChatApp], auth=StaticKeys(KEYS))
