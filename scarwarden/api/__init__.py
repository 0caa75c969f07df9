"""Scarwarden from Python: open a memory, recall, record, answer, distil, read.

::

    import scarwarden

    memory = scarwarden.open_memory(".")
    recall = memory.recall("Post our discount code on Twitter")
    memory.record("Post our discount code on Twitter", action="Kept the code out",
                  rules_applied=[r.id for r in recall.rules], receipt=recall.receipt)

See docs/python.md: every function, its result and its exceptions, the stability
promise, and thread and process safety.
"""

from __future__ import annotations

from scarwarden.api.memory import RECORD_FIELDS, Memory, open_memory
from scarwarden.api.results import Distillation, EpisodeRecord, Recall, RecalledRule, Recorded, Rule
from scarwarden.errors import (
    ConfigError,
    ExitCode,
    FileAccessError,
    GitError,
    ModelError,
    ModelUnreachable,
    NoModelConfigured,
    ScarwardenError,
    UsageError,
    ValidationError,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from scarwarden.files.transcripts.importer import ImportResult

__all__ = [
    "RECORD_FIELDS",
    "ConfigError",
    "Distillation",
    "EpisodeRecord",
    "ExitCode",
    "FileAccessError",
    "GitError",
    "ImportResult",
    "Memory",
    "ModelError",
    "ModelUnreachable",
    "NoModelConfigured",
    "Recall",
    "RecalledRule",
    "Recorded",
    "Rule",
    "ScarwardenError",
    "UsageError",
    "ValidationError",
    "open_memory",
]


def __getattr__(name: str) -> Any:
    # The importer (with the write path: record, media, the secret scan) is loaded on
    # first use: a one-shot `scarwarden recall` goes through Memory and never needs it
    # (~15 ms of its start-up).
    if name == "ImportResult":
        from scarwarden.files.transcripts.importer import ImportResult

        return ImportResult
    raise AttributeError(f"module 'scarwarden.api' has no attribute {name!r}")
