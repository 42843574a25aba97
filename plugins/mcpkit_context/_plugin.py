"""``ContextPlugin``: context blocks for every tool, resource and prompt of its app, as ``self.context``."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcpkit import Clock, ConfigurationError, Context, SystemClock, ToolContext
from mcpkit_storage import BackedPlugin, Backing, StoreConfig, check_scope, store_config

from ._blocks import Block, checked_blocks
from ._context import ContextBlocks, ContextPolicy
from ._features import context_prompts, context_resources, context_tools
from ._tokens import Counter, local_counter

__all__ = ["ContextPlugin"]


class ContextPlugin(BackedPlugin):
    """Named blocks per caller; build it with :meth:`ContextPlugin.init`."""

    def __init__(
        self,
        blocks: Sequence[Block],
        store: StoreConfig | None = None,
        *,
        secret: str | Sequence[str] | None = None,
        scope: str = "user",
        tokenizer: Counter | None = None,
        redis_prefix: str = "mcpkit:remember:",
    ) -> None:
        self.blocks: Mapping[str, Block] = checked_blocks(blocks)
        if scope not in ("user", "session"):
            raise ConfigurationError(f"scope is 'user' or 'session', not {scope!r:.40}.")
        self.scope = check_scope(scope)
        if tokenizer is not None and not callable(tokenizer):
            raise ConfigurationError(f"tokenizer is a function from text to a token count, not {tokenizer!r:.60}.")
        self.count, self.tokenizer_name = (tokenizer, "yours") if tokenizer is not None else local_counter()
        secrets = [secret] if isinstance(secret, str) else (list(secret) if secret is not None else None)
        self._backing = Backing(store, secrets, redis_prefix)
        self._clock: Callable[[], Clock] = SystemClock
        self._policy: ContextPolicy | None = None

    @classmethod
    def init(
        cls,
        blocks: Sequence[Block],
        type: str | None = None,
        *,
        url: str | None = None,
        path: str | os.PathLike[str] | None = None,
        secret: str | Sequence[str] | None = None,
        scope: str = "user",
        tokenizer: Counter | None = None,
        redis_prefix: str = "mcpkit:remember:",
    ) -> ContextPlugin:
        """The blocks, on a store given as for ``RememberPlugin.init`` (default: ``REMEMBER_STORE``)."""
        path_text = None if path is None else os.fspath(path)
        config = None if type is None and url is None and path is None else store_config(type, url, path_text)
        return cls(blocks, config, secret=secret, scope=scope, tokenizer=tokenizer, redis_prefix=redis_prefix)

    def attributes(self) -> Mapping[str, Callable[[Context], object]]:
        return {"context": self.context_for}

    def context_for(self, ctx: Context) -> ContextBlocks:
        if self._policy is None:
            raise RuntimeError("ContextPlugin has not started: the server's lifespan (startup) has not run.")
        return ContextBlocks(self._policy, ctx)

    def tools(self) -> Sequence[type[ToolContext]]:
        return context_tools(self.blocks)

    def resources(self) -> Sequence[type[Any]]:
        return context_resources(self.blocks)

    def prompts(self) -> Sequence[type[Any]]:
        return context_prompts(self.blocks)

    async def startup(self) -> None:
        vault = await self._backing.start()
        self._policy = ContextPolicy(vault, self._clock, self.scope, self.blocks, self.count)

    async def shutdown(self) -> None:
        self._policy = None
        await self._backing.stop()
