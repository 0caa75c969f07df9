"""Text a command reads from stdin or a file (a task, an answer, a draft): UTF-8 or a
usage error (exit 2) that names where it came from, never a crash wherever the text is
first written, and never a silent repair (docs/formats.md, "Text"). No click here: the
click-free recall door (:mod:`scarwarden.cli.door`) reads its ``-`` task through it."""

from __future__ import annotations

import sys
from typing import IO

from scarwarden.errors import UsageError

#: Started with stdin closed (``<&-``), Python has no ``sys.stdin`` at all.
CLOSED_HINT = "pipe the input in (cmd | scarwarden ...), or give it on the command line instead of -"


def decode_input(data: bytes, source: str) -> str:
    """``data`` decoded as UTF-8, without a byte order mark at its start (not text:
    docs/formats.md, "Text"); :class:`UsageError` naming ``source`` and the first byte
    that is not UTF-8."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{source} is not valid UTF-8 (the byte 0x{data[exc.start]:02X} at byte {exc.start + 1:,}); "
            "nothing was done",
            hint="give it as UTF-8 text (iconv -t UTF-8 converts other encodings)",
        ) from None


def read_stdin(what: str) -> str:
    """All of stdin as text, for ``what`` (``the task``, ``--answer``)."""
    if sys.stdin is None:
        raise UsageError(f"{what}: stdin is closed; nothing was done", hint=CLOSED_HINT)
    return decode_input(sys.stdin.buffer.read(), f"{what} read from stdin")


def read_file(file: IO[bytes], what: str) -> str:
    """All of ``file`` (a ``click.File("rb")``, ``-`` for stdin) as text, for ``what``."""
    name = getattr(file, "name", "-")
    source = f"{what} read from stdin" if name in ("-", "<stdin>") else f"{what} {name}"
    return decode_input(file.read(), source)
