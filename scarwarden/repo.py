"""Locating a memory repository and the paths inside it."""

from __future__ import annotations

import os
from pathlib import Path

from scarwarden import git
from scarwarden.config import CONFIG_FILE, Config, load_config
from scarwarden.errors import UsageError
from scarwarden.records import record

INDEX_DIR = ".scarwarden"


@record(frozen=True)
class MemoryRepo:
    """A git work tree that holds (or will hold) a Scarwarden memory."""

    root: Path
    config: Config

    @property
    def memory_rel(self) -> str:
        return self.config.memory_dir

    @property
    def episodes_rel(self) -> str:
        return f"{self.config.memory_dir}/episodes"

    @property
    def playbook_rel(self) -> str:
        return f"{self.config.memory_dir}/playbook.md"

    @property
    def memory_dir(self) -> Path:
        return self.root / self.memory_rel

    @property
    def episodes_dir(self) -> Path:
        return self.root / self.episodes_rel

    @property
    def playbook_path(self) -> Path:
        return self.root / self.playbook_rel

    @property
    def state_dir(self) -> Path:
        return self.root / INDEX_DIR

    @property
    def index_path(self) -> Path:
        return self.state_dir / "index.db"

    def refuse_own_files(self, path: Path | str, option: str) -> None:
        """Refuse (exit 2) an output ``path`` that, resolved (symlinks and '..' followed),
        would damage the repository: inside its git directory, the memory folder
        or the state folder (.scarwarden/), or onto scarwarden.yaml. ``option`` names
        the path in the message (``--output``)."""
        if not str(path):
            raise UsageError(f"{option} is empty: give the path to write to")
        target = Path(os.path.realpath(path))  # not resolve(): a symlink loop is left to the write to name
        shown = _shown(self.root, Path(path))
        guarded = [(d, "the git directory") for d in (*git.git_dirs(self.root), self.root / ".git")]
        guarded += [
            (self.memory_dir, f"the memory folder ({self.memory_rel}/)"),
            (self.state_dir, f"Scarwarden's state folder ({INDEX_DIR}/)"),
        ]
        for place, what in guarded:
            place = place.resolve()
            if target == place or place in target.parents:
                raise UsageError(
                    f"{option} {shown}: refusing to write inside {what}",
                    hint=f"give a path outside {self.memory_rel}/, .git and {INDEX_DIR}/",
                )
        if target == (self.root / CONFIG_FILE).resolve():
            raise UsageError(
                f"{option} {shown}: refusing to write over the settings ({CONFIG_FILE})",
                hint="give another path",
            )

    def is_initialised(self) -> bool:
        return self.playbook_path.is_file() or self.episodes_dir.is_dir()

    def require_initialised(self) -> MemoryRepo:
        if not self.is_initialised():
            raise UsageError(
                f"no Scarwarden memory in {self.root} (no {self.playbook_rel})",
                hint="run 'scarwarden init' (or 'scarwarden init --demo') in this repository",
            )
        return self


def _shown(root: Path, path: Path) -> str:
    """``path`` for a message: relative to the repository when inside it (not resolved:
    the name the user gave, a symlink's own)."""
    try:
        return path.absolute().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def open_repo(path: Path | str = ".", *, initialised: bool = True) -> MemoryRepo:
    """The memory repository containing ``path``.

    Raises :class:`UsageError` outside a git repository, and (with ``initialised``)
    where no memory has been set up yet.
    """
    root = git.require_toplevel(Path(path).absolute())  # messages name a real path, not "."
    repo = MemoryRepo(root, load_config(root))
    return repo.require_initialised() if initialised else repo
