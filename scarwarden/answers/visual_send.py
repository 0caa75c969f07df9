"""An image as a vision model receives it: resized and re-encoded when too big (issue 19).

A 20 MB photo should cost what a 1 MB one does: above ``media.send_max_bytes`` or
``media.send_max_side`` pixels on a side (and for an animated GIF, whose first frame
is judged), the image is scaled down and re-encoded as JPEG (PNG when it has
transparency) with Pillow, the optional ``vision`` extra. Without Pillow an image that
needs it is refused with the install hint; one that does not is sent as it is.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from typing import Any

from scarwarden.config import MediaSettings
from scarwarden.errors import UsageError, ValidationError
from scarwarden.files.media import Image


@dataclass(frozen=True)
class Sent:
    """What the model is sent: the bytes, their type, and what was done to them."""

    data: bytes
    mime: str
    original_bytes: int
    resized: bool
    width: int | None = None
    height: int | None = None
    note: str = ""

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"

    def to_json(self) -> dict[str, object]:
        return {
            "mime": self.mime,
            "bytes": len(self.data),
            "original_bytes": self.original_bytes,
            "resized": self.resized,
            "width": self.width,
            "height": self.height,
            "note": self.note or None,
        }


def prepare(image: Image, settings: MediaSettings, *, source: str = "the image") -> Sent:
    """The image as the model will see it (see the module docstring). An image Pillow
    cannot decode (a PNG whose data is garbage) is a :class:`ValidationError` naming
    ``source``, before anything is sent."""
    try:
        import PIL
        from PIL import Image as PILImage
    except ImportError:
        if len(image.data) > settings.send_max_bytes or image.frames > 1:
            raise UsageError(
                f"the image is {len(image.data):,} bytes"
                + (f" and animated ({image.frames} frames)" if image.frames > 1 else "")
                + f"; it must be resized for the model (media.send_max_bytes is {settings.send_max_bytes:,})",
                hint="install the vision extra: pip install 'scarwarden[vision]' (Pillow)",
            ) from None
        return Sent(image.data, image.mime, len(image.data), False)
    # What Pillow raises for a file it cannot decode: not identified, a bomb, a broken
    # data stream (OSError), a bad header (SyntaxError, ValueError), cut short (EOFError).
    undecodable = (PIL.UnidentifiedImageError, PILImage.DecompressionBombError, OSError)
    try:
        with PILImage.open(io.BytesIO(image.data)) as opened:
            opened.seek(0)  # an animated GIF: the first frame is what is judged
            opened.load()  # decoded here, so a damaged image is refused before any call
            return _sent(opened, image, settings)
    except (*undecodable, SyntaxError, ValueError, EOFError) as exc:
        raise ValidationError(
            f"{source}: a damaged or oversized image: it cannot be decoded ({type(exc).__name__}: {exc})",
            hint="export it again from an image editor (as PNG or JPEG), then audit it again",
        ) from None


def _sent(opened: Any, image: Image, settings: MediaSettings) -> Sent:
    """As it is when small enough, else shrunk."""
    width, height = opened.size
    small = len(image.data) <= settings.send_max_bytes and max(width, height) <= settings.send_max_side
    note = f"animated GIF: the first of {image.frames} frames was judged" if image.frames > 1 else ""
    if small and image.frames == 1:
        return Sent(image.data, image.mime, len(image.data), False, width, height)
    return _shrink(opened, image, settings, note)


def _shrink(opened: object, image: Image, settings: MediaSettings, note: str) -> Sent:
    """Scale down until the encoded image fits ``send_max_bytes`` (a few tries at most)."""
    from PIL import Image as PILImage

    assert isinstance(opened, PILImage.Image)
    alpha = opened.mode in ("RGBA", "LA") or (opened.mode == "P" and "transparency" in opened.info)
    frame = opened.convert("RGBA" if alpha else "RGB")
    side = settings.send_max_side
    for _attempt in range(6):
        copy = frame.copy()
        copy.thumbnail((side, side))
        out = io.BytesIO()
        if alpha:
            copy.save(out, "PNG", optimize=True)
        else:
            copy.save(out, "JPEG", quality=85, optimize=True)
        if out.tell() <= settings.send_max_bytes:
            break
        side = int(side * 0.7)
    mime = "image/png" if alpha else "image/jpeg"
    return Sent(out.getvalue(), mime, len(image.data), True, copy.width, copy.height, note)
