"""A plugin's storage from configuration to a started vault: the store URL and secret, the ``Backing``, and the
server's tasks in a vault."""

from ._backing import BackedPlugin, Backing, keyring_from, make_store
from ._config import STORE_URLS, StoreConfig, parse_store_url, secret_from_env, store_config
from ._tasks import TASKS_BUCKET, VaultTaskStore

__all__ = [
    "STORE_URLS",
    "TASKS_BUCKET",
    "BackedPlugin",
    "Backing",
    "StoreConfig",
    "VaultTaskStore",
    "keyring_from",
    "make_store",
    "parse_store_url",
    "secret_from_env",
    "store_config",
]
