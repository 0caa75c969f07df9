"""Serving the images episodes attach (issue 19): ``/media/<sha256>.<ext>``.

Only names of the stored form are served, and only when the bytes still are the image
the name says (its hash and format): a file edited in the working tree is not shown
as if it were the committed evidence.
"""

from __future__ import annotations

from typing import Any

from flask import Response

from scarwarden.errors import ValidationError
from scarwarden.files import media
from scarwarden.repo import MemoryRepo


def media_response(site: Any, repo: MemoryRepo, name: str) -> Response:
    """The image, or the site's 404 page."""
    match = media.MEDIA_NAME_RE.match(name)
    path = repo.root / media.media_rel(repo.memory_rel) / name
    if match is None or not path.is_file():
        return site.error(
            404, "No such image", f"There is no image {name} in {media.media_rel(repo.memory_rel)}/."
        )
    try:
        image = media.check_image(path.read_bytes(), source=name, max_bytes=repo.config.media.max_bytes)
    except ValidationError as exc:
        return site.error(404, "Not a stored image", exc.message)
    if image.sha256 != match.group(1) or image.ext != match.group(2):
        return site.error(404, "Not the stored image", f"{name} no longer holds the image its name says.")
    response = Response(image.data, mimetype=image.mime)
    response.headers["Cache-Control"] = "public, max-age=31536000, immutable"  # named by its hash
    return response
