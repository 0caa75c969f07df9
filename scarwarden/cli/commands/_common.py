"""Helpers shared by the command modules: repo lookup, JSON output, formatting."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import click

from scarwarden.repo import MemoryRepo, open_repo

if TYPE_CHECKING:
    # Types only: every command imports this module, and the episode and playbook
    # modules pull in YAML, which `check`, `verify`, `hooks` and `log` do not need.
    from scarwarden.files.episodes import Episode
    from scarwarden.files.playbook import Rule


def get_repo(ctx: click.Context, *, initialised: bool = True) -> MemoryRepo:
    """The memory repository the command runs in (``--repo`` or the cwd)."""
    root = ctx.find_root()
    path = (root.obj or {}).get("repo_path", ".")
    return open_repo(path, initialised=initialised)


def split_list(values: Iterable[str]) -> list[str]:
    """Repeatable, comma-separated option values as one list: ``--tag a,b --tag c``."""
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def echo_json(data: Any) -> None:
    """Machine output: stable, sorted-as-given keys, UTF-8, one document."""
    import json  # only --json needs it; the hook imports this module on every commit

    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def format_episode(ep: Episode, repo: MemoryRepo | None = None,
                   path: str | None = None) -> str:
    """An episode word for word, as stored (its YAML).

    Given the repository and the file's path, the file itself is shown, comments and
    layout included, as long as it still holds this very episode; otherwise (or
    without them) its canonical rendering.
    """
    if repo is not None and path is not None:
        from scarwarden.errors import ScarwardenError
        from scarwarden.files.episodes import parse_episode_bytes

        try:
            raw = (repo.root / path).read_bytes()
            if parse_episode_bytes(raw, path, episodes_dir=repo.episodes_rel).data == ep.data:
                return raw.decode("utf-8").rstrip("\n")
        except (OSError, ScarwardenError):
            pass
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
