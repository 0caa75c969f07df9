"""Objects fetched to judge a remote, kept out of our object store until it is accepted.

``sync`` fetches a remote's commits to tell whether they share our history before it
starts our branch there. A remote it refuses (another project's repository) must leave
nothing behind: not a ref, and not the other project's objects either, which would stay
in our store until ``git gc`` (and be pushed nowhere, read by nothing). So the fetch
writes into a quarantine, as git's own ``receive-pack`` does for a push it has not
accepted yet: a new object folder inside ours (``GIT_OBJECT_DIRECTORY``), ours as its
alternate (``GIT_ALTERNATE_OBJECT_DIRECTORIES``: git sees both, so the fetch asks only
for what we lack and the ancestry check reads both), ``GIT_QUARANTINE_PATH`` set so no
ref can be written meanwhile. Accepted, its objects move into ours (a hard link each,
pack data before the index that makes a reader look at it); refused, or on any error,
the folder is removed. A run killed meanwhile leaves its folder, named with its PID:
the next quarantine removes it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from scarwarden.git.repository import git_path
from scarwarden.git.temps import pid_alive

#: Our quarantine folders in the object store: ``<prefix><pid>-<random>`` (git's own are
#: ``tmp_objdir-incoming-*``).
PREFIX = "tmp_objdir-scarwarden-"


class Quarantine:
    """A quarantine's object folder, and the environment in which git writes there."""

    def __init__(self, folder: Path, objects: Path) -> None:
        self.folder = folder
        self.objects = objects
        self.env = {
            **os.environ,
            "GIT_OBJECT_DIRECTORY": str(folder),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": _alternates(objects, os.environ),
            "GIT_QUARANTINE_PATH": str(folder),
        }

    def accept(self) -> None:
        """Move the quarantined objects into our store (the folder itself is removed
        when the quarantine ends)."""
        for sub in sorted(self.folder.iterdir()):
            if len(sub.name) == 2 and sub.is_dir():  # loose objects: xx/yyyy...
                for obj in sorted(sub.iterdir()):
                    _move(obj, self.objects / sub.name / obj.name)
        pack = self.folder / "pack"
        if pack.is_dir():
            # A pack is read once its .idx is there: the data (and its .rev) go first.
            files = [f for f in pack.iterdir() if not f.name.startswith("tmp_") and f.suffix != ".keep"]
            for file in sorted(files, key=lambda f: (f.suffix == ".idx", f.suffix != ".pack", f.name)):
                _move(file, self.objects / "pack" / file.name)


@contextmanager
def quarantine(root: Path | str) -> Iterator[Quarantine]:
    """A quarantine in the object store of the repository at ``root``, removed when the
    block ends, whatever the way (its objects are ours only if :meth:`Quarantine.accept`
    moved them)."""
    objects = Path(os.path.abspath(os.path.join(root, git_path(root, "objects"))))
    remove_dead_quarantines(objects)
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=objects))
    try:
        yield Quarantine(folder, objects)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def remove_dead_quarantines(objects: Path) -> list[Path]:
    """Remove the quarantines whose process is gone (a killed ``sync`` left them)."""
    removed = []
    for folder in objects.glob(f"{PREFIX}*"):
        pid = folder.name[len(PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _alternates(objects: Path, environ: Mapping[str, str]) -> str:
    """``GIT_ALTERNATE_OBJECT_DIRECTORIES``: our store (C-quoted, so a ``:`` in its path
    is no separator), then any the caller had set."""
    quoted = '"' + str(objects).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    before = environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES")
    return f"{quoted}{os.pathsep}{before}" if before else quoted


def _move(source: Path, target: Path) -> None:
    """``source`` at ``target``, as git moves an object into place: a hard link (one
    there already holds the same bytes: objects are named by their content), else a
    rename on a file system without links."""
    target.parent.mkdir(exist_ok=True)
    try:
        os.link(source, target)
    except FileExistsError:
        pass
    except OSError:
        os.replace(source, target)
