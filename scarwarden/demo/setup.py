"""The demo's throwaway repository: a fresh git repository holding the demo memory."""

from __future__ import annotations

from pathlib import Path

from scarwarden import git
from scarwarden.repo import MemoryRepo, open_repo


def make_demo_repo(parent: Path) -> MemoryRepo:
    """A throwaway git repository holding the bundled demo memory, committed."""
    from scarwarden.files.scaffold import init

    root = parent / "demo-memory"
    root.mkdir()
    env = git.no_git_env()
    git.init_repo(root, env=env)
    # The demo must work on a machine with no git identity configured.
    git.set_config(root, "user.name", "Scarwarden demo", env=env)
    git.set_config(root, "user.email", "demo@scarwarden.invalid", env=env)
    git.set_config(root, "commit.gpgsign", "false", env=env)
    repo = open_repo(root, initialised=False)
    init(repo, demo=True)
    return open_repo(root)
