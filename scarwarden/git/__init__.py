"""The only place git is called: one small function per question.

Everything here runs the git binary through ``subprocess``; importing GitPython costs
~90 ms and its object reads are 8-13x slower than ``ls-files``/``cat-file --batch``
(shared/NOTES.md), so the hot paths (index refresh, recall, the hook) never touch it.
Output is read with ``-z`` and split on NUL wherever paths are involved.

Callers write ``from scarwarden import git`` and ``git.question(...)``; the modules:

* :mod:`~scarwarden.git.run`: starting git (``run``, ``run_ok``: for this package only);
* :mod:`~scarwarden.git.repository`: where the repository is, HEAD, its settings;
* :mod:`~scarwarden.git.read`: listings of the index, trees and work tree; objects;
* :mod:`~scarwarden.git.diff`: what changed between commits, the index and the tree;
* :mod:`~scarwarden.git.history`: log, ancestry, trailers;
* :mod:`~scarwarden.git.write`: staging, committing, refs, commits built off the tree;
* :mod:`~scarwarden.git.index_commit`: committing through a temporary index, and the
  steps a kill must not cut in half (their shell: :mod:`~scarwarden.git.staging`);
* :mod:`~scarwarden.git.temps`: our temporary files in the git directory, named by PID
  so a killed run's leftovers are removed.
"""

from __future__ import annotations

import importlib

from scarwarden.errors import GitError

# Eager: every question starts git through it, and the module's name is the function's
# (imported lazily, the submodule would be bound as ``git.run`` in the function's place).
from scarwarden.git.run import no_git_env, run, run_ok

TYPE_CHECKING = False
if TYPE_CHECKING:  # what each name is, for type checkers; at run time, read on first use
    from typing import Any

    from scarwarden.git.diff import (
        EMPTY_TREE,
        EMPTY_TREE_SHA256,
        Change,
        RawChange,
        diff_cached,
        diff_name_status,
        diff_raw,
        diff_tree_pairs,
        empty_tree,
        has_uncommitted_changes,
        nothing_staged,
    )
    from scarwarden.git.history import (
        LogEntry,
        commit_paths,
        is_ancestor,
        log,
        merge_base,
        path_blobs,
        path_trees,
        range_non_commits,
        rev_list,
        rev_list_with_parents,
        show_stat,
        trailers,
    )
    from scarwarden.git.read import (
        StagedEntry,
        blob_id,
        blob_ids,
        cat_file_batch,
        cat_file_stream,
        files_named,
        ls_files_modified,
        ls_files_stage,
        ls_others,
        ls_subfolders,
        ls_tree,
        ls_tree_dirs,
        object_exists,
        objects_exist,
        show_file,
        tree_id,
        tree_ids,
    )
    from scarwarden.git.repository import (
        config_get,
        current_branch,
        git_dir,
        git_dirs,
        git_path,
        head,
        init_repo,
        require_toplevel,
        rev_parse,
        set_config,
        toplevel,
    )
    from scarwarden.git.scale import apply_scale_settings
    from scarwarden.git.write import (
        add,
        commit,
        commit_tree,
        create_branch,
        delete_ref,
        reset_soft,
        restore_index_entry,
        stage_bytes,
        store_files,
        temporary_index,
        unstage,
        valid_branch_name,
        write_tree,
    )

#: Each name -> the module of this package that defines it. A name is imported on its
#: first use (PEP 562): a command that runs one git question does not import the
#: modules for the others (every command starts by importing this package).
_WHERE = {
    "EMPTY_TREE": "diff",
    "EMPTY_TREE_SHA256": "diff",
    "Change": "diff",
    "RawChange": "diff",
    "diff_cached": "diff",
    "diff_name_status": "diff",
    "diff_raw": "diff",
    "diff_tree_pairs": "diff",
    "empty_tree": "diff",
    "has_uncommitted_changes": "diff",
    "nothing_staged": "diff",
    "LogEntry": "history",
    "commit_paths": "history",
    "is_ancestor": "history",
    "log": "history",
    "merge_base": "history",
    "path_blobs": "history",
    "path_trees": "history",
    "range_non_commits": "history",
    "rev_list": "history",
    "rev_list_with_parents": "history",
    "show_stat": "history",
    "trailers": "history",
    "StagedEntry": "read",
    "blob_id": "read",
    "blob_ids": "read",
    "cat_file_batch": "read",
    "cat_file_stream": "read",
    "files_named": "read",
    "ls_files_modified": "read",
    "ls_files_stage": "read",
    "ls_others": "read",
    "ls_subfolders": "read",
    "ls_tree": "read",
    "ls_tree_dirs": "read",
    "object_exists": "read",
    "objects_exist": "read",
    "show_file": "read",
    "tree_id": "read",
    "tree_ids": "read",
    "config_get": "repository",
    "current_branch": "repository",
    "git_dir": "repository",
    "git_dirs": "repository",
    "git_path": "repository",
    "head": "repository",
    "init_repo": "repository",
    "require_toplevel": "repository",
    "rev_parse": "repository",
    "set_config": "repository",
    "toplevel": "repository",
    "apply_scale_settings": "scale",
    "add": "write",
    "commit": "write",
    "commit_tree": "write",
    "create_branch": "write",
    "delete_ref": "write",
    "reset_soft": "write",
    "restore_index_entry": "write",
    "stage_bytes": "write",
    "store_files": "write",
    "temporary_index": "write",
    "unstage": "write",
    "valid_branch_name": "write",
    "write_tree": "write",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next use is a plain lookup
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


__all__ = [
    "EMPTY_TREE",
    "EMPTY_TREE_SHA256",
    "apply_scale_settings",
    "Change",
    "GitError",
    "LogEntry",
    "RawChange",
    "StagedEntry",
    "blob_id",
    "add",
    "cat_file_batch",
    "cat_file_stream",
    "commit",
    "commit_paths",
    "commit_tree",
    "config_get",
    "create_branch",
    "current_branch",
    "delete_ref",
    "diff_cached",
    "diff_name_status",
    "diff_raw",
    "diff_tree_pairs",
    "empty_tree",
    "files_named",
    "git_dir",
    "git_dirs",
    "git_path",
    "has_uncommitted_changes",
    "head",
    "init_repo",
    "is_ancestor",
    "log",
    "ls_files_modified",
    "ls_files_stage",
    "ls_others",
    "ls_subfolders",
    "ls_tree",
    "ls_tree_dirs",
    "merge_base",
    "path_blobs",
    "path_trees",
    "range_non_commits",
    "no_git_env",
    "nothing_staged",
    "object_exists",
    "objects_exist",
    "require_toplevel",
    "reset_soft",
    "restore_index_entry",
    "rev_list",
    "rev_list_with_parents",
    "rev_parse",
    "run",
    "run_ok",
    "set_config",
    "show_file",
    "tree_id",
    "blob_ids",
    "tree_ids",
    "show_stat",
    "stage_bytes",
    "store_files",
    "temporary_index",
    "toplevel",
    "trailers",
    "unstage",
    "valid_branch_name",
    "write_tree",
]
