"""Registering the playbook merge driver (``scarwarden hooks install``, ``init``).

Git picks a merge driver by path attribute and runs the command the repository's config
gives it. Both are per clone here: the attribute goes into ``.git/info/attributes`` (a
team that wants it in the tree adds the same line to ``.gitattributes``), the command
into ``.git/config``, so nothing in the working tree changes. The command runs
``python -m scarwarden merge-playbook %O %A %B %P`` with the interpreter that
registered it, as the hooks do.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from scarwarden import git
from scarwarden.git.merge import (
    attribute_pattern,
    info_attributes,
    register_merge_driver,
    unregister_merge_driver,
)

DRIVER = "scarwarden"


@dataclass(frozen=True)
class MergeDriverSetup:
    attributes: Path
    attribute_line: str
    command: str


def driver_command(python: str | None = None) -> str:
    exe = shlex.quote(python or sys.executable)
    return f"{exe} -m scarwarden merge-playbook %O %A %B %P"


def install_merge_driver(root: Path | str, playbook_rel: str) -> MergeDriverSetup:
    """Register the driver for ``playbook_rel`` in this clone; idempotent."""
    line = f"{attribute_pattern('/' + playbook_rel)} merge={DRIVER}"
    where = info_attributes(root)
    # Bytes throughout: the file is git's and the user's, in any encoding and line ending.
    existing = where.read_bytes() if where.exists() else b""
    if line.encode() not in (raw.rstrip(b"\r") for raw in existing.splitlines()):
        where.parent.mkdir(parents=True, exist_ok=True)
        sep = b"" if not existing or existing.endswith(b"\n") else b"\n"
        where.write_bytes(existing + sep + line.encode() + b"\n")
    command = driver_command()
    register_merge_driver(root, DRIVER, "Scarwarden playbook merge, rule by rule", command)
    return MergeDriverSetup(where, line, command)


def check_attributes(root: Path | str) -> None:
    """Read ``.git/info/attributes`` as :func:`install_merge_driver` will, so that a
    folder or an unreadable file there is refused (``OSError``, rendered at the
    boundary) before ``hooks install`` writes any hook: not half installed."""
    where = info_attributes(root)
    if where.exists() or where.is_symlink():
        where.read_bytes()


def merge_driver_installed(root: Path | str) -> bool:
    """Whether the driver is registered with a program git can still run: a command
    naming an interpreter since removed (a deleted virtualenv, an upgraded Python)
    fails in every merge, which git reports as a conflict in the playbook."""
    command = git.config_get(root, f"merge.{DRIVER}.driver")
    try:
        program = shlex.split(command)[0] if command else None
    except (ValueError, IndexError):  # unbalanced quotes, or a blank command
        return False
    return program is not None and shutil.which(program) is not None


def uninstall_merge_driver(root: Path | str) -> list[str]:
    """Unregister the driver from this clone (``hooks uninstall``): the
    ``merge=scarwarden`` lines of ``.git/info/attributes`` and ``merge.scarwarden`` in
    ``.git/config``. Returns what was removed, described (empty: it was not there).
    A ``.gitattributes`` line in the tree is the team's, left alone: without the driver
    defined, git merges the playbook line by line again."""
    removed = []
    where = info_attributes(root)
    if where.exists():
        lines = where.read_bytes().splitlines(keepends=True)
        ours = [line for line in lines if f"merge={DRIVER}".encode() in line.split()]
        if ours:
            where.write_bytes(b"".join(line for line in lines if line not in ours))
            removed += [f"{line.strip().decode('utf-8', 'replace')!r} from {where}" for line in ours]
    if unregister_merge_driver(root, DRIVER):
        removed.append(f"merge.{DRIVER} from the git config")
    return removed
