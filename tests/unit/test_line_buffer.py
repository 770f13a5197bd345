"""Log lines: written together once per turn of the event loop, in order, none lost."""

from __future__ import annotations

import asyncio
import io
import logging
import threading

from leadmail.logs import LineBuffer, LineHandler


class CountingStream(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, s: str) -> int:
        self.writes += 1
        return super().write(s)


async def test_lines_of_one_turn_are_written_together_at_its_end() -> None:
    stream = CountingStream()
    buffer = LineBuffer(stream)
    for n in range(5):
        buffer.msg(f"line {n}")
    assert stream.getvalue() == ""  # held until the turn ends
    await asyncio.sleep(0)
    assert stream.getvalue() == "".join(f"line {n}\n" for n in range(5))
    assert stream.writes == 1
    buffer.info("next turn")
    await asyncio.sleep(0)
    assert stream.getvalue().endswith("line 4\nnext turn\n")
    assert stream.writes == 2


def test_outside_an_event_loop_a_line_is_written_at_once() -> None:
    stream = CountingStream()
    buffer = LineBuffer(stream)
    buffer.warning("at once")
    assert stream.getvalue() == "at once\n"


async def test_a_threads_line_joins_the_write_the_loop_has_pending() -> None:
    stream = CountingStream()
    buffer = LineBuffer(stream)
    buffer.msg("from the loop")
    thread = threading.Thread(target=buffer.msg, args=("from a thread",))
    thread.start()
    thread.join()
    assert stream.getvalue() == ""  # the loop's write of this turn takes it along
    await asyncio.sleep(0)
    assert stream.getvalue() == "from the loop\nfrom a thread\n"
    assert stream.writes == 1


def test_a_thread_with_nothing_pending_writes_at_once() -> None:
    stream = CountingStream()
    buffer = LineBuffer(stream)
    thread = threading.Thread(target=buffer.msg, args=("from a thread",))
    thread.start()
    thread.join()
    assert stream.getvalue() == "from a thread\n"


async def test_standard_library_records_share_the_buffer_and_its_order() -> None:
    stream = CountingStream()
    buffer = LineBuffer(stream)
    handler = LineHandler(buffer)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    logger = logging.getLogger("leadmail.test.line_buffer")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        buffer.msg("structlog first")
        logger.warning("stdlib second")
        buffer.msg("structlog third")
        await asyncio.sleep(0)
    finally:
        logger.removeHandler(handler)
    assert stream.getvalue() == (
        "structlog first\nleadmail.test.line_buffer stdlib second\nstructlog third\n"
    )
    assert stream.writes == 1
