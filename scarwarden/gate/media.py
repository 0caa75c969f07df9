"""The gate's media rules (issue 19): images under memory/media/ are append-only and true.

* a media file is added once and never changed, renamed or deleted (an episode that
  attached it is append-only, so what it names must stay);
* an added media file is named ``<sha256>.<ext>`` by the SHA-256 of its content, is a
  whole PNG, JPEG, WebP or GIF by its bytes (never an SVG), of the format its name says,
  and within ``media.max_bytes``;
* every attachment an added episode names is in the tree being committed;
* a Git LFS pointer in the media folder stands for its image: its oid must be the hash
  the name says, its size within the cap (the bytes are in the LFS store, not in git).

Read from git's index and blobs only, like the rest of :mod:`scarwarden.gate.check`.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable, Mapping, Sequence

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
    repo: MemoryRepo,
    added: Mapping[str, str],
    blobs: Sequence[bytes | None],
    *,
    max_bytes: int | None = None,
) -> list[GateProblem]:
    """Each added media file: its name is its content's hash and format, within the cap
    (``media.max_bytes`` unless ``max_bytes`` is given). A Git LFS pointer stands for
    its image: its oid must be the hash the name says and its size within the cap."""
    cap = repo.config.media.max_bytes if max_bytes is None else max_bytes
    folder = media.media_rel(repo.memory_rel)
    out: list[GateProblem] = []
    for (path, _blob), raw in zip(added.items(), blobs, strict=True):
        out.extend(_check_one(path, raw, cap, folder, repo.config.secrets.allow))
    return out


def lfs_pointers(blobs: Iterable[bytes | None]) -> int:
    """How many of ``blobs`` are Git LFS pointers (images whose bytes git does not hold)."""
    return sum(1 for raw in blobs if raw is not None and media.lfs_pointer(raw) is not None)


def check_history_media(
    repo: MemoryRepo, added: Sequence[tuple[str, str]], *, cap: bool
) -> tuple[list[tuple[int, GateProblem]], int]:
    """The media files (path, blob) the commits of a range added (``verify``, ranges),
    each checked as :func:`check_added_media` does. One streaming ``git cat-file``
    reads them all from the stored objects: one process for the whole history, and one
    image in memory at a time. With ``cap=False`` (verify) today's ``media.max_bytes``
    is not applied to what was committed under another. Returns (position in
    ``added``, problem) pairs and how many were LFS pointers."""
    limit = repo.config.media.max_bytes if cap else sys.maxsize
    folder = media.media_rel(repo.memory_rel)
    found: list[tuple[int, GateProblem]] = []
    lfs = 0
    raws = git.cat_file_stream(repo.root, [blob for _path, blob in added])
    for n, ((path, _blob), raw) in enumerate(zip(added, raws, strict=True)):
        if raw is not None and media.lfs_pointer(raw) is not None:
            lfs += 1
        # verify proves form, not old content (docs/gate.md): no secret screen there.
        allow = repo.config.secrets.allow if cap else None
        found += [(n, bad) for bad in _check_one(path, raw, limit, folder, allow)]
    return found, lfs


def _check_one(
    path: str, raw: bytes | None, cap: int, folder: str, allow: Collection[str] | None
) -> list[GateProblem]:
    """Every problem of one added media file; ``allow``: screen its text metadata for
    credentials (``None``: do not)."""
    bad = _form(path, raw, cap, folder)
    if bad is not None or raw is None or allow is None:
        return [bad] if bad is not None else []
    from scarwarden.files import secret_scan
    from scarwarden.files.media_text import image_texts

    kind = media.sniff(raw) or ""
    return [
        problem(
            "secret-found",
            "its text metadata " + secret_scan.describe(found),
            file=path,
            hint="strip the metadata (e.g. exiftool -all= FILE, or export it again) and attach it again",
        )
        for text in image_texts(raw, kind)
        for found in secret_scan.scan_text(text, None, allow)
    ]


def _form(path: str, raw: bytes | None, cap: int, folder: str) -> GateProblem | None:
    """Name, place, format, hash and size of one added media file."""
    name = path.rsplit("/", 1)[-1]
    match = media.MEDIA_NAME_RE.match(name)
    if path != f"{folder}/{name}":
        return problem(
            "media-invalid",
            f"{path} is in a subfolder of {folder}/; media files sit directly in it",
            file=path,
            hint="attach images with 'scarwarden episode add --attach FILE', which stores them there",
        )
    if match is None:
        return problem(
            "media-invalid",
            f"{name} is not a media file name (<sha256>.png|jpg|webp|gif)",
            file=path,
            hint="attach images with 'scarwarden episode add --attach FILE', which names them",
        )
    if raw is None:
        return problem("media-invalid", "the staged blob could not be read", file=path)
    pointer = media.lfs_pointer(raw)
    if pointer is not None:
        return _check_pointer(path, name, match.group(1), pointer, cap)
    # verify (no cap) proves what was committed, not today's limits: the pixel cap, added
    # later, is not applied to history either (a damaged image still is refused).
    pixels = None if cap == sys.maxsize else media.MAX_PIXELS
    try:
        image = media.check_image(raw, source=path, max_bytes=cap, max_pixels=pixels)
    except ValidationError as exc:
        return problem("media-invalid", exc.message, file=path, hint=exc.hint)
    if image.sha256 != match.group(1):
        return problem(
            "media-hash-mismatch",
            f"{name}: its content's SHA-256 is {image.sha256}, not the one its name says",
            file=path,
            hint="a media file is named by the hash of its bytes; attach it again with "
            "'scarwarden episode add --attach FILE'",
        )
    if image.ext != match.group(2):
        return problem(
            "media-invalid",
            f"{name}: its content is {image.ext.upper()}, its name says {match.group(2).upper()}",
            file=path,
            hint=f"name it {image.name}",
        )
    return None


def _check_pointer(path: str, name: str, sha: str, pointer: media.LfsPointer, cap: int) -> GateProblem | None:
    """A Git LFS pointer (the image is in the LFS store, not in git): what it says must
    match the name and the cap. Its bytes, and so its format, are not checked here."""
    if pointer.oid != sha:
        return problem(
            "media-hash-mismatch",
            f"{name} is a Git LFS pointer to sha256:{pointer.oid}, not to the image its name says",
            file=path,
            hint="an image in LFS keeps its name: the SHA-256 of its bytes, the oid git lfs records",
        )
    if pointer.size > cap:
        return problem(
            "media-invalid",
            f"{name}: its Git LFS pointer says {pointer.size:,} bytes, over the media size cap of {cap:,}",
            file=path,
            hint="resize or compress it, or raise media.max_bytes in scarwarden.yaml",
        )
    return None


def missing_attachments(
    repo: MemoryRepo, episodes: Sequence[tuple[str, Episode]], env: Mapping[str, str] | None = None
) -> list[GateProblem]:
    """The attachments of ``episodes`` with no media file in git's index (a file in a
    subfolder of the media folder does not count: it is refused)."""
    wanted = {a for _, ep in episodes for a in ep.get("attachments") or []}
    if not wanted:
        return []
    folder = media.media_rel(repo.memory_rel)
    present = {
        "sha256:" + m.group(1)
        for entry in git.ls_files_stage(repo.root, f"{folder}/*", env=env)
        if entry.path.rsplit("/", 1)[0] == folder
        and (m := media.MEDIA_NAME_RE.match(entry.path.rsplit("/", 1)[-1]))
    }
    return [
        _missing(folder, path, ep, attachment)
        for path, ep in episodes
        for attachment in ep.get("attachments") or []
        if attachment not in present
    ]


def missing_in_commits(
    repo: MemoryRepo, episodes: Sequence[tuple[str, str, Episode]]
) -> list[tuple[int, GateProblem]]:
    """The attachments of episodes added by commits (commit, path, episode) that are not
    in that commit's own tree (``verify``, ranges, the ref hooks), with one
    ``git cat-file --batch-check``: (position in ``episodes``, problem) pairs."""
    folder = media.media_rel(repo.memory_rel)
    specs = {
        n: {a: [f"{sha}:{folder}/{a[7:]}.{ext}" for ext in media.MIME] for a in ep.get("attachments") or []}
        for n, (sha, _path, ep) in enumerate(episodes)
    }
    exists = git.objects_exist(
        repo.root, sorted({s for by in specs.values() for ss in by.values() for s in ss})
    )
    return [
        (n, _missing(folder, episodes[n][1], episodes[n][2], attachment))
        for n, by in specs.items()
        for attachment, candidates in by.items()
        if not any(exists.get(c) for c in candidates)
    ]


def _missing(folder: str, path: str, ep: Episode, attachment: str) -> GateProblem:
    return problem(
        "attachment-missing",
        f"episode {ep.id} attaches {attachment[:19]}..., which is not in {folder}/",
        file=path,
        field="attachments",
        episode=ep.id,
        hint="stage the image too (episode add --attach stores and stages it), or drop the attachment",
    )
