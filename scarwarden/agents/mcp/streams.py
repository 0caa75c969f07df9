"""stdin and stdout of ``scarwarden mcp``, read and written so that waiting on them is
cancellable: Ctrl-C (SIGINT) cancels the serving, and a wait in a worker thread (the
SDK's transport reads and writes in one) held that off until the client sent a line.
"""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from typing import Any

import anyio


async def lines_of(raw: Any) -> AsyncIterator[bytes]:
    """The lines of the binary file ``raw``, each with its newline (the last may have none).

    A pipe, socket or terminal is read when the event loop sees it readable, so the wait
    for the next line is cancellable: read in a worker thread (the SDK's way), the wait
    held off Ctrl-C (SIGINT cancels the serving, which waited for that thread) until the
    client sent another line. A file (``< requests.jsonl``, ``/dev/null``) is read in a
    worker thread: its reads never wait, and the event loop cannot poll it.
    """
    fd = raw.fileno()
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)):
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
