"""The command-line face: the click group, its error boundary, one module per command."""

from scarwarden.cli.main import COMMANDS, main, main_group

__all__ = ["COMMANDS", "main", "main_group"]
