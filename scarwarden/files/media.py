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
from collections.abc import Iterable
from pathlib import Path

from scarwarden.errors import ValidationError
from scarwarden.files.media_structure import MAX_PIXELS as MAX_PIXELS
from scarwarden.files.media_structure import STRUCTURE, dimensions
from scarwarden.records import record
from scarwarden.regular_files import is_refusal, read_regular

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


@record(frozen=True)
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


@record(frozen=True)
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


def check_image(data: bytes, *, source: str, max_bytes: int, max_pixels: int | None = MAX_PIXELS) -> Image:
    """Check ``data`` is a whole image of an accepted format within the size caps: at
    most ``max_bytes`` bytes and ``max_pixels`` pixels (width x height, as its header
    says; ``None``: no cap), neither side zero.

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
    problem, frames = STRUCTURE[kind](data)
    markup = None if problem else _MARKUP.search(data)
    if markup is not None:
        raise ValidationError(
            f"{source}: a {kind.upper()} that carries markup ({markup.group().decode('latin-1')}...): "
            "a browser may run it as a page",
            hint="export the image again from an image editor; an image never holds HTML or scripts",
        )
    size = None if problem else dimensions(kind, data)
    if size is not None and 0 in size:
        problem = f"it says it is {size[0]:,} x {size[1]:,} pixels"
    elif problem is None and size is None:
        problem = "it holds no image" + (" chunk (VP8, VP8L or VP8X)" if kind == "webp" else " frame")
    if problem:
        raise ValidationError(
            f"{source}: a damaged {kind.upper()}: {problem}",
            hint="the file is truncated or corrupt; export it again",
        )
    assert size is not None
    if max_pixels is not None and size[0] * size[1] > max_pixels:
        raise ValidationError(
            f"{source}: an oversized {kind.upper()}: {size[0]:,} x {size[1]:,} pixels is over the "
            f"limit of {max_pixels:,} (an image that large cannot be read safely)",
            hint="resize it (a few thousand pixels on a side is plenty), then try again",
        )
    return Image(data, kind, digest(data), frames)


def read_image(path: Path, *, max_bytes: int) -> Image:
    """Read and check an image file (a clear error for a missing or unreadable one)."""
    try:
        size = path.stat().st_size
        if size > max_bytes:  # before reading 50 MB into memory
            return _too_big(path, size, max_bytes)
        data = read_regular(path)  # a FIFO is refused, not waited on for ever
    except FileNotFoundError:
        raise ValidationError(f"{path}: no such file", hint="give the path of an image file") from None
    except IsADirectoryError:
        raise ValidationError(f"{path} is a folder, not an image file") from None
    except OSError as exc:
        if is_refusal(exc):
            raise ValidationError(
                f"{path} is not a regular file (a FIFO, socket or device), not an image file",
                hint="give the path of an image file",
            ) from None
        raise ValidationError(f"cannot read {path}: {exc.strerror}") from None
    return check_image(data, source=str(path), max_bytes=max_bytes)


def _too_big(path: Path, size: int, max_bytes: int) -> Image:
    raise ValidationError(
        f"{path}: {_mb(size)} is over the media size cap of {_mb(max_bytes)}",
        hint="resize or compress it, or raise media.max_bytes in scarwarden.yaml",
    )


def _mb(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size} bytes"


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
