"""The ``scarwarden`` logger, with the logging package imported on the first message.

Warnings (an index rebuilt, a file that could not be read, lineage counts unavailable)
go through the standard logging package, on the one logger ``scarwarden``; the CLI
prints them to stderr as ``scarwarden: <message>`` and a host program sees them on its
own handlers. Most runs log nothing, and the logging package (with traceback, string
and weakref) is ~4 ms of a cold start: a recall or a hook on a current index imports
none of it. Modules hold :data:`log`, which imports it on first use, and the CLI's
handler (:func:`when_used`) is installed at that moment.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging
    from typing import Any

NAME = "scarwarden"

#: Set-ups waiting for the logger (the CLI's stderr handler), run once when it is made.
_pending: list[Callable[[logging.Logger], None]] = []


#: Held while the set-ups run: a second thread's first message waits for the handler.
_setting_up = threading.Lock()


def _logger() -> logging.Logger:
    import logging

    logger = logging.getLogger(NAME)
    if _pending:
        with _setting_up:
            while _pending:
                try:  # listed until it has run: a thread meeting it meanwhile waits above
                    _pending[0](logger)
                finally:
                    _pending.pop(0)
    return logger


class _Proxy:
    """Forwards every attribute to the ``scarwarden`` logger, made on first use."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return getattr(_logger(), name)


#: The ``scarwarden`` logger (``log.warning(...)``, ``log.info(...)``).
if TYPE_CHECKING:
    log: logging.Logger
else:
    log = _Proxy()


def when_used(setup: Callable[[logging.Logger], None]) -> None:
    """Run ``setup(logger)`` now if the logging package is loaded, else before the
    first message: the CLI's handler costs nothing on a run that logs nothing."""
    if "logging" in sys.modules:
        setup(_logger())
    else:
        _pending.append(setup)
