"""Fixtures for the help-desk tests: the server under test, and a way to serve a second one."""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import pytest

from mcpkit import Server
from mcpkit.testing import CallAs, running
from mcpkit_helpdesk import DEMO_KEYS, create_server

Serve = Callable[[Server], AbstractAsyncContextManager[CallAs]]


@pytest.fixture
def mcpkit_server() -> Server:
    """The help desk as ``python -m mcpkit_helpdesk`` serves it (memory store), with the demo keys."""
    return create_server(keys=DEMO_KEYS)


@pytest.fixture
def serve(mcp_protocol: str) -> Serve:
    """``async with serve(server) as call_as:`` runs another server (its own store) beside the fixture's."""
    return functools.partial(running, protocol=mcp_protocol)
