from __future__ import annotations

import importlib
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import click

from scarwarden import git
from scarwarden.repo import MemoryRepo, open_repo

#: Each capability contributes one section, in the order of the loop:
#: remember -> audit -> recall -> answer -> guard -> learn -> share -> review.
SECTIONS: list[tuple[str, str]] = [
    ("Recall and the router", "scarwarden.cli.commands.recall"),
    ("Answers that cite their memory", "scarwarden.cli.commands.answer"),
    ("The provenance gate", "scarwarden.cli.commands.check"),
    ("Distillation (offline, no model)", "scarwarden.cli.commands.distill"),
    ("Exports for other agents", "scarwarden.cli.commands.export"),
    ("Audit it yourself", "scarwarden.cli.commands.serve"),
]


def _heading(echo: Callable[[str], None], title: str) -> None:
    echo("")
    echo(click.style(f"== {title} ", bold=True) + click.style("=" * max(3, 60 - len(title)), dim=True))


def make_demo_repo(parent: Path) -> MemoryRepo:
    """A throwaway git repository holding the bundled demo memory, committed."""
    from scarwarden.files.scaffold import init

    root = parent / "demo-memory"
    root.mkdir()
    env = git.no_git_env()
    git.run(root, "init", "-q", env=env)
    # The demo must work on a machine with no git identity configured.
    git.run(root, "config", "user.name", "Scarwarden demo", env=env)
    git.run(root, "config", "user.email", "demo@scarwarden.invalid", env=env)
    git.run(root, "config", "commit.gpgsign", "false", env=env)
    repo = open_repo(root, initialised=False)
    init(repo, demo=True)
    return open_repo(root)


def run_demo(echo: Callable[[str], None], *, keep: Path | None = None) -> Path | None:
    """Walk the whole loop on a temporary copy of the demo memory."""
    from scarwarden.cli.commands._common import format_episode, format_rule
    from scarwarden.index.store import open_index

    parent = Path(tempfile.mkdtemp(prefix="scarwarden-demo-"))
    try:
        repo = make_demo_repo(parent)
        with open_index(repo) as index:
            rules = index.rules()
            episodes = index.episode_count()
            pb01 = index.get_rule("PB-01")
            cited = [index.get_episode(e) for e in pb01.episode_ids] if pb01 else []
        _heading(echo, "The memory")
        echo(f"A demo team's memory in a fresh git repository: {episodes} episodes "
             f"(memory/episodes/YYYY/MM/*.yaml) and {len(rules)} rules (memory/playbook.md).")
        echo("Every rule cites the episodes that taught it. The playbook:")
        echo("")
        for rule in rules:
            echo(f"  {click.style(rule.id, bold=True)}  {rule.title}  "
                 + click.style(f"[{', '.join(rule.tags)}] learnt in {len(rule.episode_ids)} episode(s)",
                               dim=True))
        if pb01 is not None:
            _heading(echo, "The audit of one rule (scarwarden rule show PB-01)")
            echo(format_rule(pb01))
            for ep in cited:
                if ep is None:
                    continue
                echo("")
                echo(click.style(f"--- learnt in {ep.id} (word for word) ---", fg="cyan"))
                echo(format_episode(ep))
        for title, module_name in SECTIONS:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
            section = getattr(module, "demo_section", None)
            if section is None:
                continue
            _heading(echo, title)
            section(repo, echo)
        _heading(echo, "Try it in your own repository")
        echo("  cd your-repo && scarwarden init          # or: scarwarden init --demo")
        echo('  scarwarden episode add --task "..." --action "..." --correction "..."')
        echo("  scarwarden distill && scarwarden recall \"your next task\"")
        if keep is not None:
            target = keep / "demo-memory"
            shutil.copytree(repo.root, target, symlinks=True)
            echo(f"\nKept the demo repository at {target}")
            return target
        return None
    finally:
        shutil.rmtree(parent, ignore_errors=True)


@click.command()
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path),
              help="Copy the demo repository into this folder at the end, to explore it.")
def demo(keep: Path | None) -> None:
    """The whole loop on the bundled demo memory: no model, no set-up.

    Builds a throwaway git repository from the demo memory shipped in the package,
    then shows the playbook, the audit of a rule, recall and the router, answers
    (as a brief when no model is configured), the provenance gate rejecting a bad
    commit, offline distillation, exports, and how to open the audit UI.

    \b
    Examples:
      scarwarden demo
      scarwarden demo --keep /tmp/sw     # keep the demo repo to explore it
    """
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    run_demo(click.echo, keep=keep)
