from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from scarwarden import git
from scarwarden.cli.commands._common import echo_json, get_repo
from scarwarden.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from scarwarden.files.scaffold import InitResult
    from scarwarden.repo import MemoryRepo


@click.command()
@click.option("--demo", is_flag=True, help="Start from the bundled demo ledger and playbook.")
@click.option("--no-commit", is_flag=True, help="Stage the new files instead of committing.")
@click.option(
    "--hooks/--no-hooks",
    "hooks",
    default=None,
    help="Install the pre-commit gate too (asked on a terminal when not given).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@click.pass_context
def init(ctx: click.Context, demo: bool, no_commit: bool, hooks: bool | None, as_json: bool) -> None:
    """Make the current git repository a memory repository.

    Creates memory/episodes/ and memory/playbook.md, adds .scarwarden/ (the index
    cache) to .gitignore and commits the result. On a terminal it offers to install
    the provenance gate as a git hook (--hooks/--no-hooks decide without asking).
    Run again where the memory already is, it says so and exits 0 (--hooks still
    installs the gate); --demo over a memory that is not the demo's is refused (exit 2).

    \b
    Examples:
      scarwarden init
      scarwarden init --demo --hooks
    """
    from scarwarden.files.scaffold import already_initialised
    from scarwarden.files.scaffold import init as do_init

    repo = get_repo(ctx, initialised=False)
    if already_initialised(repo, demo=demo):
        _again(ctx, repo, demo, hooks, as_json)
        return
    if demo and (repo.playbook_path.exists() or repo.episodes_dir.exists()):
        raise UsageError(
            f"{repo.memory_rel}/ already holds a Scarwarden memory in {repo.root}, not the demo's",
            hint="the demo memory goes in a new git repository of its own: git init ~/sw-demo && "
            "scarwarden -C ~/sw-demo init --demo (or scarwarden demo --keep ~/sw-demo)",
        )
    result = do_init(repo, demo=demo, commit=not no_commit)
    from scarwarden.gate.merge_driver import install_merge_driver

    install_merge_driver(repo.root, repo.playbook_rel)  # per clone: nothing in the tree
    git.apply_scale_settings(repo.root)  # git's settings for many files (docs/scaling.md)
    if hooks is None:
        hooks = (
            sys.stdin.isatty()
            and not as_json
            and click.confirm("Install the provenance gate as a git pre-commit hook?", default=True)
        )
    installed, hook_error = _install_hook(repo) if hooks else (None, None)
    if as_json:
        echo_json(
            {
                "commit": result.commit,
                "files": result.files,
                "demo": demo,
                "hook": installed,
                "hook_error": hook_error and hook_error.message,
            }
        )
    else:
        _print_init(repo, result, demo, installed, hook_error)
    if hook_error is not None:
        # The memory is there; only the hook is missing. Say so, and exit 2 as the
        # hook install would have: the user asked for something that did not happen.
        click.echo(hook_error.render(), err=True)
        click.echo("The memory is initialised; the gate was not installed.", err=True)
        ctx.exit(int(hook_error.exit_code))


def _again(ctx: click.Context, repo: MemoryRepo, demo: bool, hooks: bool | None, as_json: bool) -> None:
    """A second ``init`` (issue 28): nothing to create, so say so and exit 0, as scripts
    that run ``init`` before every job expect; ``--hooks`` still installs the gate."""
    from scarwarden.gate.merge_driver import install_merge_driver

    install_merge_driver(repo.root, repo.playbook_rel)  # per clone: a fresh clone needs it
    installed, hook_error = _install_hook(repo) if hooks else (None, None)
    message = f"{repo.memory_rel}/ already holds a Scarwarden memory in {repo.root}: nothing to do"
    if as_json:
        echo_json(
            {
                "commit": None,
                "files": [],
                "demo": demo,
                "already_initialised": True,
                "hook": installed,
                "hook_error": hook_error and hook_error.message,
            }
        )
    else:
        click.echo(message)
        if installed:
            click.echo(f"Installed the pre-commit gate at {installed}")
        click.echo("Next: scarwarden rule list   (the playbook), scarwarden episode list")
    if hook_error is not None:
        click.echo(hook_error.render(), err=True)
        ctx.exit(int(hook_error.exit_code))


def _install_hook(repo: MemoryRepo) -> tuple[str | None, UsageError | None]:
    """The pre-commit gate's path once installed, or why it could not be."""
    from scarwarden.gate.hooks import install

    try:
        return str(install(repo.root)), None
    except UsageError as exc:  # core.hooksPath set, or a foreign hook in the way
        return None, exc


def _print_init(
    repo: MemoryRepo, result: InitResult, demo: bool, installed: str | None, hook_error: UsageError | None
) -> None:
    """What was created and committed, the hook, and what to do next."""
    what = "demo memory" if demo else "an empty memory"
    click.echo(f"Initialised {what} in {repo.root / repo.memory_rel}")
    if result.commit:
        click.echo(f"Committed {len(result.files)} file(s) as {result.commit[:10]}")
    else:
        click.echo(f"Staged {len(result.files)} file(s); commit them when ready")
    if installed:
        click.echo(f"Installed the pre-commit gate at {installed}")
    from scarwarden.gate.hooks import hooks_dir, is_ours

    there = hooks_dir(repo.root)[0] / "pre-commit"
    gated = not installed and not hook_error and is_ours(there)  # 'hooks install' came first
    if gated:
        click.echo(f"The provenance gate is installed: {there}")
    step = "Next"
    if not result.commit:  # distill builds on the committed playbook: commit comes first
        click.echo("Next: git commit -m 'scarwarden: initialise memory'   (the staged files)")
        step = "Then"
    click.echo(f"{step}: scarwarden episode add --task ... --correction ...   (see --help)")
    if not installed and not hook_error and not gated:
        click.echo("      scarwarden hooks install   (the provenance gate on every commit)")
