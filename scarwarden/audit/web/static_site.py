"""``scarwarden audit --html DIR``: the audit pages as static files.

The same templates and page data as the live UI, with relative links (``index.html``,
``rules/PB-01.html``, ``episodes/ep-....html``, ``ledger.html``), so the folder can be
published by a CI job, attached to a pull request, or opened from disk. No timestamps
are written: exporting the same commit twice gives the same bytes.

Exporting into a folder that holds an earlier export removes the earlier export's
``rules/``, ``episodes/`` and ``images/`` pages, and ``media/`` copies, that the memory no
longer has (a rule removed, an image redacted, a different repository), so the folder
never links to, lists or shows what is gone. Only pages
this export wrote are removed (named by an ID and marked as generated); any other file
in the folder is left alone.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from scarwarden import git
from scarwarden.audit.web import pages, render
from scarwarden.errors import UsageError
from scarwarden.files.episodes import EPISODE_ID_RE, RULE_ID_RE
from scarwarden.files.media import MEDIA_NAME_RE
from scarwarden.index import Index, open_index
from scarwarden.repo import MemoryRepo

#: What marks a page as written by this export: the generator tag, or the badge that
#: exports made before the tag carry.
OWN_MARKERS = (
    '<meta name="generator" content="scarwarden audit --html">',
    '<span class="badge">static export</span>',
)

#: Every subfolder the export writes into.
OWN_SUBFOLDERS = ("rules", "episodes", "images", "media", "static")

#: The subfolders whose pages the export owns, and the IDs their pages are named by.
OWN_FOLDERS = (("rules", RULE_ID_RE), ("episodes", EPISODE_ID_RE), ("images", MEDIA_NAME_RE))


@dataclass(frozen=True)
class ExportResult:
    directory: Path
    rules: int
    episodes: int
    #: Pages of an earlier export removed because their rule, episode or image is gone.
    removed: int = 0
    #: Image pages (issue 19), one per image an episode attaches: written beside the
    #: :attr:`pages` the progress bar counts (found only while episodes are written).
    images: int = 0

    @property
    def pages(self) -> int:
        return self.rules + self.episodes + 2  # index.html and ledger.html

    def to_json(self) -> dict[str, object]:
        return {
            "directory": str(self.directory),
            "pages": self.pages,
            "rules": self.rules,
            "episodes": self.episodes,
            "images": self.images,
            "removed": self.removed,
        }


def _source_label(repo: MemoryRepo) -> str:
    sha = git.head(repo.root)
    if sha is None:
        return f"{repo.memory_rel}/ (not committed yet)"
    dirty = git.has_uncommitted_changes(repo.root, repo.memory_rel)
    return f"{repo.memory_rel}/ at commit {sha[:10]}" + (" plus uncommitted changes" if dirty else "")


def export_html(
    repo: MemoryRepo, directory: Path | str, *, progress: Callable[[int, int], None] | None = None
) -> ExportResult:
    """Write the playbook, every rule's page and every episode's page under ``directory``;
    ``progress(done, total)`` is called as pages are written (a bar on a terminal)."""
    out = _output_folder(repo, directory)
    env = render.environment()
    generated = _source_label(repo)

    refuse = partial(repo.refuse_own_files, option="--html")  # where a page that is a link leads
    made: set[Path] = set()  # folders made: one mkdir each, not one per page

    def write(rel: str, template: str, depth: int, **context: object) -> None:
        context.setdefault("nav", "")
        html = render.render(
            env, template, render.Links(static=True, depth=depth), generated=generated, **context
        )
        target = out / rel
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        write_over(target, html.encode("utf-8"), refuse)

    with open_index(repo) as index:
        rules = index.rules(include_retired=True)
        episodes = index.list_episodes(newest_first=True)
        refuse_foreign_files(out, rules, episodes, refuse)
        write("index.html", "playbook.html", 0, nav="playbook", **pages.playbook_page(index))
        total, done = len(rules) + len(episodes) + 2, 1
        sources = pages.rule_sources(repo, index)
        for rule in rules:
            ctx = pages.rule_page(repo, index, rule.id, sources=sources)
            assert ctx is not None
            write(f"rules/{rule.id}.html", "rule.html", 1, nav="playbook", **ctx)
            done += 1
            if progress is not None:
                progress(done, total)
        imaged: set[str] = set()  # images whose page is written (issue 19)
        image_pages = 0
        for ep, ctx in pages.episode_pages(index, episodes):
            write(f"episodes/{ep.id}.html", "episode.html", 1, nav="ledger", recorded=False, **ctx)
            _copy_images(repo, out, ctx["images"], refuse)
            image_pages += _write_image_pages(repo, index, ctx["images"], imaged, write)
            done += 1
            if progress is not None and done % 50 == 0:
                progress(done, total)
        write(
            "ledger.html",
            "ledger.html",
            0,
            nav="ledger",
            **pages.ledger_page(index, limit=max(len(episodes), 1)),
        )
        if progress is not None:
            progress(total, total)
    _write_static(out, _search_data(rules, episodes), refuse)
    written = {f"rules/{r.id}.html" for r in rules} | {f"episodes/{ep.id}.html" for ep in episodes}
    removed = remove_stale_pages(out, written, images=imaged)
    return ExportResult(out, len(rules), len(episodes), removed, images=image_pages)


def _output_folder(repo: MemoryRepo, directory: Path | str) -> Path:
    """``directory`` once checked: not in the repository's own folders, nor any
    subfolder the export writes into (a link there leads the pages elsewhere)."""
    repo.refuse_own_files(directory, "--html")
    out = Path(directory)
    for sub in OWN_SUBFOLDERS:
        repo.refuse_own_files(out / sub, "--html")
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a folder", hint="give a folder to write into")
    return out


def write_over(path: Path, data: bytes, refuse: Callable[[Path], None] | None = None) -> None:
    """Write ``data`` to ``path`` (created with the mode ``write_text`` gives) over the
    bytes there, then cut the rest: what ``write_text`` leaves, without emptying the
    file first. On ext4 an emptied file is flushed to disk when it is closed, and the
    next export's emptying waits for that write: 10,000 pages re-exported into the same
    folder spent ~1.5 s of wall there, beyond the export's CPU (issue 30). A symbolic
    link at ``path`` is written through, as ``write_text`` does, once ``refuse(path)``
    has not raised: a link into the repository would overwrite the playbook."""
    flags = os.O_WRONLY | os.O_CREAT
    try:
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        if refuse is not None:
            refuse(path)
        fd = os.open(path, flags, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if os.fstat(fd).st_size > len(data):
            os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def _write_image_pages(
    repo: MemoryRepo,
    index: Index,
    images: list[dict[str, Any]],
    imaged: set[str],
    write: Callable[..., None],
) -> int:
    """The page of each image an episode shows that has none yet (issue 19); how many
    were written."""
    from scarwarden.audit.web.media import image_page

    written = 0
    for image in images:
        if image["name"] and image["name"] not in imaged:
            imaged.add(image["name"])
            page = image_page(repo, index, image["name"])
            if page is not None:
                write(f"images/{image['name']}.html", "image.html", 1, nav="ledger", **page)
                written += 1
    return written


def _write_static(out: Path, search_data: str, refuse: Callable[[Path], None]) -> None:
    """The stylesheet and scripts, and the search's data."""
    (out / "static").mkdir(parents=True, exist_ok=True)
    for asset in render.STATIC.iterdir():
        if asset.is_file():
            write_over(out / "static" / asset.name, asset.read_bytes(), refuse)
    write_over(out / "static" / "search-data.js", search_data.encode("utf-8"), refuse)


