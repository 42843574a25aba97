"""At start: whether the store's first values were sealed with a secret this server was not given, said once."""

from __future__ import annotations

import logging

from ..base import first_time
from ..sealing import HEADER_BYTES, UndecryptableError
from ..vault import Vault

__all__ = ["SECRET_SAMPLE", "check_secret"]

logger = logging.getLogger("mcpkit.remember")

#: How many stored values ``check_secret`` looks at when the server starts.
SECRET_SAMPLE = 32


async def check_secret(vault: Vault, where: str, sample: int = SECRET_SAMPLE) -> None:
    """Warn when the first values in the store were sealed with a secret this keyring lacks.

    A wrong secret also hashes every owner differently, so no read ever meets such a value:
    without this look the store would just seem empty, and nothing would say why. Logged once per
    process for one store, secret and set of unknown key ids, however many plugins look.
    """
    looked, foreign = 0, set[str]()
    records = vault.store.scan()
    try:
        async for record in records:
            looked += 1
            try:
                vault.keyring.open(record.owner, record.bucket, record.key, record.entry.data)
            except UndecryptableError as exc:
                if exc.reason == "unknown_key":
                    foreign.add(bytes(record.entry.data[1:HEADER_BYTES]).hex())
            if looked >= sample:
                break
    finally:
        close = getattr(records, "aclose", None)  # an async generator: end its scan now
        if close is not None:
            await close()
    if foreign and first_time(("foreign secret", where, tuple(sorted(foreign)), vault.keyring.key_ids)):
        logger.warning(
            "The remember store (%s) holds values sealed with a secret this server was not given "
            "(key id %s, in the first %d values looked at); they read as missing. Did REMEMBER_SECRET "
            "change? Set the secret that wrote them, or keep it after the new one (REMEMBER_SECRET=new,old) "
            "until `mcpkit remember rotate` has run. This server's key ids: %s.",
            where,
            ", ".join(sorted(foreign)),
            looked,
            ", ".join(vault.keyring.key_ids),
        )
