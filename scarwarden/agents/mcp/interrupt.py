"""SIGINT (Ctrl-C, a client stopping the server) in ``scarwarden mcp``: exit 130 at any
moment, a tool call already running finished first (docs/mcp.md).

While serving, the event loop receives SIGINT and cancels the serving, which waits for a
tool running on a worker thread (a ``record_episode`` writing) to finish. asyncio's
runner did this until now, and reported it as a KeyboardInterrupt on Python 3.11 only:
on 3.10 (anyio's copy of the runner) the same cancellation ended the process with a
``CancelledError`` traceback, and telling the interrupt's teardown errors from a crash
took ``Task.cancelling()``, which 3.10 lacks. Here the interrupt is recorded when it
comes, the same way on every version. Nothing here imports the SDK.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Interrupt:
    """Whether SIGINT stopped the serving (:meth:`cancelling`)."""

    def __init__(self) -> None:
        self.seen = False

    @contextmanager
    def cancelling(self, scope: Any) -> Iterator[None]:
        """Meanwhile, SIGINT cancels ``scope`` (an anyio cancel scope) and is recorded; a
        second one ends the process outright, as SIGTERM does (a write it cuts short is
        repaired by the next one, docs/scaling.md). A loop that cannot receive signals
        (Windows's) leaves SIGINT to Python: a KeyboardInterrupt. A SIGINT ignored by
        whoever started the server (nohup, a background job of a script) stays ignored."""
        import asyncio

        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            yield
            return
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, self._stop, loop, scope)
        except (NotImplementedError, RuntimeError):
            yield
            return
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGINT)  # Python's handler again, if not _stop's

    def _stop(self, loop: Any, scope: Any) -> None:
        self.seen = True
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        scope.cancel()


def stop_at_start() -> Any:
    """Until the event loop receives SIGINT (:meth:`Interrupt.cancelling`), have one
    exit 130 as it would once serving (~0.7 s: reading the command line, opening the
    memory, importing the SDK, building the server), not with click's "Aborted!" and
    exit 1; nothing is written meanwhile. A SIGINT ignored by whoever started the server
    (nohup) stays ignored. The handler it replaces."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, stopped_at_start)
    return previous


#: Set when SIGINT stopped the server before it served (:func:`stopped_at_start`): the
#: SystemExit raised then may reach the command's boundary wrapped in a library's own
#: error (pydantic building a schema re-raised it as a ``SchemaError``), which the
#: boundary then reports as this interrupt, exit 130, not as "internal error".
STOPPED = False


def stopped_at_start(signum: int, frame: Any) -> None:
    global STOPPED
    STOPPED = True
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a second Ctrl-C meanwhile: the process ends
    say_stopped()
    raise SystemExit(130)  # not a KeyboardInterrupt: one raised in eval() makes the exit status -2


def say_stopped() -> None:
    """Say on stderr that SIGINT ended the server: on a terminal, on a line of its own
    after the ``^C`` the terminal echoed."""
    on_a_terminal = sys.stdin is not None and sys.stdin.isatty()
    sys.stderr.write("\nscarwarden mcp: stopped\n" if on_a_terminal else "scarwarden mcp: interrupted\n")
    sys.stderr.flush()
