"""Writing the exported files all or nothing: when one cannot be written (an immutable
``GEMINI.md``, a read-only folder, a full disk), those written before it are put back
(their old bytes, in their mode; a new one removed, with the folders made for it), so
``export all`` never leaves half of the formats exported."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from scarwarden.errors import FileAccessError, file_access_error, one_line
from scarwarden.files.atomic import atomic_write


class Written(Protocol):
    """What is put back of an exported file (:class:`scarwarden.agents.exports.ExportFile`)."""

    @property
    def path(self) -> Path: ...
    @property
    def rel(self) -> str: ...
    @property
    def old(self) -> bytes | None: ...
    @property
    def new(self) -> bytes: ...


def new_folders(files: Sequence[Written]) -> list[Path]:
    """The folders writing ``files`` will make (they do not exist yet), deepest first."""
    made: set[Path] = set()
    for f in files:
        folder = f.path.parent
        while not folder.exists() and folder != folder.parent:
            made.add(folder)
            folder = folder.parent
    return sorted(made, key=lambda p: len(p.parts), reverse=True)


def remove_folders(folders: Sequence[Path]) -> None:
    """Remove each of ``folders`` (deepest first) that is empty: those a write made."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            continue  # not empty (something else is there now), or gone


def write_all(root: Path | None, files: Sequence[Written]) -> None:
    """Write each of ``files`` (its ``new`` bytes); when one fails, put back those written
    and raise the failure, saying nothing was changed."""
    folders = new_folders(files)
    done: list[Written] = []
    with nothing_changed(root, folders):
        try:
            for f in files:
                atomic_write(f.path, f.new)
                done.append(f)
        except BaseException as exc:
            _put_back(done, one_line(exc, root=None if root is None else str(root)))
            raise


def _put_back(done: Sequence[Written], failure: str) -> None:
    """Each of ``done`` as it was before it was written; one that cannot be is named."""
    stuck = []
    for f in reversed(done):
        try:
            if f.old is None:
                f.path.unlink(missing_ok=True)
            else:
                atomic_write(f.path, f.old)  # its mode stays: the file written kept the old one's
        except OSError:
            stuck.append(f.rel)
    if stuck:
        raise FileAccessError(
            f"an export stopped half-way ({failure}), and {', '.join(stuck)} could not be put back: "
            "they hold the new export",
            hint="fix what failed, then export again (or restore those files from git)",
        ) from None


@contextmanager
def nothing_changed(root: Path | None, folders: Sequence[Path]) -> Iterator[None]:
    """Around writes that are undone when they fail: the folders they made are removed,
    and a file that could not be written is reported (exit 2) saying nothing was changed."""
    try:
        yield
    except BaseException as exc:
        remove_folders(folders)
        shown = None if root is None else str(root)
        error = file_access_error(exc, root=shown) if isinstance(exc, OSError) else None
        if error is None:
            raise
        raise type(error)(
            f"{error.message}; nothing was changed (the files written before it were put back)",
            hint=error.hint,
        ) from None
