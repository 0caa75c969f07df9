"""``export --commit``: the exported files written and committed as one write.

As every write that commits (issue 15): the files are recorded in the write journal
before the first byte is written, then committed through a temporary index
(:mod:`scarwarden.files.write_journal`), so the commit holds exactly the exported
files (what else the user staged stays staged), the commit hooks judge that tree
before HEAD moves, git's real index is never locked while a kill could leave the lock
behind, and a killed or refused export puts every file back as it was (an unstaged
edit outside the markers included). Under the write lock, like every other writer.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from scarwarden import git
from scarwarden.files import write_journal
from scarwarden.files.atomic import atomic_write
from scarwarden.files.write_journal import Planned
from scarwarden.gate.door import gate_check
from scarwarden.repo import MemoryRepo


class ExportFile(Protocol):
    """What is committed of :class:`scarwarden.agents.exports.ExportFile` (named here,
    not imported: that module calls this one)."""

    @property
    def format(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def rel(self) -> str: ...
    @property
    def new(self) -> bytes: ...


def message(files: Sequence[ExportFile]) -> str:
    return (
        "export: update agent instruction files from the playbook\n\n"
        + "\n".join(f"Scarwarden-Export: {f.format} {f.rel}" for f in files)
        + "\n"
    )


def write_and_commit(repo: MemoryRepo, files: Sequence[ExportFile]) -> str | None:
    """Write ``files`` (those whose bytes change) and commit the ones that differ from
    HEAD; None when none does (the files are still written). The caller holds the
    write lock and has recovered a killed write (:func:`write_journal.recover`)."""
    inside = [f for f in files if not Path(f.rel).is_absolute()]  # (--output is refused)
    head = git.head(repo.root)
    committed = git.cat_file_batch(repo.root, [f"{head}:{f.rel}" for f in inside]) if head else []
    differ = [f.rel for f, old in zip(inside, committed or [None] * len(inside), strict=True) if old != f.new]
    if not differ:
        for f in files:
            atomic_write(f.path, f.new)
        return None
    journal = write_journal.begin(repo, [Planned(f.rel, f.new) for f in files])
    try:
        for f in files:
            atomic_write(f.path, f.new)
        check = gate_check(repo, "the export")  # what it commits, the gate has passed (issue 27)
        return write_journal.commit(repo, journal, message(files), differ, check=check)
    except BaseException:
        write_journal.recover(repo)  # each file back as it was, unless the commit landed
        raise
