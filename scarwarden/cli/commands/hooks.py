from __future__ import annotations

import click

from scarwarden import git
from scarwarden.cli.commands._common import echo_json, get_repo


@click.group()
def hooks() -> None:
    """Install or uninstall the provenance gate as git hooks.

    The gate runs on every 'git commit' (pre-commit) and every merge git commits by
    itself (pre-merge-commit). To use the pre-commit framework instead, see
    docs/gate.md (hook id 'scarwarden-check').

    \b
    Examples:
      scarwarden hooks install
      scarwarden hooks uninstall
    """


@hooks.command("install")
@click.option(
    "--hooks-path-ok", is_flag=True, help="Install into the folder core.hooksPath names instead of refusing."
)
@click.option(
    "--merge-driver",
    "merge_driver_only",
    is_flag=True,
    help="Only register the playbook merge driver (for an existing clone), no hooks.",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@click.pass_context
def install_cmd(ctx: click.Context, hooks_path_ok: bool, merge_driver_only: bool, as_json: bool) -> None:
    """Write .git/hooks/pre-commit (and pre-merge-commit) running the gate.

    Also reference-transaction and pre-push: git runs no pre-commit hook for revert,
    cherry-pick, rebase, am or a fast-forward merge, but every one of them moves a
    branch, and the gate refuses a move onto commits that fail it (bypass once with
    SCARWARDEN_SKIP=1; 'scarwarden verify' still catches it).

    The hook runs 'scarwarden check --staged' with this interpreter, through the gate's
    own entry (python -m scarwarden.gate.hook_main pre-commit: the same check without the
    CLI's start-up), or 'scarwarden' on PATH if it goes away. A hook that was already there is kept as
    <hook>.legacy and runs first; the commit fails if either fails. Running it again
    is harmless. With core.hooksPath set it refuses unless --hooks-path-ok.

    It also registers the playbook merge driver in this clone (.git/info/attributes and
    .git/config), so 'git merge', 'rebase', 'cherry-pick' and 'pull' merge
    memory/playbook.md rule by rule; --merge-driver does only that.

    \b
    Examples:
      scarwarden hooks install
      scarwarden hooks install --hooks-path-ok
      scarwarden hooks install --merge-driver
    """
    from scarwarden.gate.hooks import HOOK_TYPES, REF_HOOK_TYPES, install
    from scarwarden.gate.merge_driver import check_attributes, install_merge_driver

    repo = get_repo(ctx, initialised=False)
    if merge_driver_only:
        setup = install_merge_driver(repo.root, repo.playbook_rel)
        if as_json:
            echo_json({"merge_driver": setup.command, "attributes": str(setup.attributes)})
        else:
            click.echo(f"Registered the playbook merge driver: {setup.attribute_line} in {setup.attributes}")
        return
    check_attributes(repo.root)  # a folder there is refused before any hook is written
    path = install(repo.root, hooks_path_ok=hooks_path_ok)
    setup = install_merge_driver(repo.root, repo.playbook_rel)
    git.apply_scale_settings(repo.root)  # git's settings for many files (docs/scaling.md)
    legacy = [
        str(path.parent / f"{name}.legacy")
        for name in HOOK_TYPES + REF_HOOK_TYPES
        if (path.parent / f"{name}.legacy").exists()
    ]
    if as_json:
        echo_json(
            {
                "hooks": [str(path.parent / n) for n in HOOK_TYPES],
                "legacy": legacy,
                "ref_hooks": [str(path.parent / n) for n in REF_HOOK_TYPES],
                "merge_driver": setup.command,
            }
        )
        return
    click.echo(f"Installed the provenance gate: {path} (and pre-merge-commit)")
    click.echo("Installed reference-transaction and pre-push: every branch move and push is checked too")
    click.echo(f"Registered the playbook merge driver: {setup.attribute_line}")
    for item in legacy:
        click.echo(f"Kept the previous hook as {item}; it runs first")


@hooks.command("uninstall")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@click.pass_context
def uninstall_cmd(ctx: click.Context, as_json: bool) -> None:
    """Remove the gate's hooks and restore the hooks they replaced.

    Also unregisters the playbook merge driver from this clone (.git/info/attributes
    and .git/config); git then merges the playbook line by line again.

    \b
    Examples:
      scarwarden hooks uninstall
    """
    from scarwarden.gate.hooks import uninstall

    repo = get_repo(ctx, initialised=False)
    result = uninstall(repo.root)
    if as_json:
        echo_json(
            {
                "removed": [str(p) for p in result.removed],
                "restored": [str(p) for p in result.restored],
                "foreign": [str(p) for p in result.foreign],
                "merge_driver": result.merge_driver,
            }
        )
        return
    for path in result.removed:
        click.echo(f"Removed {path}")
    for path in result.restored:
        click.echo(f"Restored the previous hook at {path}")
    for path in result.foreign:
        click.echo(f"Left {path} alone: it is not Scarwarden's")
    for what in result.merge_driver:
        click.echo(f"Removed the playbook merge driver: {what}")
    if not (result.removed or result.restored or result.foreign or result.merge_driver):
        click.echo("No Scarwarden hook was installed")
