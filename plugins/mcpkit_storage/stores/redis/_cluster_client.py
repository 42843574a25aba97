"""``ClusterClient``: redis-py's asyncio ``RedisCluster``, adjusted for a store that must know what has run."""

from __future__ import annotations

import asyncio
from typing import Any

from redis import exceptions as redis_errors
from redis.asyncio.cluster import ClusterNode, NodesManager, RedisCluster
from redis.asyncio.connection import Connection, SSLConnection

__all__ = ["ClusterClient", "reconnecting"]


class ClusterClient(RedisCluster):
    """``RedisCluster(**options)`` with the adjustments above."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.nodes_manager.__class__ = _NodesManager  # the same object, its slot lookups made total
        connection = reconnecting(ssl=bool(options.get("ssl")))
        self.connection_kwargs["connection_class"] = connection  # the nodes redis-py makes from the layout
        for node in self.nodes_manager.startup_nodes.values():  # and those made already, not yet connected
            node.connection_class = connection

    async def initialize(
        self,
        additional_startup_nodes_info: list[tuple[str, int]] | None = None,
        last_failed_node_name: str | None = None,
    ) -> RedisCluster:
        if self._initialize:
            if not self._lock:
                self._lock = asyncio.Lock()
            async with self._lock:
                if self._initialize:
                    await self.nodes_manager.initialize(
                        additional_startup_nodes_info=additional_startup_nodes_info,
                        last_failed_node_name=last_failed_node_name,
                    )
                    await self.commands_parser.initialize(self.nodes_manager.default_node)
                    self._initialize = False
        return self

    async def aclose(self) -> None:
        self._initialize = True

    async def shut(self) -> None:
        """Close every connection (redis-py's own ``aclose``, which closes only a client it thinks is set up)."""
        self._initialize = False
        await super().aclose()


class _NodesManager(NodesManager):
    __slots__ = ()

    def get_node_from_slot(self, slot: int, *args: Any, **kwargs: Any) -> ClusterNode:
        try:
            return super().get_node_from_slot(slot, *args, **kwargs)
        except KeyError:
            raise redis_errors.SlotNotCoveredError(f"slot {slot} is served by no primary the client knows") from None

    async def move_slot(self, e: redis_errors.AskError | redis_errors.MovedError) -> None:
        if e.slot_id not in self.slots_cache:
            self.slots_cache[e.slot_id] = []  # redis-py then puts the node the MOVED named in it
        await super().move_slot(e)


class _ReconnectingConnection(Connection):
    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        reader = self._reader
        if reader is not None and reader.at_eof():  # the server closed it while it was idle
            await self.disconnect()
        await super().send_packed_command(command, check_health)


class _ReconnectingSSLConnection(_ReconnectingConnection, SSLConnection):
    pass


def reconnecting(*, ssl: bool) -> type[Connection]:
    """The connection class that reconnects one the server closed while idle before writing a command on it (a dead
    node then fails as "connecting to": not sent), for the cluster's nodes and the store's own clients of them."""
    return _ReconnectingSSLConnection if ssl else _ReconnectingConnection
