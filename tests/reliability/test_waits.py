"""No wait in the server is unbounded (issue 35): every place in ``mcpkit``, the plugins and the demo apps that waits
on the client or on a queue — a request to the client, an ASGI ``receive``, an awaited future, event or task, a lock
or limiter held with ``async with``, a worker thread, a sleep — is listed here with its deadline, and each deadline
is one the reliability page names. A new wait fails this test until it is listed (and bounded)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (ROOT / "framework", ROOT / "plugins", ROOT / "apps")
PAGE = ROOT / "docs" / "reliability.md"

#: Calls that wait, by the name called.
WAITING_CALLS = frozenset(
    {"send_request", "wait", "wait_for", "run_sync", "run_in_executor", "sleep", "receive", "acquire"}
)

#: The deadlines, as the reliability page's table of waits names them.
QUESTION = "question_timeout"
READ = "read_timeout"
WRITE = "write_timeout"
TURN = "turn_timeout"
THREADS = "the work ahead of it"
EMBEDDER = "EMBED_TIMEOUT_SECONDS"
EMBED_TURN = "EMBED_WAIT_SECONDS"
TOKEN = "its `timeout`"
STORE = "each store's own timeouts"
RETRIES = "a fixed number of tries"
SHUTDOWN = "`STOP_SECONDS`"
BACKGROUND = "not a caller's"
TEST_ONLY = "the test's own"
COMMAND = "the command's own bounds"

#: (module path, function, what waits) -> its deadline (one entry for however many such waits the function has).
WAITS: dict[tuple[str, str, str], str] = {
    # the client
    ("framework/mcpkit/elicitation/_elicitation.py", "ask", "send_request"): QUESTION,
    ("framework/mcpkit/auth/_gate.py", "_called", "receive"): READ,
    ("framework/mcpkit/auth/_gate.py", "_called.replay", "receive"): READ,
    ("framework/mcpkit/http/_admission.py", "_peeked", "receive"): READ,
    ("framework/mcpkit/http/_admission.py", "_peeked.replaying", "receive"): READ,
    ("framework/mcpkit/http/_lazy_sse.py", "LazySSETransport._answer", "receive"): READ,
    ("framework/mcpkit/http/_lone_surrogates.py", "_hold", "receive"): READ,
    ("framework/mcpkit/http/_lone_surrogates.py", "replaying.replayed", "receive"): READ,
    ("framework/mcpkit/http/_protocol_errors.py", "ProtocolErrorMask.__call__", "receive"): READ,
    ("framework/mcpkit/http/_sessions.py", "SessionGuard._use.reading_receive", "receive"): READ,
    ("framework/mcpkit/reporting/_client_log.py", "ClientLog.send", "await sending"): WRITE,
    # the caller's own earlier calls
    ("plugins/mcpkit_storage/base/_keyed_locks.py", "KeyedLocks.wait", "await turn"): TURN,
    ("plugins/mcpkit_storage/base/_keyed_locks.py", "KeyedLocks.held", "wait"): TURN,
    ("plugins/mcpkit_remember/_remember.py", "Remember.update", "wait"): TURN,
    # worker threads: a synchronous tool's, on its caller's share (TOOL_BUSY after turn_timeout), and bounded work
    ("framework/mcpkit/tools/_threads.py", "ToolThreads._acquire", "acquire"): TURN,
    ("framework/mcpkit/tools/_threads.py", "ToolThreads.run", "run_sync"): THREADS,  # the thread is its own
    ("plugins/mcpkit_history/_search.py", "search_one", "run_sync"): THREADS,
    ("plugins/mcpkit_remember/_remember.py", "Remember.list", "run_sync"): THREADS,
    ("plugins/mcpkit_storage/index/_index.py", "BlindIndex.postings_of", "run_sync"): THREADS,
    ("plugins/mcpkit_storage/vault/_reader.py", "Reader.at_in_thread", "run_sync"): THREADS,
    ("plugins/mcpkit_storage/stores/sqlite/_sqlite_store.py", "SQLiteStore._run", "run_in_executor"): THREADS,
    ("plugins/mcpkit_storage/stores/sqlite/_sqlite_store.py", "SQLiteStore.close", "run_in_executor"): SHUTDOWN,
    ("plugins/mcpkit_remember/_remember.py", "Remember.update", "await new"): THREADS,  # the caller's own function
    # the embedder
    ("plugins/mcpkit_search/_minilm.py", "MiniLM.embed", "run_sync"): EMBEDDER,
    ("plugins/mcpkit_storage/index/_scheduler.py", "_Lane._wait", "await turn"): EMBED_TURN,
    ("plugins/mcpkit_search/_minilm.py", "MiniLM.load", "await done"): BACKGROUND,
    ("plugins/mcpkit_search/_e5.py", "E5Small._run", "run_sync"): EMBEDDER,
    ("plugins/mcpkit_search/_e5.py", "E5Small.load", "run_sync"): BACKGROUND,
    ("plugins/mcpkit_storage/index/_semantic.py", "Semantic.start", "sleep"): BACKGROUND,
    ("plugins/mcpkit_storage/index/_semantic.py", "Semantic.stop", "await loading"): SHUTDOWN,
    # identity providers
    ("framework/mcpkit/auth/_introspection_auth.py", "IntrospectionAuth.authenticate", "wait"): TOKEN,
    ("framework/mcpkit/auth/_jwt_auth.py", "_JWKSKeys.key_for", "run_sync"): TOKEN,
    (
        "framework/mcpkit/auth/_introspection_auth.py",
        "IntrospectionAuth._introspect",
        "async with self._requests",
    ): TOKEN,
    # a store's connection being made by another call
    (
        "plugins/mcpkit_storage/stores/redis/_cluster_client.py",
        "ClusterClient.initialize",
        "async with self._lock",
    ): STORE,
    # an import's store call for the chunk before, written while the next is sealed
    ("plugins/mcpkit_storage/portability/_import.py", "_Chunks._written", "await writing"): STORE,
    # a yield (sleep(0)) that hands that chunk's write to the store's thread before the next chunk is sealed
    ("plugins/mcpkit_storage/portability/_import.py", "_Chunks.add", "sleep"): COMMAND,
    # retries, a fixed number of them, each bounded by the store's own timeouts
    ("framework/mcpkit/tasks/_ledger.py", "Ledger.change", "sleep"): RETRIES,
    ("plugins/mcpkit_storage/base/_backoff.py", "backoff", "sleep"): RETRIES,
    ("plugins/mcpkit_storage/stores/redis/_redis_cluster_store.py", "RedisClusterStore._retrying", "sleep"): RETRIES,
    ("plugins/mcpkit_storage/stores/redis/_redis_cluster_store.py", "RedisClusterStore._replicated", "wait"): RETRIES,
    ("plugins/mcpkit_storage/stores/redis/_cluster_batch.py", "node_pipeline", "wait"): RETRIES,  # WAIT's own timeout
    ("plugins/mcpkit_storage/stores/sqlite/_sqlite_connect.py", "connect", "sleep"): RETRIES,
    # the server's own housekeeping and shutdown, which no caller waits on
    ("framework/mcpkit/tasks/_worker.py", "Workers._run", "wait"): BACKGROUND,
    ("framework/mcpkit/tasks/_worker.py", "Workers.close", "wait"): SHUTDOWN,
    ("plugins/mcpkit_storage/backing/_backing.py", "Backing._purge_forever", "sleep"): BACKGROUND,
    ("plugins/mcpkit_storage/backing/_backing.py", "Backing._watch_forever", "sleep"): BACKGROUND,
    ("plugins/mcpkit_storage/backing/_backing.py", "Backing.stop", "await task"): SHUTDOWN,  # cancelled first
    ("apps/mcpkit_helpdesk/_identity_provider.py", "IdentityProvider.stop", "wait"): SHUTDOWN,
    # the mcpkit command: processes it started, on the developer's machine
    ("framework/mcpkit/_cli/_reload.py", "stop_process", "wait"): COMMAND,
    ("framework/mcpkit/_cli/_dev.py", "_listening", "sleep"): COMMAND,
    ("framework/mcpkit/_cli/_child.py", "_end_with_supervisor", "sleep"): COMMAND,  # GRACE_SECONDS, STOP_SECONDS
    # mcpkit.testing: runs in the test's process, for the test's lifetime
    ("framework/mcpkit/testing/_holder.py", "Holder.open.hold", "wait"): TEST_ONLY,
    ("framework/mcpkit/testing/_holder.py", "Holder.open", "await ready"): TEST_ONLY,
    ("framework/mcpkit/testing/_holder.py", "Holder.close", "await task"): TEST_ONLY,
    ("framework/mcpkit/testing/_client.py", "CallerClient._connect", "async with http"): TEST_ONLY,
    ("framework/mcpkit/testing/_client.py", "CallerClient._session", "async with self._lock"): TEST_ONLY,
    ("framework/mcpkit/testing/_client.py", "CallerClient._connect", "async with client"): TEST_ONLY,
    ("framework/mcpkit/testing/_answers.py", "Answers._answer", "await answer"): TEST_ONLY,  # the test's handler
    ("framework/mcpkit/testing/_answers.py", "Answers._on_roots", "await listed"): TEST_ONLY,
    ("framework/mcpkit/testing/_transport.py", "StreamingASGITransport.aclose", "wait"): TEST_ONLY,
    ("framework/mcpkit/testing/_transport.py", "StreamingASGITransport.aclose", "await task"): TEST_ONLY,
    ("framework/mcpkit/testing/_transport.py", "StreamingASGITransport.handle_async_request", "await started"): (
        TEST_ONLY
    ),
    ("framework/mcpkit/testing/_transport.py", "StreamingASGITransport.handle_async_request.receive", "wait"): (
        TEST_ONLY
    ),
    # the tasks client: in a test, or in a client whose caller bounds it (docs/tasks.md: asyncio.timeout)
    ("framework/mcpkit/testing/_tasks.py", "ToolTask.get", "send_request"): TEST_ONLY,
    ("framework/mcpkit/testing/_tasks.py", "ToolTask.answer", "send_request"): TEST_ONLY,
    ("framework/mcpkit/testing/_tasks.py", "ToolTask.cancel", "send_request"): TEST_ONLY,
    ("framework/mcpkit/testing/_tasks.py", "ToolTask.wait", "sleep"): TEST_ONLY,
    ("framework/mcpkit/testing/_tasks.py", "ToolTask.result", "sleep"): TEST_ONLY,
}


def waits() -> Iterator[tuple[str, str, str]]:
    """Every place in the library that waits, as (module path, function, what waits)."""
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")):
            yield from _Finder(str(path.relative_to(ROOT))).found(ast.parse(path.read_text()))


class _Finder(ast.NodeVisitor):
    def __init__(self, path: str) -> None:
        self.path = path
        self.where: list[str] = []
        self.seen: list[tuple[str, str, str]] = []

    def found(self, tree: ast.AST) -> list[tuple[str, str, str]]:
        self.visit(tree)
        return self.seen

    def _inside(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.where.append(node.name)
        self.generic_visit(node)
        self.where.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _inside

    def _note(self, what: str) -> None:
        self.seen.append((self.path, ".".join(self.where), what))

    def visit_Call(self, node: ast.Call) -> None:
        called = node.func
        name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", None)
        if name in WAITING_CALLS:
            self._note(name)
        self.generic_visit(node)

    def visit_Await(self, node: ast.Await) -> None:
        if isinstance(node.value, ast.Name):  # a future, task or coroutine held in a variable
            self._note(f"await {node.value.id}")
        self.generic_visit(node)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> None:
        for item in node.items:
            if isinstance(item.context_expr, ast.Name | ast.Attribute):  # a lock or limiter: a queue
                self._note("async with " + ast.unparse(item.context_expr))
        self.generic_visit(node)


def test_every_wait_in_the_server_is_listed_with_its_deadline() -> None:
    found = set(waits())
    unlisted = sorted(found - set(WAITS))
    stale = sorted(set(WAITS) - found)
    assert not unlisted, f"waits with no deadline listed here (bound them, then list them): {unlisted}"
    assert not stale, f"listed waits no longer in the code (remove them): {stale}"


def test_every_deadline_listed_is_one_the_reliability_page_names() -> None:
    table = PAGE.read_text().split("### Every wait, and its deadline", 1)[1].split("\n## ", 1)[0]
    for deadline in sorted(set(WAITS.values())):
        assert deadline in table, f"the reliability page's table of waits does not name {deadline!r}"
