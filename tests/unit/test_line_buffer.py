"""Log lines: info lines written together, anything else at once; in order, none lost."""

from __future__ import annotations

import asyncio
import io
import logging
import threading

from leadmail.logs import LineBuffer, LineHandler

HELD = LineBuffer.HOLD_SECONDS


class CountingStream(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, s: str) -> int:
        self.writes += 1
        return super().write(s)


async def test_info_lines_close_together_are_written_in_one_write() -> None:
    stream = CountingStream()
    buffer = LineBuffer(stream)
    for n in range(3):
        buffer.msg(f"line {n}")
        await asyncio.sleep(0)  # other turns of the loop pass meanwhile
    buffer.info("line 3")
    assert stream.getvalue() == ""  # held a moment for others to join
    await asyncio.sleep(HELD * 3)
    assert stream.getvalue() == "".join(f"line {n}\n" for n in range(4))
    assert stream.writes == 1
    buffer.info("later")
    await asyncio.sleep(HELD * 3)
    assert stream.getvalue().endswith("line 3\nlater\n")
    assert stream.writes == 2


async def test_a_warning_is_written_at_once_after_what_is_held() -> None:
    stream = CountingStream()
    buffer = LineBuffer(stream)
    buffer.info("held")
    buffer.warning("a warning")
    assert stream.getvalue() == "held\na warning\n"
    assert stream.writes == 1
    await asyncio.sleep(HELD * 3)  # the held line's timer finds nothing left
    assert stream.writes == 1


async def test_a_full_buffer_is_written_at_once() -> None:
    stream = CountingStream()
    buffer = LineBuffer(stream)
    for n in range(LineBuffer.MAX_LINES):
        buffer.info(f"{n}")
    assert stream.writes == 1
    assert stream.getvalue().count("\n") == LineBuffer.MAX_LINES


def test_outside_an_event_loop_a_line_is_written_at_once() -> None:
    stream = CountingStream()
    buffer = LineBuffer(stream)
    buffer.info("at once")
    assert stream.getvalue() == "at once\n"


async def test_a_threads_info_line_joins_the_write_the_loop_has_pending() -> None:
    stream = CountingStream()
    buffer = LineBuffer(stream)
    buffer.msg("from the loop")
    thread = threading.Thread(target=buffer.msg, args=("from a thread",))
    thread.start()
    thread.join()
    assert stream.getvalue() == ""
    await asyncio.sleep(HELD * 3)
    assert stream.getvalue() == "from the loop\nfrom a thread\n"
    assert stream.writes == 1


async def test_standard_library_records_are_written_at_once_in_order() -> None:
    stream = CountingStream()
    buffer = LineBuffer(stream)
    handler = LineHandler(buffer)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    logger = logging.getLogger("leadmail.test.line_buffer")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        buffer.msg("structlog first")
        logger.info("stdlib second")
        buffer.msg("structlog third")
        assert stream.getvalue() == "structlog first\nleadmail.test.line_buffer stdlib second\n"
        await asyncio.sleep(HELD * 3)
    finally:
        logger.removeHandler(handler)
    assert stream.getvalue().endswith("stdlib second\nstructlog third\n")
    assert stream.writes == 2
