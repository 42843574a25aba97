"""Redis over TLS, for real: ``redis-server`` with a TLS port, a CA of the test's own and clients that must show a
certificate. The one-node store (``rediss://``, redis-py's URL options) and the cluster store (``rediss+cluster://``,
the same option names) connect with the URL's CA and certificate, and refuse a server their CA does not vouch for."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpkit_storage.stores._store import StoreUnavailableError
from mcpkit_storage.stores.redis._redis_cluster_store import RedisClusterStore
from mcpkit_storage.stores.redis._redis_store import RedisStore
from redis_cluster_fixtures import Cluster
from redis_fixtures import PrivateRedis, _free_port
from stores.conftest import OWNER
from tls_fixtures import TLSFiles, make_tls_files


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TLSFiles:
    return make_tls_files(tmp_path_factory.mktemp("tls"))


def _tls_arguments(files: TLSFiles, port: int) -> list[str]:
    return [
        "--tls-port", str(port), "--tls-cert-file", str(files.server_cert), "--tls-key-file", str(files.server_key),
        "--tls-ca-cert-file", str(files.ca), "--tls-auth-clients", "yes",
    ]  # fmt: skip


def _options(files: TLSFiles, ca: Path | None = None) -> str:
    return f"ssl_ca_certs={ca or files.ca}&ssl_certfile={files.client_cert}&ssl_keyfile={files.client_key}"


async def test_the_one_node_store_speaks_tls_with_the_urls_ca_and_certificate(
    make_private_redis: Callable[..., PrivateRedis], tls_files: TLSFiles
) -> None:
    port = _free_port()
    make_private_redis(*_tls_arguments(tls_files, port))
    store = RedisStore(f"rediss://127.0.0.1:{port}/0?{_options(tls_files)}", prefix="mcpkit-test:")
    await store.open()
    try:
        await store.put(OWNER, "b", "k", b"over tls", None, time.time())
        entry = await store.get(OWNER, "b", "k", time.time())
    finally:
        await store.close()

    assert entry is not None
    assert entry.data == b"over tls"


async def test_a_cluster_store_speaks_tls_to_every_node_with_the_urls_ca_and_certificate(
    make_redis_cluster: Callable[..., Cluster], tls_files: TLSFiles
) -> None:
    cluster = make_redis_cluster(replicas=0, tls=tls_files)
    assert cluster.url.startswith("rediss+cluster://")
    store = RedisClusterStore(cluster.url, prefix="mcpkit-test:")
    await store.open()
    try:
        owners = [f"{group:03x}.owner" for group in range(0, 4096, 97)]  # groups spread over the three primaries
        for owner in owners:
            await store.put(owner, "b", "k", owner.encode(), None, time.time())
        found = [await store.get(owner, "b", "k", time.time()) for owner in owners]
    finally:
        await store.close()

    assert [entry and entry.data for entry in found] == [owner.encode() for owner in owners]


async def test_a_server_the_urls_ca_does_not_vouch_for_is_refused_at_open(
    make_private_redis: Callable[..., PrivateRedis], tls_files: TLSFiles, tmp_path: Path
) -> None:
    port = _free_port()
    make_private_redis(*_tls_arguments(tls_files, port))
    stranger = make_tls_files(tmp_path / "another-ca").ca
    store = RedisStore(f"rediss://127.0.0.1:{port}/0?{_options(tls_files, ca=stranger)}", prefix="mcpkit-test:")

    with pytest.raises(StoreUnavailableError, match="certificate verify failed"):
        await store.open()
