"""Reading recorded runs a conversation at a time: a JSON array or JSON lines, streamed.

A recorded-run file can be large (a benchmark's whole log); it is never read whole.
:func:`items` yields the top-level elements of a JSON array (or the lines of a JSON-lines
file) one by one, holding at most one element and one read chunk in memory. An element
over :data:`MAX_ITEM_BYTES` and a file over :data:`MAX_FILE_BYTES` are refused with
their position, before anything is written.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import IO, Any

from scarwarden.errors import Problem, ValidationError
from scarwarden.files.input_policy import encoding_problems_in

#: The largest single conversation (one array element or one line).
MAX_ITEM_BYTES = 8 * 1024 * 1024
#: The largest file an import reads (it is streamed; this bounds one commit's batch).
MAX_FILE_BYTES = 256 * 1024 * 1024
_CHUNK = 1 << 20
_ONE_A_LINE = (
    "JSON lines hold one whole JSON value a line; a conversation or record written over "
    "several lines goes in a JSON list: [{...}]"
)
#: The characters that change the scanner's state inside an array.
_SIGNIFICANT = re.compile(r'["\\\[\]{},]')


def items(stream: IO[bytes], source: str) -> Iterator[tuple[int, Any]]:
    """(1-based position, parsed element) of every conversation or record in ``stream``.

    A file whose first non-blank character is ``[`` is a JSON array, unless its first
    line is a whole JSON value (of at most :data:`_CHUNK` bytes, so memory stays bounded)
    and more lines follow: JSON lines whose lines are lists (a conversation is a list of
    messages). Anything else is JSON lines (one JSON value per non-blank line)."""
    first, line, offset = _first_char(stream, source)
    if first == b"":
        return
    if offset == 0 and first in (b"\xff", b"\xfe", b"\x1f"):
        first += stream.read(1)
        _refuse_kind(first, source)
    if first != b"[":
        yield from _lines(stream, source, first, line, offset=offset)
        return
    head = first + stream.readline(_CHUNK)
    whole = head.endswith(b"\n") or len(head) <= _CHUNK  # else the line goes on
    try:
        whole = whole and json.loads(head.decode("utf-8")) is not None
    except (ValueError, RecursionError):
        whole = False
    if whole:
        after, skipped, at = _first_char(stream, source, offset + len(head))
        if after:  # a second line: JSON lines
            yield 1, _parse(head.decode("utf-8"), source, 1, line)
            yield from _lines(stream, source, after, line + skipped, number=1, offset=at)
            return
    yield from _array(stream, source, head[1:], offset + 1)


def _first_char(stream: IO[bytes], source: str, offset: int = 0) -> tuple[bytes, int, int]:
    """The first character that is not blank (or a UTF-8 byte order mark), its line and
    its byte offset (from ``offset``). An EF that begins no byte order mark is returned
    with the two bytes after it, for the decoding to judge (EF BB alone is not UTF-8).
    Blanks count towards the file's cap: a pipe of endless blank lines ends."""
    line = 1
    while True:
        if offset > MAX_FILE_BYTES:
            raise _too_big("the file", offset, MAX_FILE_BYTES, source)
        char = stream.read(1)
        if char == b"\xef":
            rest = stream.read(2)
            if rest != b"\xbb\xbf":
                return char + rest, line, offset
            offset += 3
            continue
        if char == b"" or not char.isspace():
            return char, line, offset
        offset += 1
        line += char == b"\n"


def _refuse_kind(magic: bytes, source: str) -> None:
    """A file that begins as UTF-16 text or gzip data does is named for what it is."""
    name = "FILE" if source.startswith("<") else source  # <stdin>
    if magic in (b"\xff\xfe", b"\xfe\xff"):
        raise ValidationError(
            f"{source} is UTF-16 (its byte order mark says so), not UTF-8; nothing was written",
            hint=f"convert it on the way in: iconv -f UTF-16 -t UTF-8 {name} | "
            "scarwarden episode import ... -",
        )
    if magic == b"\x1f\x8b":
        raise ValidationError(
            f"{source} is gzip-compressed; nothing was written",
            hint=f"decompress it on the way in: gunzip -c {name} | scarwarden episode import ... -",
        )


def _too_big(what: str, size: int, limit: int, source: str) -> ValidationError:
    return ValidationError(
        f"{source}: {what} is over the {limit // 1024:,} KiB cap (at least {size:,} bytes); "
        "nothing was written",
        hint="split the file (one import per part), or leave long tool results out",
    )


def _parse(text: str, source: str, number: int, line: int | None = None) -> Any:
    where = f"line {line}" if line is not None else f"item {number}"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        # A few thousand '[' exhaust json's recursion: input, not a bug.
        reason = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
        raise ValidationError(
            f"{source}: {where} is not valid JSON; nothing was written",
            problems=[Problem(reason, file=source, line=line)],
            hint=None if line is None else _ONE_A_LINE,  # json.dump(..., indent=2) is not JSON lines
        ) from None
    # A "\\ud800" escape parses to a lone surrogate: refused here, with its place, not
    # by the first hash or file that cannot encode it.
    surrogate = next(encoding_problems_in(value), None)
    if surrogate is not None:
        path, reason = surrogate
        raise ValidationError(f"{source}: {where}: {path or 'the value'} {reason}; nothing was written")
    return value


def _lines(
    stream: IO[bytes], source: str, first: bytes, lineno: int, number: int = 0, offset: int = 0
) -> Iterator[tuple[int, Any]]:
    """One JSON value per non-blank line (numbered after ``number``; ``first`` at byte
    ``offset``); a line is read at most MAX_ITEM_BYTES at a time, so a file with no line
    breaks cannot fill memory."""
    total = 0
    raw = first + stream.readline(MAX_ITEM_BYTES + 1)
    while raw:
        total += len(raw)
        if total > MAX_FILE_BYTES:
            raise _too_big("the file", total, MAX_FILE_BYTES, source)
        if len(raw) > MAX_ITEM_BYTES:
            raise _too_big(f"line {lineno}", len(raw), MAX_ITEM_BYTES, source)
        text = _decode(raw, source, lineno, offset + total - len(raw)).strip()
        if text:
            number += 1
            yield number, _parse(text, source, number, lineno)
        lineno += 1
        raw = stream.readline(MAX_ITEM_BYTES + 1)


def _decode(raw: bytes, source: str, line: int, offset: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(source, f"line {line}", raw[exc.start], offset + exc.start) from None


def _not_utf8(source: str, where: str, byte: int, offset: int) -> ValidationError:
    return ValidationError(
        f"{source}: {where} is not UTF-8 (byte 0x{byte:02X} at offset {offset}); nothing was written",
        hint="save the file as UTF-8",
    )


def _array(stream: IO[bytes], source: str, pending: bytes, offset: int) -> Iterator[tuple[int, Any]]:
    """The elements of a top-level array (``pending``: what was read after its ``[``, at
    byte ``offset``), found by a scanner that tracks strings and depth."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    buf = ""
    start = pos = depth = number = 0  # start: where the current element begins in buf
    skip = -1  # the index in buf of a character a backslash escapes
    in_string = False
    total = 1
    while True:
        chunk, pending = pending or stream.read(_CHUNK), b""
        chunk_at = offset + total - 1  # where the chunk begins in the file
        total += len(chunk)
        if total > MAX_FILE_BYTES:
            raise _too_big("the file", total, MAX_FILE_BYTES, source)
        if not chunk:
            raise ValidationError(
                f"{source}: the JSON array is not closed (the file ends early); nothing was written"
            )
        buf = buf[start:] + _decoded(decoder, chunk, source, chunk_at)
        pos, skip, start = pos - start, skip - start, 0
        for match in _SIGNIFICANT.finditer(buf, pos):
            at, char = match.start(), match.group()
            if in_string:
                if at == skip:
                    continue
                if char == "\\":
                    skip = at + 1
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char in "[{":
                depth += 1
            elif char in "]}" and depth > 0:
                depth -= 1
            elif depth == 0:  # "," or the array's "]"
                if at - start > MAX_ITEM_BYTES:
                    raise _too_big(f"item {number + 1}", at - start, MAX_ITEM_BYTES, source)
                element = buf[start:at].strip()
                if element:
                    number += 1
                    yield number, _parse(element, source, number)
                elif char == "," or number:
                    raise ValidationError(
                        f"{source}: item {number + 1} of the array is empty; nothing was written"
                    )
                start = at + 1
                if char == "]":
                    _expect_end(stream, decoder, buf[start:], source, offset + total - 1)
                    return
        pos = len(buf)
        if pos - start > MAX_ITEM_BYTES:
            raise _too_big(f"item {number + 1}", pos - start, MAX_ITEM_BYTES, source)


def _decoded(
    decoder: codecs.IncrementalDecoder, chunk: bytes, source: str, offset: int, final: bool = False
) -> str:
    """``chunk`` (read at byte ``offset``) decoded after what ``decoder`` holds back
    (``final``: at the file's end, where a character cut short is not UTF-8)."""
    held = decoder.getstate()[0]
    try:
        return decoder.decode(chunk, final)
    except UnicodeDecodeError as exc:
        data = held + chunk
        raise _not_utf8(source, "the file", data[exc.start], offset - len(held) + exc.start) from None


def _expect_end(
    stream: IO[bytes], decoder: codecs.IncrementalDecoder, rest: str, source: str, offset: int
) -> None:
    """Only blanks may follow the array's closing bracket (the file read up to ``offset``)."""
    while True:
        if rest.strip():
            raise ValidationError(f"{source}: text after the JSON array's end; nothing was written")
        if offset > MAX_FILE_BYTES:  # blanks too: a pipe of endless blank lines ends
            raise _too_big("the file", offset, MAX_FILE_BYTES, source)
        chunk = stream.read(_CHUNK)
        rest = _decoded(decoder, chunk, source, offset, final=not chunk)
        if not chunk:
            return
        offset += len(chunk)
