from __future__ import annotations

import click

from scarwarden.cli.commands._common import get_repo, limit_option
from scarwarden.cli.commands._recall_text import print_recall


@click.command()
@click.argument("task", nargs=-1, required=True)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print {task, verdict, playbook_commit, rules: [{id, title, text, score, "
    "matched_tags, matched_terms, contributions, episode_ids}]}.",
)
@limit_option("At most N rules (default: recall.limit in scarwarden.yaml, 5).")
@click.option(
    "--explain", is_flag=True, help="Show the full arithmetic: idf, tf, length normalisation, weights."
)
@click.option("--no-log", is_flag=True, help="Do not append this recall to the recall log.")
@click.pass_context
def recall(
    ctx: click.Context, task: tuple[str, ...], as_json: bool, limit: int | None, explain: bool, no_log: bool
) -> None:
    """Rules that apply to TASK, why each matched, and the router's verdict.

    Deterministic (no model, no network): the same playbook and task give the same
    output, byte for byte. The verdict says how to proceed: ACT (follow the rules),
    ACT_AND_FLAG (follow them, but state your assumptions), ASK_HUMAN (memory has
    nothing: ask, e.g. with `scarwarden ask`). Each recall is appended to the recall
    log (`scarwarden log`) unless --no-log. TASK may be several words, or `-` to read
    it from stdin (at most 20,000 characters; no NUL, ESC or other control character
    but tab and newline: exit 2).

    \b
    Examples:
      scarwarden recall "Draft a LinkedIn post announcing our beta"
      scarwarden recall "Post our discount code on Twitter" --json
      scarwarden recall --explain --limit 3 "Close the billing ticket"
    """
    print_recall(get_repo(ctx), task, as_json=as_json, limit=limit, explain=explain, no_log=no_log)
