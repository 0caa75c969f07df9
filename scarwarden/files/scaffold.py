"""``scarwarden init``: turn a git repository into a memory repository."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from scarwarden import git
from scarwarden.errors import UsageError
from scarwarden.files.atomic import atomic_write
from scarwarden.files.playbook import TITLE
from scarwarden.repo import MemoryRepo

EMPTY_PLAYBOOK = (
    f"{TITLE}\n\n"
    "Rules distilled from the episodes in episodes/. Every rule cites the episodes that\n"
    "taught it; a rule whose citations do not resolve cannot be committed.\n"
)
IGNORE_LINE = ".scarwarden/"
#: Images attached to episodes are binary to git: no diffs, no merges, no EOL changes.
ATTRIBUTES_LINE = "{memory}/media/** binary"


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
    written: list[str] = []
    memory_existed = repo.memory_dir.exists()
    media_existed = (repo.memory_dir / "media").exists()
    gitignore = repo.root / ".gitignore"
    ignore_before = gitignore.read_bytes() if gitignore.exists() else None
    ignore_staged = git.ls_files_stage(repo.root, ".gitignore")
    attributes = repo.root / ".gitattributes"
    attributes_before = attributes.read_bytes() if attributes.exists() else None
    attributes_staged = git.ls_files_stage(repo.root, ".gitattributes")
    repo.episodes_dir.mkdir(parents=True, exist_ok=True)
    try:
        if demo:
            source = demo_memory_dir()
            # The episodes, and the images two of them attach (issue 19).
            shipped = [*(source / "episodes").rglob("*.yaml"), *(source / "media").glob("*.*")]
            for path in sorted(shipped):
                rel = path.relative_to(source)
                target = repo.memory_dir / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
                written.append(f"{repo.memory_rel}/{rel.as_posix()}")
            atomic_write(repo.playbook_path, (source / "playbook.md").read_bytes())
        else:
            keep = repo.episodes_dir / ".gitkeep"
            keep.write_bytes(b"")
            written.append(f"{repo.episodes_rel}/.gitkeep")
            atomic_write(repo.playbook_path, EMPTY_PLAYBOOK.encode())
        written.append(repo.playbook_rel)
        # Bytes throughout: a .gitignore that is not UTF-8 must come back unchanged.
        existing = ignore_before or b""
        line = IGNORE_LINE.encode()
        if line not in (raw.rstrip(b"\r") for raw in existing.splitlines()):
            sep = b"" if not existing or existing.endswith(b"\n") else b"\n"
            gitignore.write_bytes(existing + sep + line + b"\n")
            written.append(".gitignore")
        if _append_line(attributes, attributes_before, ATTRIBUTES_LINE.format(memory=repo.memory_rel)):
            written.append(".gitattributes")
        sha = None
        git.add(repo.root, written)
        if commit:
            kind = "demo memory" if demo else "memory"
            sha = git.commit(repo.root, f"scarwarden: initialise {kind}\n", only=written)
    except BaseException:
        # Leave the repository as we found it: our files gone, the user's untouched.
        git.unstage(repo.root, [p for p in written if p not in (".gitignore", ".gitattributes")])
        if memory_existed:
            shutil.rmtree(repo.episodes_dir, ignore_errors=True)
            repo.playbook_path.unlink(missing_ok=True)
            for written_rel in written:  # the demo's images; a media folder it made goes too
                if written_rel.startswith(f"{repo.memory_rel}/media/"):
                    (repo.root / written_rel).unlink(missing_ok=True)
            if not media_existed:
                _remove_if_empty(repo.memory_dir / "media")
        else:
            shutil.rmtree(repo.memory_dir, ignore_errors=True)
        if ".gitignore" in written:
            _restore_gitignore(repo, ignore_before, ignore_staged)
        if ".gitattributes" in written:
            _restore_gitignore(repo, attributes_before, attributes_staged, ".gitattributes")
        raise
    return InitResult(sha, written, demo)


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass  # missing, or it holds files that are not ours


def _append_line(path: Path, before: bytes | None, text: str) -> bool:
    """Add ``text`` as a line of ``path`` unless it is there (bytes: any encoding survives)."""
    existing = before or b""
    line = text.encode()
    if line in (raw.rstrip(b"\r") for raw in existing.splitlines()):
        return False
    sep = b"" if not existing or existing.endswith(b"\n") else b"\n"
    path.write_bytes(existing + sep + line + b"\n")
    return True


def _restore_gitignore(
    repo: MemoryRepo, before: bytes | None, staged: list[git.StagedEntry], name: str = ".gitignore"
) -> None:
    path = repo.root / name
    if before is None:
        path.unlink(missing_ok=True)
    else:
        atomic_write(path, before)
    if staged:  # put back exactly the index entry the user had
        git.restore_index_entry(repo.root, staged[0])
    else:
        git.unstage(repo.root, [name])
