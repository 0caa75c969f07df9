"""The replay benchmark's corrections: what a failed run should have done, derived by code.

Moved into the package (issue 29) as :mod:`scarwarden.files.transcripts.tau_diff`, which
``scarwarden episode import --format tau-bench`` uses, so the benchmark replays exactly
the episodes the importer gives; every rule is written out in docs/replay.md, "How a
correction is derived". Re-exported here for the benchmark's modules.
"""

from __future__ import annotations

from scarwarden.files.transcripts.tau_diff import (
    CLAUSES,
    KEY_ARGS,
    WRITES,
    Call,
    Item,
    about,
    args_text,
    clause_of,
    derive_items,
    diff_writes,
    id_values,
    leaves,
    make_item,
    norm,
    show,
)

__all__ = [
    "CLAUSES",
    "KEY_ARGS",
    "WRITES",
    "Call",
    "Item",
    "about",
    "args_text",
    "clause_of",
    "derive_items",
    "diff_writes",
    "id_values",
    "leaves",
    "make_item",
    "norm",
    "show",
]
