"""mcpkit_context: context blocks per caller (read-only, writable, searchable, loadable) as ``self.context``."""

from ._blocks import Document, LoadableBlock, ReadOnlyBlock, SearchableBlock, WritableBlock
from ._context import ContextBlocks
from ._errors import ContextError, ContextInvalidError, ContextNotFoundError, ContextOverBudgetError
from ._plugin import ContextPlugin
from ._tokens import estimate

__all__ = [
    "ContextBlocks",
    "ContextError",
    "ContextInvalidError",
    "ContextNotFoundError",
    "ContextOverBudgetError",
    "ContextPlugin",
    "Document",
    "LoadableBlock",
    "ReadOnlyBlock",
    "SearchableBlock",
    "WritableBlock",
    "estimate",
]
