"""git's own settings for a memory of many files (docs/scaling.md, "git at scale").

A ledger is one file per episode, so git's index grows with it (~100 bytes an entry:
100 MB at a million episodes) and every ``git status`` and commit reads and writes it.
Measured at 100k-1M episodes on 2 cores (git 2.39, ``bench/scale.py``):

* ``feature.manyFiles`` (index version 4, whose path prefixes compress, and the
  untracked cache): ``git status`` 0.63x;
* ``core.splitIndex`` (a commit rewrites a small index beside a shared base instead of
  the whole index): ``episode add`` 0.51x;
* ``index.recordEndOfIndexEntries`` (git writes where its entries end, 24 bytes): the
  pre-commit hook finds the tree ``git commit`` is about to record without reading a
  million entries (:mod:`~scarwarden.git.cache_tree`).

``index.skipHash`` (git 2.40) and ``core.fsmonitor`` (a daemon on macOS and Windows
only) are left to the user. A setting already made, in any git config, is kept.
"""

from __future__ import annotations

from pathlib import Path

from scarwarden.git.repository import config_get, set_config

#: (setting, value) that help a large memory, in the order they are set.
SETTINGS = (
    ("feature.manyFiles", "true"),
    ("core.splitIndex", "true"),
    ("index.recordEndOfIndexEntries", "true"),
)


def apply_scale_settings(root: Path | str) -> list[str]:
    """Set :data:`SETTINGS` in the repository's own config where no config sets them;
    return the settings made (``key=value``)."""
    made = []
    for key, value in SETTINGS:
        if config_get(root, key) is None:
            set_config(root, key, value)
            made.append(f"{key}={value}")
    return made
