"""The SQLite index: a cache of the memory files, never their source.

``.scarwarden/index.db`` holds episodes, rules, citations both ways, tags, full-text
search over episodes and the postings recall scores with. It is rebuilt from the files
alone and refreshed incrementally before every read:

* committed changes: ``git diff --name-status <indexed commit> HEAD`` (a few ms);
* files added or removed in the working tree (staged or not): each episode month
  folder's mtime is remembered, and only folders whose mtime moved are listed (a file
  there saved by rename has a new inode: only such files are compared); the listing is
  compared with the index's rows for the folder only when it does not sum to what was
  kept, less the files the refresh reads anyway (:mod:`~scarwarden.index.folders`);
* the playbook: its (size, mtime, inode) signature; when it moved, only the rules whose
  content changed get new postings;
* after a rebase or a reset that lost the indexed commit: stored blob IDs are compared
  with ``git ls-files -s`` (slower, still no re-parse of unchanged files).

A missing, corrupt or old-schema index is rebuilt without being asked, in a temporary
file swapped in with ``os.replace``, so a concurrent reader never sees half an index.
A rebuild streams the blobs out of one ``git cat-file --batch`` and, on a large ledger,
parses them in two forked worker processes (:mod:`scarwarden.index.load`; figures in
``bench/ledger_bench.py``).

The modules: :mod:`~scarwarden.index.schema` (the file, its schema, lock and
transactions), :mod:`~scarwarden.index.scan` (folders, files and signatures on disk),
:mod:`~scarwarden.index.rules` (the playbook's tables), :mod:`~scarwarden.index.load`
(bulk parsing), :mod:`~scarwarden.index.build` (a full rebuild),
:mod:`~scarwarden.index.lineage` (each rule's applications and their counts),
:mod:`~scarwarden.index.refresh` (:func:`open_index` and the incremental refresh),
:mod:`~scarwarden.index.folders` (the folders whose mtime moved) and
:mod:`~scarwarden.index.queries` (the :class:`Index` and its queries).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from scarwarden.git import blob_id
    from scarwarden.index.build import rebuild
    from scarwarden.index.queries import Index, fts_query
    from scarwarden.index.refresh import open_index
    from scarwarden.index.rules import rule_terms
    from scarwarden.index.scan import RACY_NS
    from scarwarden.index.schema import SCHEMA, SCHEMA_VERSION, RefreshStats, writer_lock

#: Each name this package exports -> the module it comes from, imported on first use
#: (PEP 562): a recall, which refreshes and reads, never imports what a rebuild needs.
#: (Not ``refresh``: importing the submodule of that name binds the package's attribute
#: to the module, which a lazy export could not override; it is ``index.refresh.refresh``.)
_FROM = {
    "blob_id": "scarwarden.git",
    "rebuild": "scarwarden.index.build",
    "Index": "scarwarden.index.queries",
    "fts_query": "scarwarden.index.queries",
    "open_index": "scarwarden.index.refresh",
    "rule_terms": "scarwarden.index.rules",
    "RACY_NS": "scarwarden.index.scan",
    "SCHEMA": "scarwarden.index.schema",
    "SCHEMA_VERSION": "scarwarden.index.schema",
    "RefreshStats": "scarwarden.index.schema",
    "writer_lock": "scarwarden.index.schema",
}


def __getattr__(name: str) -> Any:
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "RACY_NS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "Index",
    "RefreshStats",
    "blob_id",
    "fts_query",
    "open_index",
    "rebuild",
    "rule_terms",
    "writer_lock",
]
