"""Progress on a terminal, silence in a pipe (STYLE.md 7): a bar on stderr only when
stderr is a TTY, so logs, CI and ``| jq`` never see carriage returns."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

#: What library functions take: called with (done, total) as work advances.
Progress = Callable[[int, int], None]


@contextmanager
def progress_bar(label: str, *, stream: Any = None, quiet: bool = False) -> Iterator[Progress | None]:
    """Yields a ``progress(done, total)`` callback drawing a bar, or None off a TTY or
    when ``quiet`` (``--json``: a script reads the output, even on a terminal)."""
    out = stream if stream is not None else sys.stderr
    if quiet or not getattr(out, "isatty", lambda: False)():
        yield None
        return
    bar: Any = None
    shown = 0

    def advance(done: int, total: int) -> None:
        nonlocal bar, shown
        if bar is None:
            bar = click.progressbar(length=max(total, 1), label=label, file=out)
            bar.__enter__()
        elif total != bar.length:  # work found along the way (verify learns it as it walks)
            bar.length = max(total, 1)
        bar.update(done - shown)
        shown = done

    try:
        yield advance
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
