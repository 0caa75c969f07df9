"""What an image costs the vision model, before and after resizing (issue 19).

Generates photos-like images (noise, incompressible: the worst case) of growing size,
runs them through :func:`scarwarden.answers.visual_send.prepare` with the default
settings, and prints the bytes on disk, the bytes sent (base64 adds a third), the
pixels sent and the time to prepare. Target: every image above the limit costs about
what a 1 MB one does.

    python bench/visual_send.py
"""

from __future__ import annotations

import io
import time

from PIL import Image as PILImage

from scarwarden.answers.visual_send import prepare
from scarwarden.config import MediaSettings
from scarwarden.files.media import check_image

SIZES = ((600, 400), (1200, 800), (2400, 1600), (4000, 3000))


def main() -> None:
    settings = MediaSettings()
    print(f"{'image':>11} {'on disk':>10} {'sent':>10} {'data URL':>10} {'pixels sent':>12} {'ms':>6}")
    for width, height in SIZES:
        out = io.BytesIO()
        PILImage.effect_noise((width, height), 64).convert("RGB").save(out, "PNG")
        image = check_image(out.getvalue(), source="bench", max_bytes=10**9)
        start = time.perf_counter()
        sent = prepare(image, settings)
        ms = (time.perf_counter() - start) * 1000
        url = len(sent.data_url())
        pixels = f"{sent.width}x{sent.height}"
        size = f"{width}x{height}"
        print(f"{size:>11} {len(image.data):>10,} {len(sent.data):>10,} {url:>10,} {pixels:>12} {ms:>6.0f}")


if __name__ == "__main__":
    main()
