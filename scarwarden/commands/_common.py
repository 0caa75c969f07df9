"""Helpers shared by the command modules: repo lookup, JSON output, formatting."""

from __future__ import annotations

import json
from typing import Any

import click

from scarwarden.episodes import Episode
from scarwarden.playbook import Rule
from scarwarden.repo import MemoryRepo, open_repo


def get_repo(ctx: click.Context, *, initialised: bool = True) -> MemoryRepo:
    """The memory repository the command runs in (``--repo`` or the cwd)."""
    root = ctx.find_root()
    path = (root.obj or {}).get("repo_path", ".")
    return open_repo(path, initialised=initialised)


def echo_json(data: Any) -> None:
    """Machine output: stable, sorted-as-given keys, UTF-8, one document."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def format_episode(ep: Episode) -> str:
    """An episode word for word, as stored (its YAML)."""
    return ep.render().rstrip("\n")


def format_rule(rule: Rule) -> str:
    lines = [click.style(f"{rule.id}: {rule.title}", bold=True)]
    if rule.retired:
        lines[0] += click.style("  (retired)", fg="yellow")
    lines.append(rule.text)
    lines.append(f"  tags: {', '.join(rule.tags) or '-'}")
    lines.append(f"  learnt in: {', '.join(rule.episode_ids)}")
    if rule.retired:
        lines.append(f"  retired: {rule.reason}")
        if rule.replaced_by:
            lines.append(f"  replaced by: {rule.replaced_by}")
    return "\n".join(lines)
