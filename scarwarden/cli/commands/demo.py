"""``scarwarden demo``: the whole loop on the bundled demo memory (:mod:`scarwarden.demo`)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    help="Copy the demo repository into this folder at the end, to explore it.",
)
def demo(keep: Path | None) -> None:
    """The whole loop on the bundled demo memory: no model, no set-up.

    Builds a throwaway git repository from the demo memory shipped in the package,
    then shows the playbook, the audit of a rule, recall and the router, answers
    (as a brief when no model is configured), the provenance gate rejecting a bad
    commit, offline distillation, exports, and how to open the audit UI.

    \b
    Examples:
      scarwarden demo
      scarwarden demo --keep ~/sw-demo   # keep the demo repo to explore it
    """
    from scarwarden.demo.tour import run_demo

    run_demo(click.echo, keep=keep)
