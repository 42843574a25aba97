"""What ``mcpkit remember rotate`` (and ``reindex``) says before it moves anything: the secret every running server
must hold already, and the servers the store's notes show (``SecretWatch``), with any that lack it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from ..sealing import ROTATED_TO, Keyring, held_ids, seen_at

__all__ = ["SEEN_SECONDS", "Rollout", "rollout", "unlisted_rotation"]

#: A server whose ``held:`` note is at most this old counts as serving (each notes its key ids every minute).
SEEN_SECONDS = 300.0

_GUIDE = "docs/stores.md#rotating-the-secret"


class Rollout(NamedTuple):
    """What to print before a rotation, and why not to run it (None: nothing in the store's notes against it)."""

    said: str
    refusal: str | None


def rollout(notes: Mapping[str, str], keyring: Keyring, now: float) -> Rollout:
    """The rollout a rotation to ``keyring``'s first secret needs, and the servers ``notes`` show serving."""
    new = keyring.primary_key_id
    said = [
        f"This moves every value under the secret with key id {new} (the first of REMEMBER_SECRET). Every running "
        f"server must hold that secret already (REMEMBER_SECRET=old,new, then new,old: {_GUIDE}); a server that "
        "does not cannot read what moves, and refuses calls on the store (REMEMBER_STORE_UNAVAILABLE) until it is "
        "restarted with it."
    ]
    seen = sorted(
        (now - seen_at(value), ids)
        for name, value in notes.items()
        if (ids := held_ids(name)) is not None and now - seen_at(value) <= SEEN_SECONDS
    )
    minutes = f"{SEEN_SECONDS / 60:g} minutes"
    if seen:
        listed = "; ".join(f"key ids {', '.join(ids)} ({max(age, 0):.0f} s ago)" for age, ids in seen)
        said.append(f"Servers that noted the secrets they hold in this store in the last {minutes}: {listed}.")
    else:
        said.append(
            f"No server noted the secrets it holds in this store in the last {minutes} (an mcpkit older than "
            "this one does not): check each running server's REMEMBER_SECRET yourself."
        )
    behind = [(age, ids) for age, ids in seen if new not in ids]
    if behind:
        age, ids = behind[0]
        refusal = (
            f"a server that used this store {max(age, 0):.0f} s ago holds key id(s) {', '.join(ids)}, not {new}: "
            "after this rotation it could not read what moves. Restart every server with REMEMBER_SECRET=old,new "
            f"first ({_GUIDE}), then run this again; if that server is stopped for good, run this again once it has "
            f"not been seen for {minutes}, or pass --force."
        )
        return Rollout("\n".join(said), refusal)
    unlisted = unlisted_rotation(notes, keyring)
    return Rollout("\n".join(said), None if unlisted is None else f"{unlisted}, or pass --force if it is lost.")


def unlisted_rotation(notes: Mapping[str, str], keyring: Keyring) -> str | None:
    """Why ``keyring`` cannot reach everything, when the store's values were last rotated to a secret it lacks."""
    rotated = notes.get(ROTATED_TO)
    if rotated is None or rotated in keyring.key_ids:
        return None
    return (
        f"the store's values were last rotated to the secret with key id {rotated}, which REMEMBER_SECRET does not "
        f"list (its key ids: {', '.join(keyring.key_ids)}), so what is kept under it cannot be reached: add that "
        "secret to REMEMBER_SECRET"
    )
