"""What a command prints, without importing click: the subset of ``click.style`` and
``click.echo`` that the click-free recall door (:mod:`scarwarden.cli.door`) prints with,
and the one JSON form every ``--json`` prints.

Byte for byte what click writes (tests/cli/test_door.py compares them): ``style`` emits
click's escape codes in click's order, and ``echo`` strips them, as click does, when the
stream is not a terminal. Importing click costs a cold process ~80M instructions
(``inspect``, ``uuid``, ``gettext``...): more than a whole recall at 1k rules.
"""

from __future__ import annotations

import re
import sys

from scarwarden.characters import SURROGATE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

#: click's ``_ansi_colors``, for the colours Scarwarden prints.
_COLOURS = {"red": 31, "green": 32, "yellow": 33, "blue": 34, "magenta": 35, "cyan": 36}
#: click's ``_ansi_re``: what ``click.unstyle`` and a non-terminal ``echo`` remove.
_ANSI = re.compile(r"\033\[[0-?]*[ -/]*[@-~]")


def style(text: str, fg: str | None = None, bold: bool | None = None, dim: bool | None = None) -> str:
    """``click.style(text, fg=fg, bold=bold, dim=dim)``."""
    bits = []
    if fg:
        bits.append(f"\033[{_COLOURS[fg]}m")
    if bold is not None:
        bits.append(f"\033[{1 if bold else 22}m")
    if dim is not None:
        bits.append(f"\033[{2 if dim else 22}m")
    bits.append(text)
    bits.append("\033[0m")
    return "".join(bits)


def strip_ansi(text: str) -> str:
    """``text`` without its style codes (``click.unstyle``)."""
    return _ANSI.sub("", text)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except Exception:  # noqa: BLE001 - click's isatty: a stream that cannot say is no terminal
        return False


def echo(text: str = "", *, err: bool = False) -> None:
    """``click.echo(text, err=err)`` on a UTF-8 stream: the line, styles stripped when the
    stream is not a terminal, flushed. Looked up at each call, as click does, so a
    redirected ``sys.stdout`` is honoured."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # no stream attached (click: nothing written)
        return
    out = text + "\n"
    if not _isatty(stream):
        out = strip_ansi(out)
    stream.write(out)
    stream.flush()


def utf8_streams() -> bool:
    """Whether stdout and stderr are UTF-8 text streams, the only ones :func:`echo`
    writes as click would (click re-wraps an ASCII-configured stream)."""
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if not isinstance(encoding, str) or encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
            return False
    return True


def json_text(data: Any) -> str:
    """Machine output: stable, sorted-as-given keys, UTF-8, one document. A lone
    surrogate (a path that is not UTF-8) is written as its JSON escape (``\\udce9``),
    as ``ensure_ascii`` would: written raw it was a byte that made the whole document
    invalid UTF-8."""
    import json  # only --json needs it; the hook imports this module on every commit

    text = json.dumps(data, indent=2, ensure_ascii=False)
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
