"""Images attached to episodes: ``memory/media/<sha256>.<ext>`` (issue 19).

An image is stored once, named by the SHA-256 of its bytes, however many episodes
attach it; an episode lists it as ``attachments: [sha256:<hex>]``. The file's *format*
is read from its first bytes (PNG, JPEG, WebP, GIF), never from its name, and its
structure is checked far enough to refuse a truncated file: a PNG must run chunk by
chunk to ``IEND``, a JPEG end with ``EOI``, a GIF with its trailer, a WebP's RIFF size
must match. SVG is refused outright: it is XML that can carry scripts.

No image library is needed for any of this (Pillow is only the optional ``vision``
extra, for resizing before a model call: :mod:`scarwarden.answers.visual`).

A fleet may keep the media folder in Git LFS: git then stores a small *pointer* (the
image's SHA-256 and size) instead of the bytes. :func:`lfs_pointer` recognises one
without git-lfs installed, so the gate can check what a pointer says (docs/formats.md).
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from scarwarden.errors import ValidationError

#: Folder under the memory folder.
MEDIA_DIR = "media"
#: ``attachments`` items: ``sha256:`` and 64 lower-case hex digits.
ATTACHMENT_RE = re.compile(r"^sha256:[0-9a-f]{64}\Z")
#: A stored media file's name.
MEDIA_NAME_RE = re.compile(r"^([0-9a-f]{64})\.(png|jpg|webp|gif)\Z")
MIME = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}
FORMATS_HINT = "attach a PNG, JPEG, WebP or GIF image"
#: Git LFS pointer versions (the spec's, and the pre-1.0 one git-lfs still reads).
LFS_VERSIONS = ("https://git-lfs.github.com/spec/v1", "https://hawser.github.com/spec/v1")
#: The LFS spec: a pointer file is smaller than 1024 bytes.
LFS_POINTER_MAX = 1023
_LFS_OID_RE = re.compile(r"sha256:([0-9a-f]{64})\Z")
_LFS_KEY_RE = re.compile(r"[a-z0-9.-]+\Z")
#: Markup no image holds: an image that does is a page in disguise (a polyglot).
_MARKUP = re.compile(rb"(?i)<(?:html|script|body|iframe|\?php|!doctype html|svg[\s>])")


@dataclass(frozen=True)
class Image:
    """A checked image: its bytes, format and digest."""

    data: bytes
    ext: str
    sha256: str
    #: Frames in a GIF (1 for every other format).
    frames: int = 1

    @property
    def mime(self) -> str:
        return MIME[self.ext]

    @property
    def name(self) -> str:
        return f"{self.sha256}.{self.ext}"

    @property
    def attachment(self) -> str:
        return f"sha256:{self.sha256}"


@dataclass(frozen=True)
class LfsPointer:
    """A Git LFS pointer: the SHA-256 and size of content kept outside git."""

    oid: str
    size: int


def lfs_pointer(data: bytes) -> LfsPointer | None:
    """The Git LFS pointer ``data`` is, or None when it is anything else.

    The spec (github.com/git-lfs/git-lfs, docs/spec.md): ``key value`` lines, each
    ending in a newline, ``version`` first and the other keys sorted; ``oid
    sha256:<hex>`` and ``size <bytes>`` required; under 1024 bytes in all."""
    if len(data) > LFS_POINTER_MAX or not data.startswith(b"version ") or not data.endswith(b"\n"):
        return None
    try:
        lines = data.decode("ascii")[:-1].split("\n")
    except UnicodeDecodeError:
        return None
    pairs = [line.partition(" ") for line in lines]
    keys = [key for key, _sep, _value in pairs]
    if any(not sep or not _LFS_KEY_RE.match(key) for key, sep, _v in pairs) or keys[1:] != sorted(
        set(keys[1:])
    ):
        return None
    values = {key: value for key, _sep, value in pairs}
    oid = _LFS_OID_RE.match(values.get("oid", ""))
    size = values.get("size", "")
    if values["version"] not in LFS_VERSIONS or oid is None or not (size.isascii() and size.isdigit()):
        return None
    return LfsPointer(oid.group(1), int(size))


def media_rel(memory_rel: str) -> str:
    return f"{memory_rel}/{MEDIA_DIR}"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sniff(data: bytes) -> str | None:
    """The format the first bytes say (``png``, ``jpg``, ``webp``, ``gif``, ``svg``), or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<?xml", b"<svg", b"<!doctype svg")) and b"<svg" in data[:4096].lower():
        return "svg"
    return None


