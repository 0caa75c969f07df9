"""stdin and stdout of ``scarwarden mcp``, waited on so that the wait is cancellable:
Ctrl-C (SIGINT) cancels the serving, and a wait in a worker thread (the SDK's transport
reads and writes in one) held that off until the client sent another line, or read the
answers it had left unread. stdin's lines reach the SDK's transport with each one the
SDK would misread answered by :mod:`.wire` instead.
"""

from __future__ import annotations

import os
import select
import stat
import sys
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from mcp.types import JSONRPCError

from scarwarden.agents.mcp.wire import misread_reply, not_utf8_reply


def _pollable(fd: int) -> bool:
    """Whether the event loop can wait for ``fd``: a pipe, a socket or a terminal (a
    file or ``/dev/null`` never makes one wait, and cannot be polled), on POSIX (on
    Windows, asyncio waits for sockets only)."""
    if os.name != "posix":
        return False
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


async def lines_of(raw: Any) -> AsyncIterator[bytes]:
    """The lines of the binary file ``raw``, each with its newline (the last may have none).

    A pipe, socket or terminal is read when the event loop sees it readable, so the wait
    for the next line is cancellable: read in a worker thread (the SDK's way), the wait
    held off Ctrl-C (SIGINT cancels the serving, which waited for that thread) until the
    client sent another line. A file (``< requests.jsonl``, ``/dev/null``) is read in a
    worker thread: its reads never wait, and the event loop cannot poll it.
    """
    fd = raw.fileno()
    if not _pollable(fd):
        async for line in anyio.wrap_file(raw):
            yield line
        return
    pending, start = bytearray(), 0
    while True:
        await anyio.wait_readable(fd)
        chunk = os.read(fd, 1 << 16)  # readable: this returns at once, with data or at its end
        if not chunk:
            break
        pending += chunk
        while (end := pending.find(b"\n", start)) >= 0:
            yield bytes(pending[: end + 1])
            del pending[: end + 1]
            start = 0
        start = len(pending)
    if pending:
        yield bytes(pending)


@contextmanager
def claimed_stdin() -> Iterator[StdinLines]:
    """stdin's lines, with file descriptor 0 pointed at the null device meanwhile, as
    the SDK's transport does for the stdin it reads itself (a child process must read
    EOF there, not the client's messages); restored on exit."""
    with _claimed(0) as wire:
        yield StdinLines(wire)


@contextmanager
def _claimed(fd: int) -> Iterator[Any]:
    """The binary file the SDK's own (private: mcp 2.3) ``_claim_fd`` gives for stdin (0)
    or stdout (1) while it diverts the descriptor (stdin from the null device, stdout
    to stderr); released on exit. An SDK without it: the stream itself, not diverted."""
    from mcp.server import stdio

    stream = sys.stdin if fd == 0 else sys.stdout
    claim = getattr(stdio, "_claim_fd", None)
    if claim is None:
        yield stream.buffer
        return
    diversion = stdio._open_stdin_diversion if fd == 0 else stdio._open_stdout_diversion
    wire, release = claim(fd, stream, "rb" if fd == 0 else "wb", diversion)
    try:
        yield wire
    finally:
        if release is not None:
            release()


class StdinLines:
    """stdin for the SDK's transport, which only iterates its lines and parses each:
    the lines of ``raw`` (bytes, split at newlines only), as text, blank ones skipped.

    A line the SDK would misread is answered here: its answer goes to :attr:`answers`
    and a blank line takes its place, which the SDK passes on as unreadable and
    :class:`AnsweringReadStream` answers with the next of :attr:`answers` (in order,
    among the answers to the other unreadable lines)."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self.answers: deque[JSONRPCError] = deque()

    async def __aiter__(self) -> AsyncIterator[str]:
        try:
            async for raw in lines_of(self._raw):
                answer: JSONRPCError | None
                try:  # a byte order mark may be ignored (RFC 8259, section 8.1): Windows tools write one
                    line = raw.decode("utf-8").removeprefix("\ufeff")
                except UnicodeDecodeError as exc:  # the SDK's "replace" made it U+FFFD, kept for good
                    line, answer = "", not_utf8_reply(exc)
                else:
                    answer = misread_reply(line)
                if answer is not None:
                    self.answers.append(answer)
                    yield "\n"
                elif line.strip():
                    yield line
        except OSError as exc:
            raise StdinError(*exc.args) from exc


class StdinError(OSError):
    """stdin could not be read (any other OSError of the transport's is writing stdout)."""


@contextmanager
def claimed_stdout() -> Iterator[Stdout]:
    """stdout for the SDK's transport, with file descriptor 1 pointed at stderr meanwhile,
    as the SDK's transport does for the stdout it writes itself (a stray print must not
    reach the client); restored on exit."""
    with _claimed(1) as wire:
        yield Stdout(wire)


class Stdout:
    """stdout for the SDK's transport, which writes each answer's line and flushes: the
    line is written when the event loop sees ``raw`` writable, at most ``PIPE_BUF`` bytes
    at a time (a pipe that polls writable takes that much without blocking). A line
    interrupted half-written gets one more second to be finished; then it stays cut (the
    client had read nothing for a second, and the server is ending)."""

    def __init__(self, raw: Any) -> None:
        raw.flush()  # the fallback is sys.stdout's buffer: nothing may be left in it
        self._fd = raw.fileno()
        self._poll = _pollable(self._fd)
        self._left = memoryview(b"")

    async def write(self, text: str) -> None:
        self._left = memoryview(text.encode("utf-8"))
        size = len(self._left)
        try:
            await self._write()
        except anyio.get_cancelled_exc_class():
            if 0 < len(self._left) < size:  # a line begun: a client reading gets all of it
                with anyio.move_on_after(1, shield=True):
                    await self._write()
            raise

    async def _write(self) -> None:
        while self._left:
            if self._poll:
                await anyio.wait_writable(self._fd)
            size = select.PIPE_BUF if self._poll else len(self._left)
            self._left = self._left[os.write(self._fd, self._left[:size]) :]

    async def flush(self) -> None:
        """Each line is written whole: nothing is held back."""
