"""``scarwarden init``: turn a git repository into a memory repository.

The layout is committed as every write is (issue 15): journalled, through a temporary
index and a compare-and-swap of HEAD (:mod:`scarwarden.files.write_journal`).
``--no-commit`` stages it in git's real index, in one step a kill cannot cut.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from scarwarden.errors import UsageError
from scarwarden.files import write_journal
from scarwarden.files.atomic import atomic_write, write_lock
from scarwarden.files.playbook import TITLE
from scarwarden.files.write_journal import Planned
from scarwarden.regular_files import read_regular
from scarwarden.repo import MemoryRepo

EMPTY_PLAYBOOK = (
    f"{TITLE}\n\n"
    "Rules distilled from the episodes in episodes/. Every rule cites the episodes that\n"
    "taught it; a rule whose citations do not resolve cannot be committed.\n"
)
IGNORE_LINE = ".scarwarden/"
#: Images attached to episodes are binary to git: no diffs, no merges, no EOL changes.
ATTRIBUTES_LINE = "{media} binary"


@dataclass(frozen=True)
class InitResult:
    commit: str | None
    files: list[str]
    demo: bool


def demo_memory_dir() -> Path:
    """The demo memory shipped inside the package (works from an installed wheel)."""
    from importlib import resources  # pulls in zipfile and tempfile; only the demo needs it

    return Path(str(resources.files("scarwarden.demo") / "memory"))


def init(repo: MemoryRepo, *, demo: bool = False, commit: bool = True) -> InitResult:
    """Create the layout (and with ``demo`` the demo ledger), then commit it."""
    # A killed init's files are undone (or its landed commit finished) first: left
    # there, they would look like a memory and refuse this run (issue 15).
    write_journal.recover_interrupted(repo)
    _refuse_existing(repo)
    planned = _plan(repo, demo)
    kind = "demo memory" if demo else "memory"
    sha = _write(repo, planned, f"scarwarden: initialise {kind}\n" if commit else None)
    return InitResult(sha, [item.path for item in planned], demo)


def already_initialised(repo: MemoryRepo, *, demo: bool = False) -> bool:
    """True when ``repo`` holds a memory that ``init`` (``demo``: ``init --demo``) would
    leave as it is: a second ``init`` then says so and succeeds (issue 28). A memory
    other than the demo, asked for the demo, is not: that ``init`` refuses."""
    write_journal.recover_interrupted(repo)
    if not (repo.playbook_path.exists() or repo.episodes_dir.exists()):
        return False
    from scarwarden import git
    from scarwarden.git.temps import remove_dead_temporaries

    # A killed init whose commit landed left its private index: this run commits nothing,
    # so it tidies what a committing run would have (issue 15's kill bench).
    remove_dead_temporaries(git.git_dir(repo.root))
    if not demo:
        return True
    shipped = (demo_memory_dir() / "playbook.md").read_bytes()
    return repo.playbook_path.is_file() and repo.playbook_path.read_bytes() == shipped


def _refuse_existing(repo: MemoryRepo) -> None:
    _refuse_linked_memory(repo)
    if repo.playbook_path.exists() or repo.episodes_dir.exists():
        raise UsageError(
            f"{repo.memory_rel}/ already holds a Scarwarden memory in {repo.root}",
            hint="nothing to do; 'scarwarden rule list' shows the playbook",
        )
    if repo.memory_dir.exists() and not repo.memory_dir.is_dir():
        raise UsageError(
            f"{repo.memory_rel} in {repo.root} is a file, not a folder",
            hint="move it away, or choose another folder with memory_dir in scarwarden.yaml",
        )
    _refuse_missing(repo)


def _refuse_linked_memory(repo: MemoryRepo) -> None:
    """A memory folder that is a symbolic link (or under one) is refused before anything
    is written: git adds no file beyond a link, so the files written through it (perhaps
    outside the repository) could never be committed."""
    folder = repo.root
    for part in Path(repo.memory_rel).parts:
        folder = folder / part
        if folder.is_symlink():
            raise UsageError(
                f"{folder.relative_to(repo.root).as_posix()} in {repo.root} is a symbolic link "
                f"(to {os.readlink(folder)}): git commits no file beyond a link, so the memory "
                "must be a real folder; nothing was written",
                hint="remove the link and run init again, or choose another folder with "
                "memory_dir in scarwarden.yaml",
            )


def _refuse_missing(repo: MemoryRepo) -> None:
    """A memory git has (the last commit's, or the index's) but the working tree lacks
    (deleted by hand, or left out of a sparse checkout) is not missing: an empty one
    committed over it would drop every rule ID, which the gate forbids."""
    from scarwarden import git

    head_spec = f"HEAD:{repo.memory_rel}"
    if git.tree_ids(repo.root, [head_spec])[head_spec] is None and git.head(repo.root) is not None:
        if git.ls_tree(repo.root, "HEAD", repo.memory_rel):  # no folder, yet an entry of its name
            raise UsageError(
                f"{repo.memory_rel} in the last commit is a submodule or a file, not a folder",
                hint="choose another folder for the memory with memory_dir in scarwarden.yaml",
            )
    specs = [head_spec, f":{repo.playbook_rel}"]
    if not any(git.objects_exist(repo.root, specs).values()):
        return
    if git.config_get(repo.root, "core.sparseCheckout", kind="bool") == "true":
        hint = f"this checkout is sparse and leaves it out: git sparse-checkout add {repo.memory_rel}"
    else:
        hint = f"restore it: git restore --source=HEAD --staged --worktree -- {repo.memory_rel}"
    raise UsageError(
        f"{repo.memory_rel}/ is missing from the working tree, while the last commit has it "
        f"({repo.root}); init would commit an empty memory over it",
        hint=hint,
    )


def _plan(repo: MemoryRepo, demo: bool) -> list[Planned]:
    """Every file init writes, with its bytes, in the order reported."""
    planned: list[Planned] = []
    if demo:
        source = demo_memory_dir()
        # The episodes, and the images two of them attach (issue 19).
        shipped = [*(source / "episodes").rglob("*.yaml"), *(source / "media").glob("*.*")]
        for path in sorted(shipped):
            rel = path.relative_to(source).as_posix()
            planned.append(Planned(f"{repo.memory_rel}/{rel}", path.read_bytes()))
        planned.append(Planned(repo.playbook_rel, (source / "playbook.md").read_bytes()))
    else:
        planned.append(Planned(f"{repo.episodes_rel}/.gitkeep", b""))
        planned.append(Planned(repo.playbook_rel, EMPTY_PLAYBOOK.encode()))
    from scarwarden.git.merge import attribute_pattern

    media = attribute_pattern(f"{repo.memory_rel}/media/**")  # a space in memory_dir is quoted
    for name, line in ((".gitignore", IGNORE_LINE), (".gitattributes", ATTRIBUTES_LINE)):
        path = repo.root / name
        extended = _with_line(_existing(path), line.format(media=media))
        if extended is not None:
            _refuse_link(path, line.format(media=media))
            planned.append(Planned(name, extended))
    return planned


def _existing(path: Path) -> bytes | None:
    """The file's bytes, or None when there is none; a FIFO, socket or device is refused
    (``ENXIO``, one line at the boundary) rather than read, which would wait forever."""
    try:
        return read_regular(path)
    except FileNotFoundError:
        return None


def _refuse_link(path: Path, line: str) -> None:
    """A ``.gitignore`` or ``.gitattributes`` that is a symbolic link (dotfiles kept as
    links to a shared file) is refused rather than written: git (2.32 on) does not read
    one that is a link, so the line written through it would not take effect, and a
    file written in its place would lose the link."""
    if not path.is_symlink():
        return
    name = path.name
    raise UsageError(
        f"{name} is a symbolic link (to {os.readlink(path)}): init would add the line {line!r} "
        f"to it, but git does not read a {name} that is a symbolic link, and writing a file "
        "in its place would lose the link; nothing was written",
        hint=f"make {name} a regular file holding the lines you share "
        f'(cp --remove-destination "$(readlink {name})" {name}), then run init again',
    )


def _write(repo: MemoryRepo, planned: list[Planned], message: str | None) -> str | None:
    """Journalled, and committed through a temporary index as every write is (issue
    15): the user's staged changes stay staged and out of the commit, the hooks judge
    the tree before HEAD moves, and a refused or killed init leaves the repository as it
    was (a ``.gitignore`` of the user's included). With no commit yet, the
    compare-and-swap is "the branch must not exist" (``update-ref HEAD <new> ""``).
    ``message=None`` (``--no-commit``): staged instead, in one step a kill cannot cut."""
    memory_existed = repo.memory_dir.exists()
    paths = [item.path for item in planned]
    with write_lock(repo):
        journal = write_journal.begin(repo, planned)
        try:
            for item in planned:
                atomic_write(repo.root / item.path, item.data)
            if message is None:
                write_journal.stage(repo, journal, paths)
                return None
            return write_journal.commit(repo, journal, message, paths)
        except BaseException:
            if write_journal.recover(repo) != "rolled forward":
                if not memory_existed:
                    shutil.rmtree(repo.memory_dir, ignore_errors=True)  # only ours was in it
                else:
                    _remove_if_empty(repo.memory_dir / "media")
            raise


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass  # missing, or it holds files that are not ours


def _with_line(before: bytes | None, text: str) -> bytes | None:
    """``before`` with ``text`` as a line at the end, or None when the line is there
    already (bytes throughout: a file that is not UTF-8 or has CRLF keeps its bytes, and
    the line ends as the file's first line does, so a CRLF file stays CRLF)."""
    existing = before or b""
    line = text.encode()
    if line in (raw.rstrip(b"\r") for raw in existing.splitlines()):
        return None
    first = existing.split(b"\n", 1)
    newline = b"\r\n" if len(first) == 2 and first[0].endswith(b"\r") else b"\n"
    sep = b"" if not existing or existing.endswith(b"\n") else newline
    return existing + sep + line + newline