def _copy_images(
    repo: MemoryRepo, out: Path, images: list[dict[str, Any]], refuse: Callable[[Path], None]
) -> None:
    """The images an episode page shows, next to the pages (``media/``, issue 19); only
    bytes that still are the image the name says, as the server serves: not a Git LFS
    pointer whose image was never fetched, nor a file edited in the working folder."""
    from scarwarden.files.media import digest, media_rel

    for image in images:
        name = image["name"]
        if not name or (out / "media" / name).exists():
            continue
        source = repo.root / media_rel(repo.memory_rel) / name
        raw = source.read_bytes() if source.is_file() else b""
        if digest(raw) == name.split(".", 1)[0]:
            (out / "media").mkdir(parents=True, exist_ok=True)
            write_over(out / "media" / name, raw, refuse)


def _search_data(rules: list[Any], episodes: list[Any]) -> str:
    """What the export's client-side search (static/search.js) looks in: one entry per
    rule and episode, as a script (a ``fetch`` of JSON is refused on ``file://``)."""
    import json

    entries = [
        {
            "id": r.id,
            "title": r.title + (" (retired)" if r.retired else ""),
            "href": f"rules/{r.id}.html",
            "text": " ".join([r.id, r.title, r.text, *r.tags]),
        }
        for r in rules
    ] + [
        {
            "id": ep.id,
            "title": ep.task,
            "href": f"episodes/{ep.id}.html",
            "text": " ".join(
                [ep.id, *(str(ep.get(k) or "") for k in ("task", "action", "outcome", "correction", "agent"))]
                + list(ep.get("tags") or [])
            ),
        }
        for ep in episodes
    ]
    # JSON is JavaScript; sort_keys and a fixed order keep the export byte-stable.
    return "window.SCARWARDEN_SEARCH = " + json.dumps(entries, ensure_ascii=True, sort_keys=True) + ";\n"


