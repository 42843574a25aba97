"""The errors ``self.context`` and the context tools raise; each reaches the client with its code."""

from __future__ import annotations

from mcpkit import ToolError

__all__ = ["ContextError", "ContextInvalidError", "ContextNotFoundError", "ContextOverBudgetError"]


class ContextError(ToolError):
    """Base class of the context errors."""


class ContextInvalidError(ContextError):
    """A block, mode, key or content breaks a rule, or the block cannot do that (``CONTEXT_INVALID``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="CONTEXT_INVALID")


class ContextNotFoundError(ContextError):
    """No such block, or no such document in a loadable block (``CONTEXT_NOT_FOUND``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="CONTEXT_NOT_FOUND")


class ContextOverBudgetError(ContextError):
    """A write would take a writable block past its token budget (``CONTEXT_OVER_BUDGET``); nothing was written."""

    def __init__(self, block: str, tokens: int, max_tokens: int, current: int) -> None:
        super().__init__(
            f"The block {block!r} would hold {tokens:,} tokens; its budget is {max_tokens:,} (it holds {current:,} "
            f"now, so {max(0, max_tokens - current):,} are left). Shorten what you write, or replace the block with "
            "a tighter version of its content (mode='replace').",
            code="CONTEXT_OVER_BUDGET",
        )
        self.tokens = tokens
        self.max_tokens = max_tokens
