"""SIGINT (Ctrl-C, a client stopping the server), SIGTERM (the SDK's stdio client
~2 s after closing stdin, a supervisor, a container runtime) and SIGHUP (the terminal
closed) in ``scarwarden mcp``: exit 130, 143 or 129 (128 + the signal) at any moment, a
tool call already running finished first (docs/mcp.md).

While serving, the event loop receives both signals and cancels the serving, which
waits for a tool running on a worker thread (a ``record_episode`` writing) to finish.
asyncio's runner did this for SIGINT until now, and reported it as a KeyboardInterrupt
on Python 3.11 only: on 3.10 (anyio's copy of the runner) the same cancellation ended
the process with a ``CancelledError`` traceback, and telling the interrupt's teardown
errors from a crash took ``Task.cancelling()``, which 3.10 lacks. Here the signal is
recorded when it comes, the same way on every version; SIGTERM, left to its default,
ended the process outright even mid-write. Nothing here imports the SDK.
"""

from __future__ import annotations

import os
import signal
import sys
from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~5 ms, before the console script can install the handler
    from collections.abc import Iterator
    from typing import Any

#: The signals that stop the server once the tool call running has finished: SIGHUP
#: too (the terminal closed, an ssh session dropped), which has no number on Windows.
STOPS: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM) + (
    (signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ()
)

#: What the server says when a signal other than SIGINT ended it.
_SAID = {signal.SIGTERM: "terminated", getattr(signal, "SIGHUP", -1): "hung up"}


class Interrupt:
    """Which signal stopped the serving, if one did (:meth:`cancelling`)."""

    def __init__(self) -> None:
        self.signum: int | None = None

    @property
    def seen(self) -> bool:
        return self.signum is not None

    @contextmanager
    def cancelling(self, scope: Any) -> Iterator[None]:
        """Meanwhile, SIGINT, SIGTERM or SIGHUP (:data:`STOPS`) cancels ``scope`` (an
        anyio cancel scope) and is recorded; a second one ends the process outright, as
        SIGKILL does (a write it cuts short is repaired by the next one,
        docs/scaling.md). A loop that cannot receive signals (Windows's) leaves them to
        Python: SIGINT a KeyboardInterrupt. A signal ignored by whoever started the
        server (nohup, a background job of a script) stays ignored."""
        import asyncio

        loop = asyncio.get_running_loop()
        caught: list[int] = []
        try:
            for signum in STOPS:
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    loop.add_signal_handler(signum, self._stop, signum, loop, scope, caught)
                    caught.append(signum)
        except (NotImplementedError, RuntimeError):
            pass
        try:
            yield
        finally:
            for signum in caught:  # Python's handler again, if not _stop's
                loop.remove_signal_handler(signum)

    def _stop(self, signum: int, loop: Any, scope: Any, caught: list[int]) -> None:
        self.signum = signum
        for each in caught:
            loop.remove_signal_handler(each)
            signal.signal(each, signal.SIG_DFL)
        scope.cancel()


def stop_at_start() -> dict[int, Any]:
    """Until the event loop receives the stop signals (:meth:`Interrupt.cancelling`),
    have one exit 130, 143 or 129 as it would once serving (~0.7 s: reading the command
    line, opening the memory, importing the SDK, building the server), not with click's
    "Aborted!" and exit 1 (:func:`stopped_at_start`). A signal ignored by whoever
    started the server (nohup) stays ignored. The handlers it replaces, by signal."""
    previous: dict[int, Any] = {signum: signal.getsignal(signum) for signum in STOPS}
    for signum, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(signum, stopped_at_start)
    return previous


def stopped_at_start(signum: int, frame: Any) -> None:
    """Say it, then end the process at once with 128 + the signal: as a kill would,
    which every write survives (a killed write is undone by the next one). Not by
    raising SystemExit, which lands wherever the start was, inside a library's import
    or its C code: pydantic building a schema re-raised it as its own error ("internal
    error", exit 1), and on Python 3.13 the process once hung instead of exiting."""
    for each in STOPS:  # a second signal meanwhile: the process ends
        if signal.getsignal(each) is stopped_at_start:
            signal.signal(each, signal.SIG_DFL)
    say_stopped(signum)
    os._exit(128 + signum)


def say_stopped(signum: int = signal.SIGINT) -> None:
    """Say on stderr that a signal ended the server: SIGINT on a terminal on a line of
    its own after the ``^C`` the terminal echoed. A terminal that hung up (SIGHUP) takes
    nothing more: then nothing is said."""
    if signum != signal.SIGINT:
        said = f"scarwarden mcp: {_SAID.get(signum, 'terminated')}\n"
    elif sys.stdin is not None and sys.stdin.isatty():
        said = "\nscarwarden mcp: stopped\n"
    else:
        said = "scarwarden mcp: interrupted\n"
    try:
        sys.stderr.write(said)
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr was the terminal that closed (EIO)
        pass
