"""The command-line face: the click group, its error boundary, one module per command.

``main`` is the console script (:mod:`scarwarden.cli.door`: a plain recall without
click, everything else through the group); ``main_group`` and ``COMMANDS`` are the click
group's, loaded on first use so that a recall never imports click.
"""

from __future__ import annotations

from scarwarden.cli.door import main

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from scarwarden.cli.group import COMMANDS, main_group

__all__ = ["COMMANDS", "main", "main_group"]


def __getattr__(name: str) -> Any:
    if name in ("COMMANDS", "main_group"):
        from scarwarden.cli import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
