"""The text an image carries besides its pixels, for the secret scanner.

PNG ``tEXt``/``zTXt``/``iTXt`` chunks, JPEG comments and APP segments (Exif, XMP,
IPTC), WebP ``EXIF``/``XMP `` chunks and GIF comment extensions can hold any text: a
screenshot tool writes the window title, an exporter the command line, a careless
script a token. :func:`image_texts` gives that text back (the readable runs of binary
segments), so the gate screens an attached image as it screens an episode.
Called only on images already checked whole (:func:`scarwarden.files.media.check_image`).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator

#: Readable runs in a binary segment (Exif, IPTC): 8 characters or more.
_RUNS = re.compile(rb"[\x20-\x7e\t\r\n]{8,}")
#: Decompress no more than this from one compressed chunk (a zip bomb stays small).
_MAX_TEXT = 1 << 20


def image_texts(data: bytes, kind: str) -> list[str]:
    """Every piece of text metadata in an image of format ``kind`` (png, jpg, webp, gif)."""
    reader = {"png": _png, "jpg": _jpeg, "webp": _webp, "gif": _gif}.get(kind)
    return [t for t in reader(data) if t.strip()] if reader else []


def _runs(raw: bytes) -> Iterator[str]:
    for match in _RUNS.finditer(raw):
        yield match.group().decode("ascii")


def _inflate(raw: bytes) -> bytes:
    import zlib

    try:
        return zlib.decompressobj().decompress(raw, _MAX_TEXT)
    except zlib.error:
        return b""


def _png(data: bytes) -> Iterator[str]:
    pos = 8
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"tEXt":
            yield body.replace(b"\0", b": ", 1).decode("latin-1")
        elif kind == b"zTXt":
            key, _sep, rest = body.partition(b"\0")
            yield key.decode("latin-1") + ": " + _inflate(rest[1:]).decode("latin-1")
        elif kind == b"iTXt":
            key, _sep, rest = body.partition(b"\0")
            compressed, rest = rest[:1] == b"\1", rest[2:]
            _lang, _sep, rest = rest.partition(b"\0")
            _translated, _sep, text = rest.partition(b"\0")
            raw = _inflate(text) if compressed else text
            yield key.decode("latin-1") + ": " + raw.decode("utf-8", "replace")
        elif kind == b"eXIf":
            yield from _runs(body)
        elif kind == b"IEND":
            return


def _jpeg(data: bytes) -> Iterator[str]:
    pos = 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        if marker in (0xDA, 0xD9):  # image data, or the end: no metadata after it
            return
        if marker == 0xFF or 0xD0 <= marker <= 0xD7:
            pos += 1 if marker == 0xFF else 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        body = data[pos + 4 : pos + 2 + length]
        if marker == 0xFE:
            yield body.decode("utf-8", "replace")
        elif 0xE1 <= marker <= 0xEF:  # APP1 (Exif, XMP) .. APP15; APP0 is JFIF's header
            yield from _runs(body)
        pos += 2 + length


def _webp(data: bytes) -> Iterator[str]:
    pos = 12
    while pos + 8 <= len(data):
        kind = data[pos : pos + 4]
        (length,) = struct.unpack("<I", data[pos + 4 : pos + 8])
        if kind in (b"EXIF", b"XMP "):
            yield from _runs(data[pos + 8 : pos + 8 + length])
        pos += 8 + length + (length & 1)


def _gif(data: bytes) -> Iterator[str]:
    # Comment extensions (0x21 0xFE) hold text; found by their label, then sub-blocks.
    start = 0
    while (i := data.find(b"\x21\xfe", start)) >= 0:
        pos, parts = i + 2, []
        while pos < len(data) and data[pos]:
            size = data[pos]
            parts.append(data[pos + 1 : pos + 1 + size])
            pos += 1 + size
        yield b"".join(parts).decode("latin-1")
        start = pos + 1
