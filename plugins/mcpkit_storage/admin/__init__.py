"""What the operator commands do to a store: purge a user's values, say whom a rotation would leave behind, move
values to the primary secret, and read a key's change history."""

from ._history import NO_HISTORY, add_history_command, history_lines, key_history
from ._migration import migrate
from ._purge import NOTHING_PURGED, PurgeReport, add_user_arguments, nothing_purged, purge_target, purge_user
from ._rollout import SEEN_SECONDS, rollout, unlisted_rotation

__all__ = [
    "NOTHING_PURGED",
    "NO_HISTORY",
    "SEEN_SECONDS",
    "PurgeReport",
    "add_history_command",
    "add_user_arguments",
    "history_lines",
    "key_history",
    "migrate",
    "nothing_purged",
    "purge_target",
    "purge_user",
    "rollout",
    "unlisted_rotation",
]
