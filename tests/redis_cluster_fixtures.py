"""A real Redis Cluster for tests: three primaries and three replicas of the installed ``redis-server``.

The nodes listen on spare loopback ports whose cluster bus ports (+10000) are free too, are joined with
``redis-cli --cluster create`` and stopped by PID at teardown. ``redis_cluster`` is one cluster for the whole
session (tests keep to a key prefix of their own); ``make_redis_cluster`` gives a test a cluster of its own to
kill nodes of and reshard. Without ``redis-server``/``redis-cli`` the tests skip; under ``CI=true`` they fail.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.cluster import RedisCluster

from ci import missing as _missing
from redis_fixtures import ExitedError, PrivateRedis, _free_cluster_port
from tls_fixtures import TLSFiles

#: How long a node may stay silent before the others fail it over (the harness keeps it short).
NODE_TIMEOUT_MS = 1000
READY_SECONDS = 30.0
SLOTS = 16384


class Cluster:
    """Six ``redis-server`` processes joined into one cluster (3 primaries, a replica each)."""

    def __init__(self, directory: Path, primaries: int = 3, replicas: int = 1, tls: TLSFiles | None = None) -> None:
        server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
        if server is None or cli is None:
            _missing("redis-server and redis-cli are not on PATH (Debian package redis-server)")
        self._cli = cli
        self.nodes: list[PrivateRedis] = []
        self.tls_ports: list[int] = []  # with tls: each node's TLS port, in node order (the plain port stays)
        for number in range(primaries * (1 + replicas)):
            where = directory / f"node-{number}"
            where.mkdir(parents=True)
            extra = ["--cluster-enabled", "yes", "--cluster-config-file", str(where / "nodes.conf")]
            extra += ["--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--cluster-require-full-coverage", "no"]
            extra += ["--repl-diskless-sync-delay", "0"]  # replicas in sync at once, not after 5 s
            if tls is not None:  # clients on a TLS port with a certificate; nodes between them over TLS
                self.tls_ports.append(_free_cluster_port())  # with tls-cluster the bus is on the TLS port + 10000
                extra += ["--tls-port", str(self.tls_ports[-1]), "--tls-cluster", "yes", "--tls-replication", "yes"]
                extra += ["--tls-cert-file", str(tls.server_cert), "--tls-key-file", str(tls.server_key)]
                extra += ["--tls-ca-cert-file", str(tls.ca), "--tls-auth-clients", "yes"]
            self.nodes.append(PrivateRedis(server, _free_cluster_port(), where, extra))
        self._replicas = replicas
        self._tls = tls

    @property
    def url(self) -> str:
        """The store URL naming every node (a client needs only one that answers to find the others); with
        TLS, their TLS ports, the CA and the client's certificate."""
        if self._tls is None:
            return "redis+cluster://" + ",".join(f"127.0.0.1:{node.port}" for node in self.nodes)
        files = self._tls
        options = f"ssl_ca_certs={files.ca}&ssl_certfile={files.client_cert}&ssl_keyfile={files.client_key}"
        return "rediss+cluster://" + ",".join(f"127.0.0.1:{port}" for port in self.tls_ports) + "?" + options

    def start(self) -> None:
        for node in self.nodes:
            try:
                node.start()
            except ExitedError:  # its port (or bus port) was taken after it was found free: once more on another
                node.port = _free_cluster_port()
                node.start()
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        self.cli("--cluster", "create", *addresses, "--cluster-replicas", str(self._replicas), "--cluster-yes")
        self.wait_ready()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def cli(self, *arguments: str, timeout: float = 120.0) -> str:
        """Run ``redis-cli`` against the cluster's first live node; its output, or RuntimeError with it."""
        first = next(node for node in self.nodes if node.running)
        command = [self._cli, "-h", "127.0.0.1", "-p", str(first.port), *arguments]
        if arguments and arguments[0] == "--cluster":
            command = [self._cli, *arguments]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def client(self) -> RedisCluster:
        live = next(node for node in self.nodes if node.running)
        return RedisCluster(host="127.0.0.1", port=live.port, socket_timeout=2.0)

    def primaries(self) -> list[PrivateRedis]:
        """The live nodes that serve slots now, in port order."""
        return [node for node in self.nodes if node.running and _role(node) == "master" and slots_of(node)]

    def replica_of(self, primary: PrivateRedis) -> PrivateRedis | None:
        for node in self.nodes:
            if node.running and node is not primary and _role(node) == "slave":
                info = _info(node, "replication")
                if int(info.get("master_port", 0)) == primary.port:
                    return node
        return None

    def kill(self, node: PrivateRedis) -> None:
        """SIGKILL a node (no goodbye to its peers), as a crashed machine would go."""
        os.kill(node.pid, signal.SIGKILL)
        node.reap()

    def reshard(self, source: PrivateRedis, target: PrivateRedis, slots: int) -> str:
        """Move ``slots`` hash slots (and their keys) from ``source`` to ``target`` while clients keep going."""
        return self.cli(
            "--cluster", "reshard", f"127.0.0.1:{source.port}",
            "--cluster-from", _node_id(source), "--cluster-to", _node_id(target),
            "--cluster-slots", str(slots), "--cluster-yes", "--cluster-pipeline", "100",
        )  # fmt: skip

    def wait_ready(self, timeout: float = READY_SECONDS) -> None:
        """Until every live node says ``cluster_state:ok``, every slot is served and every replica is in sync
        (a replica that never synchronised would not take over from its primary)."""
        deadline = time.monotonic() + timeout
        while True:
            live = [node for node in self.nodes if node.running]
            try:
                states = [_info_cluster(node) for node in live]
                replicas = [_info(node, "replication") for node in live]
                if all(
                    s.get("cluster_state") == "ok" and s.get("cluster_slots_ok") == str(SLOTS) for s in states
                ) and all(r.get("role") == "master" or r.get("master_link_status") == "up" for r in replicas):
                    return
            except (redis.ConnectionError, redis.TimeoutError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Redis Cluster was not ready within {timeout} s")
            time.sleep(0.1)


def _connection(node: PrivateRedis) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=node.port, socket_timeout=2.0, decode_responses=True)


