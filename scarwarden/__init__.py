"""Scarwarden: an auditable, git-native memory engine for AI agents.

No provenance, no rule: every rule in the playbook cites the episodes that taught it,
and code (not a prompt) checks that those citations resolve.

The Python API (:mod:`scarwarden.api`, docs/python.md) is importable from here
(``scarwarden.open_memory``, ``scarwarden.Memory``...), loaded on first use so that
``scarwarden --help`` does not pay for it.
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from scarwarden.api import (
        RECORD_FIELDS as RECORD_FIELDS,
    )
    from scarwarden.api import (
        ConfigError as ConfigError,
    )
    from scarwarden.api import (
        Distillation as Distillation,
    )
    from scarwarden.api import (
        EpisodeRecord as EpisodeRecord,
    )
    from scarwarden.api import (
        ExitCode as ExitCode,
    )
    from scarwarden.api import (
        FileAccessError as FileAccessError,
    )
    from scarwarden.api import (
        GitError as GitError,
    )
    from scarwarden.api import (
        ImportResult as ImportResult,
    )
    from scarwarden.api import (
        Memory as Memory,
    )
    from scarwarden.api import (
        ModelError as ModelError,
    )
    from scarwarden.api import (
        ModelUnreachable as ModelUnreachable,
    )
    from scarwarden.api import (
        NoModelConfigured as NoModelConfigured,
    )
    from scarwarden.api import (
        Recall as Recall,
    )
    from scarwarden.api import (
        RecalledRule as RecalledRule,
    )
    from scarwarden.api import (
        Recorded as Recorded,
    )
    from scarwarden.api import (
        Rule as Rule,
    )
    from scarwarden.api import (
        ScarwardenError as ScarwardenError,
    )
    from scarwarden.api import (
        UsageError as UsageError,
    )
    from scarwarden.api import (
        ValidationError as ValidationError,
    )
    from scarwarden.api import (
        open_memory as open_memory,
    )

#: The API's names (``scarwarden.api.__all__``: a test holds them equal), loaded on first
#: use. A fixed list: ``from scarwarden import git`` asks this module's ``__getattr__``
#: for ``git`` before importing the submodule, and must not import the API.
_API = frozenset(
    (
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
    )
)
__all__ = ["__version__", *sorted(_API)]


def __getattr__(name: str) -> Any:
    if name in _API:
        from scarwarden import api

        return getattr(api, name)
    raise AttributeError(f"module 'scarwarden' has no attribute {name!r}")
