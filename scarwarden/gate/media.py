"""The gate's media rules (issue 19): images under memory/media/ are append-only and true.

* a media file is added once and never changed, renamed or deleted (an episode that
  attached it is append-only, so what it names must stay);
* an added media file is named ``<sha256>.<ext>`` by the SHA-256 of its content, is a
  whole PNG, JPEG, WebP or GIF by its bytes (never an SVG), of the format its name says,
  and within ``media.max_bytes``;
* every attachment an added episode names is in the tree being committed.

Read from git's index and blobs only, like the rest of :mod:`scarwarden.gate.check`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from scarwarden import git
from scarwarden.errors import ValidationError
from scarwarden.files import media
from scarwarden.files.episodes import Episode
from scarwarden.gate.policy import GateProblem, is_under, problem
from scarwarden.repo import MemoryRepo


def changed_media(
    repo: MemoryRepo, changes: Iterable[git.RawChange]
) -> tuple[dict[str, str], list[GateProblem]]:
    """Split the staged changes under memory/media/: the added files (path -> blob) and
    the refusals of every other change."""
    folder = media.media_rel(repo.memory_rel)
    added: dict[str, str] = {}
    problems: list[GateProblem] = []
    for _old_mode, new_mode, _old_blob, new_blob, change in changes:
        old_path = change.old_path or change.path
        if is_under(old_path, folder) and change.status != "A":
            verb = {"D": "deleted", "R": f"renamed to {change.path}"}.get(change.status, "changed")
            problems.append(
                problem(
                    "media-changed",
                    f"{old_path} was {verb}; attached images are append-only",
                    file=old_path,
                    hint=f"restore it: git restore --source=HEAD --staged --worktree -- {old_path}",
                )
            )
        elif is_under(change.path, folder) and change.status in "AR" and new_blob != "0" * 40:
            if new_mode not in ("100644", "100755"):
                problems.append(
                    problem(
                        "media-invalid",
                        "only plain image files belong in the media folder",
                        file=change.path,
                        hint="commit the image itself, not a link",
                    )
                )
            else:
                added[change.path] = new_blob
    return added, problems


def check_added_media(
    repo: MemoryRepo, added: Mapping[str, str], blobs: Sequence[bytes | None]
) -> list[GateProblem]:
    """Each added media file: its name is its content's hash and format, within the cap."""
    out: list[GateProblem] = []
    for (path, _blob), raw in zip(added.items(), blobs, strict=True):
        name = path.rsplit("/", 1)[-1]
        match = media.MEDIA_NAME_RE.match(name)
        if match is None:
            out.append(
                problem(
                    "media-invalid",
                    f"{name} is not a media file name (<sha256>.png|jpg|webp|gif)",
                    file=path,
                    hint="attach images with 'scarwarden episode add --attach FILE', which names them",
                )
            )
            continue
        if raw is None:
            out.append(problem("media-invalid", "the staged blob could not be read", file=path))
            continue
        try:
            image = media.check_image(raw, source=path, max_bytes=repo.config.media.max_bytes)
        except ValidationError as exc:
            out.append(problem("media-invalid", exc.message, file=path, hint=exc.hint))
            continue
        if image.sha256 != match.group(1):
            out.append(
                problem(
                    "media-hash-mismatch",
                    f"{name}: its content's SHA-256 is {image.sha256}, not the one its name says",
                    file=path,
                    hint="a media file is named by the hash of its bytes; attach it again with "
                    "'scarwarden episode add --attach FILE'",
                )
            )
        elif image.ext != match.group(2):
            out.append(
                problem(
                    "media-invalid",
                    f"{name}: its content is {image.ext.upper()}, its name says {match.group(2).upper()}",
                    file=path,
                    hint=f"name it {image.name}",
                )
            )
    return out


def missing_attachments(
    repo: MemoryRepo, episodes: Sequence[tuple[str, Episode]], env: Mapping[str, str] | None = None
) -> list[GateProblem]:
    """The attachments of ``episodes`` with no media file in git's index."""
    wanted = {a for _, ep in episodes for a in ep.get("attachments") or []}
    if not wanted:
        return []
    folder = media.media_rel(repo.memory_rel)
    present = {
        "sha256:" + m.group(1)
        for entry in git.ls_files_stage(repo.root, f"{folder}/*", env=env)
        if (m := media.MEDIA_NAME_RE.match(entry.path.rsplit("/", 1)[-1]))
    }
    out = []
    for path, ep in episodes:
        for attachment in ep.get("attachments") or []:
            if attachment not in present:
                out.append(
                    problem(
                        "attachment-missing",
                        f"episode {ep.id} attaches {attachment[:19]}..., which is not in {folder}/",
                        file=path,
                        field="attachments",
                        episode=ep.id,
                        hint="stage the image too (episode add --attach stores and stages it), "
                        "or drop the attachment",
                    )
                )
    return out