def _info(node: PrivateRedis, section: str) -> dict[str, str]:
    with _connection(node) as client:
        return {k: str(v) for k, v in client.info(section).items()}


def _info_cluster(node: PrivateRedis) -> dict[str, str]:
    with _connection(node) as client:
        text = str(client.execute_command("CLUSTER", "INFO"))
    return dict(line.split(":", 1) for line in text.strip().splitlines() if ":" in line)


def _role(node: PrivateRedis) -> str:
    return _info(node, "replication").get("role", "")


def _node_id(node: PrivateRedis) -> str:
    with _connection(node) as client:
        return str(client.execute_command("CLUSTER", "MYID"))


def slots_of(node: PrivateRedis) -> int:
    """How many hash slots ``node`` serves as a primary."""
    my_id = _node_id(node)
    with _connection(node) as client:
        lines = str(client.execute_command("CLUSTER", "NODES")).splitlines()
    for line in lines:
        fields = line.split()
        if fields and fields[0] == my_id:
            total = 0
            for part in fields[8:]:
                if part.startswith("["):
                    continue
                low, _, high = part.partition("-")
                total += int(high or low) - int(low) + 1
            return total
    return 0


def _started(directory: Path, **options: Any) -> Cluster:
    cluster = Cluster(directory, **options)
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return cluster


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One real cluster for the session; tests keep to their own prefix (``cluster_prefix``)."""
    cluster = _started(tmp_path_factory.mktemp("redis-cluster"))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def cluster_prefix(redis_cluster: Cluster) -> Iterator[str]:
    """A key prefix of this test's own in the session cluster; its keys are deleted afterwards."""
    prefix = f"mcpkit-test:{uuid.uuid4().hex}:"
    yield prefix
    client = redis_cluster.client()
    try:
        for node in client.get_primaries():  # type: ignore[no-untyped-call]
            names = list(client.scan_iter(match=f"{prefix}*", count=1000, target_nodes=node))
            for name in names:
                client.delete(name)
    finally:
        client.close()


@pytest.fixture
def make_redis_cluster(tmp_path: Path) -> Iterator[Callable[..., Cluster]]:
    """``make_redis_cluster(**options)``: a started cluster of this test's own (``Cluster``'s options), to kill and
    reshard; stopped after."""
    started: list[Cluster] = []

    def make(**options: Any) -> Cluster:
        cluster = _started(tmp_path / f"cluster-{len(started)}", **options)
        started.append(cluster)
        return cluster

    try:
        yield make
    finally:
        for cluster in started:
            cluster.stop()
