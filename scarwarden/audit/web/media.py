"""Serving the images episodes attach (issue 19): ``/media/<sha256>.<ext>``.

Only names of the stored form are served, and only when the bytes still are the image
the name says (its hash and format): a file edited in the working tree is not shown
as if it were the committed evidence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scarwarden.errors import ValidationError
from scarwarden.files import media
from scarwarden.index import Index
from scarwarden.repo import MemoryRepo

if TYPE_CHECKING:  # pragma: no cover
    from flask import Response


def media_response(site: Any, repo: MemoryRepo, name: str) -> Response:
    """The image, or the site's 404 page."""
    from flask import Response  # the static export imports this module without Flask

    match = media.MEDIA_NAME_RE.match(name)
    path = repo.root / media.media_rel(repo.memory_rel) / name
    if match is None or not path.is_file():
        return site.error(
            404, "No such image", f"There is no image {name} in {media.media_rel(repo.memory_rel)}/."
        )
    raw = path.read_bytes()
    if media.lfs_pointer(raw) is not None:  # Git LFS without its content fetched here
        return site.error(
            404,
            "Image in Git LFS",
            f"{name} is a Git LFS pointer: the image is in the LFS store and was not fetched "
            "into this working folder. Run 'git lfs pull' to see it.",
        )
    try:
        image = media.check_image(raw, source=name, max_bytes=repo.config.media.max_bytes)
    except ValidationError as exc:
        return site.error(404, "Not a stored image", exc.message)
    if image.sha256 != match.group(1) or image.ext != match.group(2):
        return site.error(404, "Not the stored image", f"{name} no longer holds the image its name says.")
    response = Response(image.data, mimetype=image.mime)
    response.headers["Cache-Control"] = "public, max-age=31536000, immutable"  # named by its hash
    return response


def image_page(repo: MemoryRepo, index: Index, name: str) -> dict[str, Any] | None:
    """An image's page: the image, the episodes that attach it (an audit recorded with
    ``audit-image --record`` holds its verdicts), and the visual rules with the
    episodes behind them."""
    from scarwarden.files.playbook_edit import load_playbook

    match = media.MEDIA_NAME_RE.match(name)
    if match is None or not (repo.root / media.media_rel(repo.memory_rel) / name).is_file():
        return None
    attachment = f"sha256:{match.group(1)}"
    episodes = [ep for ep in index.list_episodes() if attachment in (ep.get("attachments") or [])]
    return {
        "title": f"Image {match.group(1)[:12]}",
        "name": name,
        "attachment": attachment,
        "episodes": episodes,
        "rules": [rule for rule in load_playbook(repo).rules if rule.visual],
    }
