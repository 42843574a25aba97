"""``RememberPolicy``: what one remember plugin shares with every call's ``Remember``."""

from __future__ import annotations

from collections.abc import Callable

from mcpkit import DEFAULT_TURN_TIMEOUT, Clock
from mcpkit_storage import KeyedLocks, Quota, Vault

from ._cursor import Cursors

__all__ = ["RememberPolicy"]


class RememberPolicy:
    """What one plugin instance shares with every call: the vault, the clock and the limits.

    ``quota`` bounds what one owner keeps in one scope; ``session_ttl`` is the longest a value kept
    for a session (whose values nobody can reach once it ends) lives after its last write; ``turn_timeout`` how long
    an update waits for its turn behind this process's other writers of the value; ``history`` how many versions of
    each key its change history keeps (0: none).
    """

    def __init__(
        self,
        vault: Vault,
        clock: Callable[[], Clock],
        default_ttl: float | None,
        max_value_bytes: int,
        quota: Quota | None = None,
        session_ttl: float | None = None,
        turn_timeout: float = DEFAULT_TURN_TIMEOUT,
        history: int = 0,
    ) -> None:
        self.vault = vault
        self.clock = clock
        self.default_ttl = default_ttl
        self.max_value_bytes = max_value_bytes
        self.quota = quota
        self.session_ttl = session_ttl
        #: How many versions of each key its change history keeps (0: none).
        self.history = history
        self.updates = KeyedLocks(turn_timeout)
        self.cursors = Cursors(vault.keyring)
