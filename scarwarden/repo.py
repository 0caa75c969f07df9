"""Locating a memory repository and the paths inside it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scarwarden import git
from scarwarden.config import Config, load_config
from scarwarden.errors import UsageError

INDEX_DIR = ".scarwarden"


@dataclass(frozen=True)
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

    def is_initialised(self) -> bool:
        return self.playbook_path.is_file() or self.episodes_dir.is_dir()

    def require_initialised(self) -> MemoryRepo:
        if not self.is_initialised():
            raise UsageError(
                f"no Scarwarden memory in {self.root} (no {self.playbook_rel})",
                hint="run 'scarwarden init' (or 'scarwarden init --demo') in this repository",
            )
        return self


def open_repo(path: Path | str = ".", *, initialised: bool = True) -> MemoryRepo:
    """The memory repository containing ``path``.

    Raises :class:`UsageError` outside a git repository, and (with ``initialised``)
    where no memory has been set up yet.
    """
    root = git.require_toplevel(Path(path).absolute())  # messages name a real path, not "."
    repo = MemoryRepo(root, load_config(root))
    return repo.require_initialised() if initialised else repo
