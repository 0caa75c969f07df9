"""The structure of an image file, walked without an image library (issue 19): far
enough to refuse a truncated or padded file, and to read the size its header gives.

A PNG must run chunk by chunk to ``IEND``, a JPEG segment by segment to its
end-of-image marker (with a frame header first), a GIF block by block to its trailer;
a WebP's RIFF size must match its file. :func:`dimensions` reads width and height where
each format keeps them, so :func:`scarwarden.files.media.check_image` can refuse an
image of zero pixels or a decompression bomb (a small file that declares a huge image)
before anything decodes it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

#: The most pixels an image may declare: Pillow's own limit (``Image.MAX_IMAGE_PIXELS``,
#: about 9,459 x 9,459), above which it warns of a decompression bomb (and at twice
#: which it refuses to open the file at all).
MAX_PIXELS = 89_478_485


def _png(data: bytes) -> tuple[str | None, int]:
    pos, first = 8, True
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if first and kind != b"IHDR":
            return "the first chunk is not IHDR", 1
        first = False
        end = pos + 12 + length
        if end > len(data):
            return f"chunk {kind.decode('latin-1')!r} runs past the end of the file", 1
        if kind == b"IEND":
            return (_APPENDED.format(what="its IEND chunk") if end != len(data) else None), 1
        pos = end
    return "it ends before its IEND chunk", 1


#: A file after the image's end: a polyglot (a PNG that is also a ZIP, a script).
_APPENDED = "{what} is followed by more bytes (another file appended to the image?)"
#: JPEG start-of-frame markers (SOF0-SOF15 but DHT, JPG and DAC).
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg(data: bytes) -> tuple[str | None, int]:
    """Walk the segments to the end-of-image marker: a frame header before the image
    data, every segment inside the file, nothing after EOI but padding or another whole
    JPEG (the second picture of an MPF file, as phones write them)."""
    end, problem = _jpeg_end(data)
    if problem:
        return problem, 1
    rest = data[end:]
    if rest.startswith(b"\xff\xd8\xff"):
        return _jpeg(rest)
    if rest.strip(b"\0\r\n "):
        return _APPENDED.format(what="its end-of-image marker"), 1
    return None, 1


def _jpeg_end(data: bytes) -> tuple[int, str | None]:
    """(the position after EOI, None) or (0, what is wrong)."""
    pos, frame, n = 2, False, len(data)
    while pos + 2 <= n:
        if data[pos] != 0xFF:
            return 0, f"no segment marker at byte {pos}"
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker == 0xD9:
            return pos + 2, None
        if 0xD0 <= marker <= 0xD7 or marker == 0x01:
            pos += 2
            continue
        if pos + 4 > n:
            break
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if length < 2 or pos + 2 + length > n:
            return 0, f"segment 0x{marker:02x} at byte {pos} runs past the end of the file"
        frame = frame or marker in _SOF
        pos += 2 + length
        if marker == 0xDA:
            if not frame:
                return 0, "image data before its frame header"
            pos = _scan_data_end(data, pos)
    return 0, "it does not end with the JPEG end-of-image marker"


def _scan_data_end(data: bytes, pos: int) -> int:
    """The position of the marker that ends a scan's entropy-coded data (``len(data)``
    when there is none): an 0xFF not followed by a stuffed zero or a restart marker."""
    while True:
        i = data.find(b"\xff", pos)
        if i < 0 or i + 1 >= len(data):
            return len(data)
        nxt = data[i + 1]
        if nxt == 0 or 0xD0 <= nxt <= 0xD7:
            pos = i + 2
        elif nxt == 0xFF:
            pos = i + 1
        else:
            return i


def _webp(data: bytes) -> tuple[str | None, int]:
    (size,) = struct.unpack("<I", data[4:8])
    if size + 8 != len(data):
        return f"its RIFF header says {size + 8} bytes, the file has {len(data)}", 1
    return None, 1


def _gif(data: bytes) -> tuple[str | None, int]:
    """Walk the GIF's blocks (header, colour table, extensions, images) to its trailer."""
    if len(data) < 13:
        return "it ends inside its header", 0
    flags = data[10]
    pos = 13 + (3 * 2 ** ((flags & 7) + 1) if flags & 0x80 else 0)
    frames = 0
    while pos < len(data):
        marker = data[pos]
        if marker == 0x3B:
            if pos + 1 != len(data):
                return _APPENDED.format(what="its trailer"), frames
            return (None if frames else "it holds no image"), frames
        if marker == 0x21:  # extension: label, then sub-blocks
            pos = _skip_blocks(data, pos + 2)
        elif marker == 0x2C:  # image descriptor, local colour table, LZW size, sub-blocks
            if pos + 10 > len(data):
                break
            local = data[pos + 9]
            pos += 10 + (3 * 2 ** ((local & 7) + 1) if local & 0x80 else 0)
            pos = _skip_blocks(data, pos + 1)
            frames += 1
        else:
            return f"an unknown block 0x{marker:02x} at byte {pos}", frames
        if pos < 0:
            break
    return "it ends before its trailer", frames


def _skip_blocks(data: bytes, pos: int) -> int:
    """The position after a chain of sub-blocks ending in a zero-length one; -1 if cut."""
    while pos < len(data):
        size = data[pos]
        pos += 1 + size
        if size == 0:
            return pos
    return -1


STRUCTURE = {"png": _png, "jpg": _jpeg, "webp": _webp, "gif": _gif}


def dimensions(kind: str, data: bytes) -> tuple[int, int] | None:
    """(width, height) as the header of a structurally whole image of ``kind`` says,
    or ``None`` when it declares no image (a JPEG without a frame header, a WebP
    without an image chunk)."""
    return _SIZES[kind](data)


def _png_size(data: bytes) -> tuple[int, int] | None:
    # The first chunk is IHDR (checked by _png); its data opens with width, height.
    if len(data) < 24:
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """The size in the first frame header (SOFn: precision, height, width)."""
    pos, n = 2, len(data)
    while pos + 4 <= n:
        marker = data[pos + 1]
        if data[pos] != 0xFF or marker == 0xD9:
            return None
        if marker == 0xFF or 0xD0 <= marker <= 0xD7 or marker == 0x01:
            pos += 1 if marker == 0xFF else 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if marker in _SOF:
            if pos + 9 > n:
                return None
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return width, height
        pos += 2 + length
        if marker == 0xDA:
            pos = _scan_data_end(data, pos)
    return None


def _gif_size(data: bytes) -> tuple[int, int] | None:
    width, height = struct.unpack("<HH", data[6:10])  # the logical screen
    return width, height


def _webp_size(data: bytes) -> tuple[int, int] | None:
    """The size in the first chunk: VP8 (lossy), VP8L (lossless) or VP8X (extended)."""
    fourcc, body = data[12:16], data[20:30]
    if fourcc == b"VP8 " and len(body) >= 10 and body[3:6] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", body[6:10])
        return width & 0x3FFF, height & 0x3FFF
    if fourcc == b"VP8L" and len(body) >= 5 and body[0] == 0x2F:
        (bits,) = struct.unpack("<I", body[1:5])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if fourcc == b"VP8X" and len(body) >= 10:
        width = int.from_bytes(body[4:7], "little") + 1
        height = int.from_bytes(body[7:10], "little") + 1
        return width, height
    return None


_SIZES: dict[str, Callable[[bytes], tuple[int, int] | None]] = {
    "png": _png_size,
    "jpg": _jpeg_size,
    "gif": _gif_size,
    "webp": _webp_size,
}
