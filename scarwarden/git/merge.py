"""Merging files and registering a merge driver (the playbook's three-way merge)."""

from __future__ import annotations

from pathlib import Path

from scarwarden.git.repository import config_get, git_path, set_config
from scarwarden.git.run import run_ok


def merge_file(current: Path, base: Path, other: Path) -> bool:
    """git's own line merge of three files into ``current`` (``git merge-file``), with
    conflict markers labelled ours/base/theirs; True when it merged cleanly."""
    # git runs in current's folder, so paths relative to ours would be read from there
    current, base, other = current.absolute(), base.absolute(), other.absolute()
    return run_ok(
        current.parent,
        "merge-file",
        "-L",
        "ours",
        "-L",
        "base",
        "-L",
        "theirs",
        str(current),
        str(base),
        str(other),
    )


def merge_driver_command(root: Path | str, name: str) -> str | None:
    """The command registered for merge driver ``name`` (``merge.<name>.driver``)."""
    return config_get(root, f"merge.{name}.driver")


def register_merge_driver(root: Path | str, name: str, description: str, command: str) -> None:
    """Define merge driver ``name`` in the repository's own config."""
    set_config(root, f"merge.{name}.name", description)
    set_config(root, f"merge.{name}.driver", command)


def attribute_pattern(path: str) -> str:
    """``path`` as a gitattributes pattern: C-quoted when it holds a space, a tab, a
    quote or a backslash (unquoted, git reads the pattern as ending at the first space)."""
    if not any(c in path for c in ' \t"\\'):
        return path
    escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
    return f'"{escaped}"'


def info_attributes(root: Path | str) -> Path:
    """``.git/info/attributes``: attributes for this clone only, never committed."""
    where = git_path(root, "info/attributes")
    return where if where.is_absolute() else Path(root) / where


def unregister_merge_driver(root: Path | str, name: str) -> bool:
    """Remove merge driver ``name`` from the repository's config; False when it was
    not defined there."""
    return run_ok(root, "config", "--remove-section", f"merge.{name}")
