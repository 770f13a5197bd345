"""A TCP proxy the tests can switch off and on, to cut a server off from its database; or
silence one connection: what either end sends is swallowed, and nothing is closed (a
partition, or a firewall dropping the connection, as the server sees it).

It runs its own event loop in a background thread, so a test (sync or async) never blocks
it and it never blocks the test.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator

_CHUNK = 65536


class TcpProxy:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = 0  # chosen by the first start(), reused by every later one
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="tcp-proxy", daemon=True
        )
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._silenced: set[int] = set()  # upstream connections, by their local port

    # Called from the test's thread.

    def start(self) -> None:
        """Listen (again, on the same port after the first time) and forward."""
        if not self._thread.is_alive():
            self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(timeout=5)

    def stop(self) -> None:
        """Stop listening and cut every open connection, both ways, at once."""
        asyncio.run_coroutine_threadsafe(self._cut(), self._loop).result(timeout=5)

    def silence(self, upstream_port: int) -> None:
        """Swallow everything on the connection whose upstream side is bound to
        ``upstream_port`` here (``client_port`` in Postgres's pg_stat_activity)."""
        self._loop.call_soon_threadsafe(self._silenced.add, upstream_port)

    def close(self) -> None:
        if self._thread.is_alive():
            self.stop()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        self._loop.close()

    @property
    def open_connections(self) -> int:
        return len(self._tasks)

    # On the proxy's loop.

    async def _listen(self) -> None:
        if self._server is not None:
            return
        self._server = await asyncio.start_server(
            self._accept, "127.0.0.1", self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def _cut(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            try:
                up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            except OSError:
                writer.transport.abort()
                return
            self._writers.add(up_writer)
            port = up_writer.get_extra_info("sockname")[1]

            def silenced() -> bool:
                return port in self._silenced

            await asyncio.gather(
                _pipe(reader, up_writer, silenced),
                _pipe(up_reader, writer, silenced),
                return_exceptions=True,
            )
            for side in (writer, up_writer):
                side.transport.abort()
                self._writers.discard(side)
        finally:
            self._writers.discard(writer)
            self._tasks.discard(task)


async def _pipe(
    source: asyncio.StreamReader, sink: asyncio.StreamWriter, silenced: Callable[[], bool]
) -> None:
    try:
        while chunk := await source.read(_CHUNK):
            if silenced():
                continue  # read and dropped: the sender sees no error, the peer nothing
            sink.write(chunk)
            await sink.drain()
    finally:
        # One side ended: end the other too, so neither end waits on a half-open pair.
        sink.transport.abort()


@contextlib.contextmanager
def tcp_proxy(upstream_host: str, upstream_port: int) -> Iterator[TcpProxy]:
    proxy = TcpProxy(upstream_host, upstream_port)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.close()
