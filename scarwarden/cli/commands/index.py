from __future__ import annotations

import time

import click

from scarwarden.cli.commands._common import echo_json, get_repo
from scarwarden.repo import MemoryRepo


@click.command("index")
@click.option("--rebuild", is_flag=True, help="Rebuild from the files instead of refreshing.")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@click.pass_context
def index_cmd(ctx: click.Context, rebuild: bool, as_json: bool) -> None:
    """Refresh or rebuild the SQLite index (.scarwarden/index.db).

    The index is a cache: it is rebuilt from the memory files, never the other way
    round, and every read refreshes it first, so you rarely need this command.
    When the playbook does not parse, the episodes are still indexed, the rules
    stay those of the last playbook that parsed, and the command says why and
    exits 1 (recall refuses until the playbook is fixed).

    \b
    Examples:
      scarwarden index
      scarwarden index --rebuild
    """
    from scarwarden.cli.commands._progress import progress_bar
    from scarwarden.index import open_index

    repo = get_repo(ctx)
    start = time.perf_counter()
    with (
        progress_bar("indexing episodes", quiet=as_json) as progress,  # a bar on a terminal only
        open_index(repo, rebuild_now=rebuild, progress=progress) as index,
    ):
        stats = index.stats
        episodes = index.episode_count()
        rules = int(index.meta("rule_count") or 0)  # kept by the refresh: no rule read
        commit = index.indexed_commit
        playbook_error = index.playbook_error()
    elapsed = time.perf_counter() - start
    data = {
        "mode": stats.mode,
        "reason": stats.reason,
        "episodes": episodes,
        "rules": rules,
        "episodes_indexed": stats.episodes_added,
        "episodes_removed": stats.episodes_removed,
        "rules_changed": stats.rules_changed,
        "invalid_files": stats.invalid_files,
        "commit": commit,
        "seconds": round(elapsed, 3),
        "path": str(repo.index_path),
        "playbook_error": playbook_error,
    }
    if as_json:
        echo_json(data)
        _refuse_unparsed(playbook_error, repo, shown=True)
        return
    what = "Rebuilt" if stats.mode == "rebuild" else "Refreshed"
    click.echo(
        f"{what} {repo.index_path} in {elapsed:.2f}s: {episodes} episodes, {rules} rules"
        f" ({stats.episodes_added} episode(s) indexed, {stats.rules_changed} rule(s) changed)"
    )
    if stats.invalid_files:
        click.echo(
            f"{len(stats.invalid_files)} invalid file(s) skipped; 'scarwarden check --all' explains "
            "each that is committed or staged ('git add' a new one first)",
            err=True,
        )
    _refuse_unparsed(playbook_error, repo, shown=False)


def _refuse_unparsed(error: str | None, repo: MemoryRepo, *, shown: bool) -> None:
    """Exit 1 when the playbook did not parse: the index holds the last one that did,
    which recall refuses to use (``shown``: the JSON already carries the error)."""
    if error is None:
        return
    from scarwarden.errors import ValidationError
    from scarwarden.index.queries import unparsed_hint

    raise ValidationError(
        error if not shown else "the playbook does not parse (see playbook_error)",
        hint=f"the index keeps the rules of the last playbook that parsed; {unparsed_hint(repo)}",
    )
