"""``completion/complete``: the candidates for a prompt argument or a resource-template parameter, from a
``complete_<name>`` method beside it."""

from ._completion import Completions, completers_of

__all__ = [
    "Completions",
    "completers_of",
]