def refuse_foreign_files(
    out: Path, rules: list[Any], episodes: list[Any], refuse: Callable[[Path], None]
) -> None:
    """Refuse (exit 2), before anything is written, a folder holding a file where this
    export writes one (the pages of ``rules`` and ``episodes`` too) that an export did
    not write: the user's own ``index.html`` would be lost. A folder whose ``index.html`` an earlier
    export wrote is that export's; a link is first checked for where it leads."""
    if _is_generated(out / "index.html") or not out.is_dir():
        return
    places = ["index.html", "ledger.html", *(f"static/{a.name}" for a in render.STATIC.iterdir())]
    places.append("static/search-data.js")
    for folder, items in (("rules", rules), ("episodes", episodes)):
        if (out / folder).is_dir():
            there = set(os.listdir(out / folder))
            places += [f"{folder}/{item.id}.html" for item in items if f"{item.id}.html" in there]
    for rel in places:
        path = out / rel
        if path.is_symlink():
            refuse(path)
        if os.path.lexists(path) and not (rel.endswith(".html") and _is_generated(path)):
            raise UsageError(
                f"{path} exists and was not written by 'scarwarden audit --html': refusing to write over it",
                hint="move it away, or give a new or empty folder (or one an earlier export wrote)",
            )


def _is_generated(path: Path) -> bool:
    """``path`` is a file an export wrote (its generator tag in the first 4 KiB); a
    FIFO there is not opened (it would wait for a writer)."""
    if not path.is_file():
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    return any(marker in head for marker in OWN_MARKERS)


def _is_own_page(path: Path, id_re: re.Pattern[str]) -> bool:
    if path.is_symlink() or not id_re.fullmatch(path.stem):
        return False
    return _is_generated(path)


def remove_stale_pages(out: Path, written: set[str], *, images: set[str]) -> int:
    """Remove the rule, episode and image pages under ``out`` that an earlier export
    wrote and this one did not (``written``: paths relative to ``out``; ``images``: the
    names of the images the episodes show now), and the copies of images no episode
    shows now (redacted, or of another memory); how many pages were removed."""
    written = written | {f"images/{name}.html" for name in images}
    removed = 0
    for folder, id_re in OWN_FOLDERS:
        for path in sorted((out / folder).glob("*.html")):
            if f"{folder}/{path.name}" not in written and _is_own_page(path, id_re):
                path.unlink()
                removed += 1
    for path in sorted((out / "media").glob("*")):  # named by their hash: the export's copies
        if (
            path.name not in images
            and MEDIA_NAME_RE.match(path.name)
            and path.is_file()
            and not path.is_symlink()
        ):
            path.unlink()
    return removed
