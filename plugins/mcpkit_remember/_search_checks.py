"""The checks of ``search``'s arguments (but its time window's, ``_window``) before anything is read."""

from __future__ import annotations

from mcpkit_storage import MAX_SEARCH_LIMIT, MODES, RememberInvalidError, Vault

__all__ = ["checked"]


def checked(vault: Vault, bucket: str, query: object, limit: object, mode: object, weight: object) -> None:
    """Raise a RememberInvalidError saying what a search needs when the place is not indexed or an argument is off."""
    if not vault.searchable(bucket):
        raise RememberInvalidError(
            "search() needs the plugin built with RememberPlugin.init(..., search=True), which indexes "
            "values as they are written; values kept before that are found once `mcpkit remember reindex` "
            "has run (docs/search.md)."
        )
    if not isinstance(query, str):
        raise RememberInvalidError(f"search() takes the query as a string, not {type(query).__name__}.")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise RememberInvalidError(
            f"search(limit=...) is a whole number from 1 to {MAX_SEARCH_LIMIT}, not {limit!r:.40}."
        )
    if mode is not None and mode not in MODES:
        raise RememberInvalidError(f"search(mode=...) is one of {', '.join(MODES)}, or None; not {mode!r:.40}.")
    if mode in ("semantic", "hybrid") and vault.semantic is None:
        raise RememberInvalidError(
            f"search(mode={mode!r}) searches by meaning, which needs an embedder: "
            "RememberPlugin.init(..., embedder=mcpkit_search.MiniLM()) (docs/search.md)."
        )
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
        raise RememberInvalidError(f"search(weight=...) is a number from 0 to 1, not {weight!r:.40}.")