def check_image(data: bytes, *, source: str, max_bytes: int) -> Image:
    """Check ``data`` is a whole image of an accepted format within the size cap.

    Raises :class:`ValidationError` naming ``source`` and what is wrong."""
    if len(data) > max_bytes:
        raise ValidationError(
            f"{source}: {_mb(len(data))} is over the media size cap of {_mb(max_bytes)}",
            hint="resize or compress it, or raise media.max_bytes in scarwarden.yaml "
            "(large fleets: keep memory/media in Git LFS, docs/formats.md#media)",
        )
    kind = sniff(data)
    if kind == "svg":
        raise ValidationError(
            f"{source}: SVG is refused: it is XML that can carry scripts",
            hint="export it as PNG first, e.g. rsvg-convert -o card.png card.svg",
        )
    if kind is None:
        raise ValidationError(
            f"{source}: not an image Scarwarden accepts (its first bytes are no PNG, JPEG, WebP or GIF)",
            hint=f"{FORMATS_HINT}; the format is read from the content, never from the file name",
        )
    problem, frames = _STRUCTURE[kind](data)
    markup = None if problem else _MARKUP.search(data)
    if markup is not None:
        raise ValidationError(
            f"{source}: a {kind.upper()} that carries markup ({markup.group().decode('latin-1')}...): "
            "a browser may run it as a page",
            hint="export the image again from an image editor; an image never holds HTML or scripts",
        )
    if problem:
        raise ValidationError(
            f"{source}: a damaged {kind.upper()}: {problem}",
            hint="the file is truncated or corrupt; export it again",
        )
    return Image(data, kind, digest(data), frames)


def read_image(path: Path, *, max_bytes: int) -> Image:
    """Read and check an image file (a clear error for a missing or unreadable one)."""
    try:
        size = path.stat().st_size
        if size > max_bytes:  # before reading 50 MB into memory
            return _too_big(path, size, max_bytes)
        data = path.read_bytes()
    except FileNotFoundError:
        raise ValidationError(f"{path}: no such file", hint="give the path of an image file") from None
    except IsADirectoryError:
        raise ValidationError(f"{path} is a folder, not an image file") from None
    except OSError as exc:
        raise ValidationError(f"cannot read {path}: {exc.strerror}") from None
    return check_image(data, source=str(path), max_bytes=max_bytes)


def _too_big(path: Path, size: int, max_bytes: int) -> Image:
    raise ValidationError(
        f"{path}: {_mb(size)} is over the media size cap of {_mb(max_bytes)}",
        hint="resize or compress it, or raise media.max_bytes in scarwarden.yaml",
    )


def _mb(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size} bytes"


# -- structure --------------------------------------------------------------------------


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


_STRUCTURE = {"png": _png, "jpg": _jpeg, "webp": _webp, "gif": _gif}


# -- storing ----------------------------------------------------------------------------


def store(root: Path, memory_rel: str, images: Iterable[Image]) -> list[str]:
    """Write each image to ``memory/media/<sha256>.<ext>`` unless it is there already;
    return the paths written (relative to ``root``), for staging and for undoing."""
    from scarwarden.files.atomic import atomic_write

    written: list[str] = []
    for image in images:
        rel = f"{media_rel(memory_rel)}/{image.name}"
        target = root / rel
        if rel in written or (target.is_file() and digest(target.read_bytes()) == image.sha256):
            continue  # one copy however often it is attached
        written.append(rel)
        atomic_write(target, image.data)
    return written


def find_stored(root: Path, memory_rel: str, attachment: str) -> Path | None:
    """The stored file of ``sha256:<hex>`` in the working folder, if there is one."""
    sha = attachment.removeprefix("sha256:")
    for ext in MIME:
        path = root / media_rel(memory_rel) / f"{sha}.{ext}"
        if path.is_file():
            return path
    return None
